"""The public face of tasks: what a task's or a suite's author imports (docs/adding-task.md).

``from trace_bench.tasks import TaskSpec, Problem, Guide``: a task's static record
(:class:`TaskSpec`), the problem a task builds (:class:`Problem`, refused with
:class:`ProblemError`), the guide that scores it (:class:`Guide`, and the verdicts a guide may
raise: :class:`TaskError`, :class:`OutputRejected`), the LLM a task's own code calls (:func:`get_llm`)
and why a task cannot run here (:class:`Unavailable`).  Every other module under
``trace_bench.tasks`` is the harness's own.  The names are imported on first use, so importing a
suite (which imports this package) costs nothing more.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trace_bench._util.lazy import exports

if TYPE_CHECKING:
    from trace_bench._util.availability import Unavailable, UnavailableKind, requires, requires_executable
    from trace_bench.llm.current import get_llm
    from trace_bench.tasks.guide import Guide, OutputRejected, TaskError
    from trace_bench.tasks.problem import Problem, ProblemError
    from trace_bench.tasks.spec import TaskSpec

_EXPORTS = {
    "TaskSpec": "trace_bench.tasks.spec",
    "Problem": "trace_bench.tasks.problem",
    "ProblemError": "trace_bench.tasks.problem",
    "Guide": "trace_bench.tasks.guide",
    "TaskError": "trace_bench.tasks.guide",
    "OutputRejected": "trace_bench.tasks.guide",
    "get_llm": "trace_bench.llm.current",
    "Unavailable": "trace_bench._util.availability",
    "UnavailableKind": "trace_bench._util.availability",
    "requires": "trace_bench._util.availability",
    "requires_executable": "trace_bench._util.availability",
}

__all__ = ["Guide", "OutputRejected", "Problem", "ProblemError", "TaskError", "TaskSpec", "Unavailable",
           "UnavailableKind", "get_llm", "requires", "requires_executable"]

__getattr__ = exports(__name__, _EXPORTS)
