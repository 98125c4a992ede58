"""The job template of a run that uses DSPyTrainer: the full real template plus DSPy.

``import dspy`` cost 0.45-0.70 s of every DSPy job's wall time, before its first LLM call; here it
is paid once.  DSPy opens its on-disk cache (SQLite, under ``~/.dspy_cache``) at import: a forked
job must not inherit an open SQLite connection, and DSPyTrainer's LMs never use the cache
(``cache=False``), so the template closes it and configures DSPy without one.
"""

from __future__ import annotations

import contextlib
import gc

import trace_bench.runner.job.template_real  # noqa: F401 - DSPy calls the gateway through LiteLLM

with contextlib.suppress(ImportError):  # a run without the extra fails its jobs with the reason
    import dspy

    with contextlib.suppress(Exception):
        dspy.cache.disk_cache.close()
    dspy.configure_cache(enable_disk_cache=False)
    import trace_bench.trainers.external.dspy_adapter  # noqa: F401
    import trace_bench.trainers.external.dspy_program  # noqa: F401
    import trace_bench.trainers.external.dspy_trainer  # noqa: F401

gc.collect()
gc.freeze()
