"""Compatibility with task modules written for the original Trace-Bench (on OpenTrace).

- :mod:`.opto_shim`: the ``opto.trainer`` names original task modules import, on trace-opt 0.1.3.8;
- :mod:`.fast_inspect`: a cheap ``inspect.stack`` for job processes.

The original's Python API (``BenchRunner``, ``load_task_bundle``, ...) is :mod:`trace_bench.legacy`.
This package is imported by every job process, so it imports nothing itself.
"""
