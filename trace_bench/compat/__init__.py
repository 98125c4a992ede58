"""Compatibility with the original Trace-Bench: its task modules (on OpenTrace), and its Python API.

- :mod:`.opto_shim`: the ``opto.trainer`` names original task modules import, on trace-opt 0.1.3.8;
- :mod:`.fast_inspect`: a cheap ``inspect.stack`` for job processes;
- :mod:`.registry`, :mod:`.matrix`, :mod:`.runner`, :mod:`.cli`, :mod:`.results`,
  :mod:`.evaluation`: the original's public functions, re-exported lazily at their old paths
  (``trace_bench.registry.load_task_bundle``, ``trace_bench.runner.BenchRunner``, ...) through
  :mod:`.exports`.  See docs/coming-from-original.md.

This package is imported by every job process, so it imports nothing itself.
"""
