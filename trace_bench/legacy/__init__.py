"""The original Trace-Bench's Python API, on top of trace-bench's own layers.

- :mod:`.registry`, :mod:`.matrix`, :mod:`.runner`, :mod:`.cli`: the original's public functions,
  answered at their old paths (``trace_bench.registry.load_task_bundle``,
  ``trace_bench.runner.BenchRunner``, ``trace_bench.cli.cmd_run``, ...) with a DeprecationWarning,
  from the one table :mod:`.names` (the packages below never import this layer; ``import
  trace_bench`` imports :mod:`.names`, which imports nothing else of it);
- :mod:`.results`: ``BenchRunner.run().results`` rows in the original's shape;
- :mod:`.evaluation`: scoring a problem outside a run (``trace_bench.integrations.opto``);
- :mod:`.veribench`, :mod:`.mlflow_client`: ``trace_bench.veribench_adapter`` and
  ``trace_bench.integrations.mlflow_client``, which stay as thin re-exports at those paths.

See docs/coming-from-original.md.  New code uses ``trace_bench.execute_run`` and the CLI.
"""
