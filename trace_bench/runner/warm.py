"""Start the local executor's job template as early as possible.

The template imports ``opto`` and the trainer stack (about a second) in its own process; starting
it is asynchronous and cheap, so ``run`` starts it before reading its config and the imports of
both processes overlap.  Nothing of a run happens in it until a job is submitted, after the run's
directory exists.

A run whose jobs load the provider libraries (``openai``, ``litellm``) gets a template that imports
them once, so no job pays for them: a real run (at its first call; a replay from the cache too,
whose jobs price every replayed answer with LiteLLM's price map: 2.4 s of CPU in each replayed job
before), and a run of an external trainer, stub mode included (OpenEvolve, GEPA, SkyDiscover, DSPy
and TextGrad reach the job's gateway through those clients; the import was 0.8-1 s of every such
job's wall time, which the cost-quality frontier compares across trainers).  Other stub runs keep the lean template.  The CLI
starts the template before the config is validated, so it peeks at the config's text
(:func:`peek_provider_stack`), with the full validation still to come.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

#: What the local executor's job template imports once (see trace_bench/runner/job/template.py).
PRELOAD = ("trace_bench.runner.job.template",)
#: The same for a real run (see trace_bench/runner/job/template_real.py).
PRELOAD_REAL = ("trace_bench.runner.job.template_real",)


def uses_external_trainer(trainer_ids: Any) -> bool:
    from trace_bench.registry.trainer_catalog import external_trainer_names

    external = external_trainer_names()
    return any(str(name).lower() in external for name in trainer_ids)


def needs_provider_stack(config: Any) -> bool:
    """True when a run's jobs load the provider libraries: real mode, a replay included (its jobs
    call no provider but price each answer), or an external trainer (whose library calls the job's
    gateway through them)."""
    return config.mode == "real" or uses_external_trainer(t.id for t in config.trainers)


def preload_for(config: Any) -> tuple[str, ...]:
    """The template a run's jobs are forked from."""
    return PRELOAD_REAL if needs_provider_stack(config) else PRELOAD


_MODE_REAL = re.compile(r"""^mode[ \t]*:[ \t]*["']?real["']?[ \t]*(#.*)?$""", re.MULTILINE)


_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")


def peek_provider_stack(config_path: str | Path | None, replay: bool = False) -> bool:
    """Whether the config at ``config_path`` needs the provider stack (:func:`needs_provider_stack`),
    read cheaply: a look at its text for a top-level ``mode: real`` or the name of an external
    trainer, no YAML parser and no validation, which come next.  ``replay`` (``run --replay``,
    whose config is the recorded real run's) is True.  A miss only costs the jobs their import; a
    name in a comment only costs the template the import; an unreadable file is False (the real
    load says why)."""
    if replay:
        return True
    if not config_path:
        return False
    try:
        with open(config_path, encoding="utf-8", errors="replace") as handle:
            text = handle.read(1 << 20)
    except OSError:
        return False
    if _MODE_REAL.search(text):
        return True
    return uses_external_trainer(_WORD.findall(text))


def start_job_template(real: bool = False) -> None:
    from trace_bench.execution.local import warm_up

    warm_up(PRELOAD_REAL if real else PRELOAD)


def stop_job_template() -> None:
    """Stop the template at the end of the command (see :func:`trace_bench.execution.local.stop_job_template`)."""
    from trace_bench.execution.local import stop_job_template as stop

    stop()
