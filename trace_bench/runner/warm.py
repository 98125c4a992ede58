"""Start the local executor's job template as early as possible.

The template imports ``opto`` and the trainer stack (about a second) in its own process; starting
it is asynchronous and cheap, so ``run`` starts it before reading its config and the imports of
both processes overlap.  Nothing of a run happens in it until a job is submitted, after the run's
directory exists.

A real run's template also imports the provider libraries (``openai``, ``litellm``) once, so no
job pays for them at its first call; a stub run's does not.  The CLI starts the template before
the config is validated, so it peeks at the config's ``mode`` (:func:`peek_real`): a look at the
text, with the full validation still to come.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

#: What the local executor's job template imports once (see trace_bench/runner/job/template.py).
PRELOAD = ("trace_bench.runner.job.template",)
#: The same for a real run (see trace_bench/runner/job/template_real.py).
PRELOAD_REAL = ("trace_bench.runner.job.template_real",)


def needs_provider(mode: str | None, cache: str | None) -> bool:
    """True when a run's jobs call a provider: real mode that is not a replay from the cache."""
    return mode == "real" and cache != "replay"


def preload_for(config: Any) -> tuple[str, ...]:
    """The template a run's jobs are forked from."""
    return PRELOAD_REAL if needs_provider(config.mode, config.llm.cache) else PRELOAD


_MODE_REAL = re.compile(r"""^mode[ \t]*:[ \t]*["']?real["']?[ \t]*(#.*)?$""", re.MULTILINE)
_CACHE_REPLAY = re.compile(r"""(^[ \t]+|[{,][ \t]*)cache[ \t]*:[ \t]*["']?replay\b""", re.MULTILINE)


def peek_real(config_path: str | Path | None) -> bool:
    """Whether the config at ``config_path`` asks for real mode, read cheaply: a look at its text
    for a top-level ``mode: real`` (and no ``cache: replay``), no YAML parser and no validation,
    which come next.  A miss only costs the jobs their import at the first call; an unreadable
    file is False (the real load says why)."""
    if not config_path:
        return False
    try:
        with open(config_path, encoding="utf-8", errors="replace") as handle:
            text = handle.read(1 << 20)
    except OSError:
        return False
    return bool(_MODE_REAL.search(text)) and not _CACHE_REPLAY.search(text)


def start_job_template(real: bool = False) -> None:
    from trace_bench.execution.local import warm_up

    warm_up(PRELOAD_REAL if real else PRELOAD)
