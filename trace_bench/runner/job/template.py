"""What the job template process imports once, so that every forked job starts warm.

The local executor's forkserver preloads this module (the runner names it): ``opto``, the LLM
layer, the job body and every trainer class are imported here, then frozen out of the garbage
collector's reach, so a forked job neither imports them again nor copies their pages.
``litellm``/``openai`` stay deferred until a real call needs them; numpy is preloaded after this
module where the run's tasks use it (``runner.warm.numpy_libraries``).
"""

from __future__ import annotations

import contextlib
import gc
import io
import os

from trace_bench._util import fast_inspect
from trace_bench._util.runtime import configure_environment

configure_environment()
fast_inspect.install()

with contextlib.redirect_stdout(io.StringIO()):  # opto prints its backend choice on import
    import opto.optimizers  # noqa: E402,F401 - warm the template process
    from opto import trace  # noqa: E402,F401

import trace_bench.execution.local  # noqa: E402,F401 - the job process's entry point
import trace_bench.llm.current  # noqa: E402,F401
import trace_bench.llm.factory  # noqa: E402,F401
import trace_bench.llm.limiter  # noqa: E402,F401
import trace_bench.tasks.problem  # noqa: E402,F401
import trace_bench.trainers.context  # noqa: E402,F401
from trace_bench.registry.trainers import TEMPLATE_TRAINERS, _builtin_alone, all_trainers  # noqa: E402
from trace_bench.runner.job.body import job_body, prepare_process  # noqa: E402,F401
from trace_bench.store.live_result import warm_adapters  # noqa: E402


def _preload_trainers() -> None:
    """Import the run's trainer classes (not their libraries) once here, so that a forked job
    resolves its trainer without importing modules or scanning entry points (~150 ms per job
    otherwise): the built-in ones the run names (``registry.trainers.TEMPLATE_TRAINERS``), else all."""
    try:
        prepare_process()  # what every job does first; idempotent
        named = [name for name in os.environ.get(TEMPLATE_TRAINERS, "").split(",") if name]
        if named and all(_builtin_alone(name.lower()) is not None for name in named):
            return
        all_trainers()
        from trace_bench.trainers.opto_native import warm

        # opto's own trainers (OpenTrace 0.2.x): their module and knobs, once
        warm(info.cls for info in all_trainers().values() if info.source == "opto")
    except Exception:  # pragma: no cover - a job reports the real error when it resolves its trainer
        all_trainers.cache_clear()


def _preload_code_node_view() -> None:
    """The files the sandbox of trainable code nodes shows (their import closure, parsed from the
    source: ~45 ms), once here instead of in every job of a task with a code node."""
    from trace_bench.sandbox import policy
    from trace_bench.tasks.code_nodes.execution import TARGET_MODULE

    with contextlib.suppress(Exception):  # a job computes it itself, and reports what fails
        policy.own_files(policy.view_names((TARGET_MODULE,)))


_preload_trainers()
_preload_code_node_view()
warm_adapters()
# Everything loaded so far lives as long as the template: move it out of the collector's reach so
# that a forked job's garbage collections do not touch (and copy-on-write) the shared pages.  No
# collection first: what the imports left for the collector is a little memory, a full collection
# of the template's heap 25 ms on every run's path to its first job.
gc.freeze()
