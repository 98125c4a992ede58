"""The original Trace-Bench's Python API, on top of trace-bench's own layers.

- :mod:`.registry`, :mod:`.matrix`, :mod:`.runner`, :mod:`.cli`: the original's public functions,
  answered at their old paths (``trace_bench.registry.load_task_bundle``,
  ``trace_bench.runner.BenchRunner``, ``trace_bench.cli.cmd_run``, ...) by those packages' lazy
  ``__getattr__`` (:func:`trace_bench._lazy.lazy_getattr`), which names these modules as strings:
  the packages below never import this layer, it is imported on first use of an old name;
- :mod:`.results`: ``BenchRunner.run().results`` rows in the original's shape;
- :mod:`.evaluation`: scoring a problem outside a run (``trace_bench.integrations.opto``).

See docs/coming-from-original.md.  New code uses ``trace_bench.execute_run`` and the CLI.
"""
