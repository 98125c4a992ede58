"""Preloaded by the job template of a run that uses the non-LLM baselines' libraries.

``cmaes`` imports ``scipy.stats`` (2.8 s here, 7.5 s on a loaded machine): OptunaSearch's CMA-ES
sampler paid it inside one evaluation of every job, SLSQPMultistart paid ``scipy.optimize``.  Here it
is paid once; none of these imports starts a thread, so the fork is safe.
"""

from __future__ import annotations

import contextlib
import gc

with contextlib.suppress(ImportError):  # a run without the extra fails its jobs with the reason
    import scipy.optimize  # noqa: F401

with contextlib.suppress(ImportError):
    import cmaes  # noqa: F401
    import optuna  # noqa: F401

import trace_bench.trainers.baselines.optuna_search  # noqa: E402,F401
import trace_bench.trainers.baselines.slsqp  # noqa: E402,F401

gc.collect()
gc.freeze()
