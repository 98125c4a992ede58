"""terminal_bench:* tasks: Terminal-Bench 2.0 through Harbor (opt-in: ``--bench terminal_bench``).

Ids are ``terminal_bench:<slug>``; the listing shows a curated few, and any Harbor slug is
accepted.  Real mode needs the ``harbor`` CLI (``trace-bench[terminal-bench]``, Python >= 3.12
only), Docker or a Daytona key, and model credentials; stub mode never invokes Harbor, so the
tasks run there without it.  See :mod:`.problem` (scoring, artifacts) and :mod:`.harbor` (settings).
"""

from __future__ import annotations

import re

from trace_bench.tasks.spec import TaskSpec, UnavailableKind, requires_executable

SUITE = "terminal_bench"
_MODULE = "trace_bench.tasks.terminal_bench.problem"
CURATED = ("regex-log", "log-summary-date-ranges", "multi-source-data-merger", "financial-document-processor")
_SLUG = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
HARBOR_MISSING = "harbor not found: install trace-bench[terminal-bench] (Python >= 3.12)"


def _spec(slug: str) -> TaskSpec:
    return TaskSpec(id=f"{SUITE}:{slug}", suite=SUITE, description=f"Terminal-Bench 2.0 task '{slug}' via Harbor",
                    module=_MODULE, parameter_kinds=("text",), scoring="Harbor verifier reward",
                    needs=("harbor", "docker or daytona"), availability=requires_executable("harbor", HARBOR_MISSING,
                                                                           kind=UnavailableKind.MISSING_PACKAGE),
                    default_eval_kwargs={"task": slug}, tags=("agent", "terminal", "external"),
                    stub_without_availability=True)


def discover() -> list[TaskSpec]:
    return [_spec(slug) for slug in CURATED]


def resolve(task_id: str) -> TaskSpec | None:
    slug = task_id.split(":", 1)[1]
    return _spec(slug) if _SLUG.fullmatch(slug) else None
