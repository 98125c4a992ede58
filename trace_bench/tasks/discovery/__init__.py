"""discovery:* tasks: programs evolved against an evaluator, in the layout of OpenEvolve's examples
and SkyDiscover's benchmarks, plus a built-in suite of AlphaEvolve's Appendix B problems.

A task folder (``evaluator.py``, optionally ``initial_program.py`` and ``config.yaml``; see
:mod:`.folder`) loaded with ``--root`` becomes ``discovery:<folder>`` (or ``<suite>:<folder>``
when its config declares a suite); the built-in problems (:mod:`.catalog`) are listed here.
Every candidate runs in the sandbox; built-in problems score in trusted code (split form).
Listing is static: no problem module, numpy or opto is imported.
"""

from __future__ import annotations

from typing import Any

from trace_bench.tasks.spec import TaskSpec, requires

SUITE = "discovery"
TAGS = ("discovery", "sandbox")


def discover() -> list[TaskSpec]:
    from trace_bench.tasks.discovery.catalog import BUILTIN

    return [TaskSpec(id=f"{SUITE}:{name}", suite=SUITE, description=problem.description,
                     module=problem.evaluator, parameter_kinds=("code",),
                     scoring=f"{problem.scoring} ({problem.direction}; best known {problem.best_known:g})",
                     needs=("numpy",), availability=requires("numpy"), tags=TAGS)
            for name, problem in BUILTIN.items()]


def folder_spec(folder: Any) -> TaskSpec:
    """The listing record of a task folder (:class:`.folder.TaskFolder`); a folder with a
    ``problem`` is listed unavailable with it, and a config naming it is refused with it."""
    from trace_bench._util.availability import Unavailable, UnavailableKind

    if folder.problem:
        reason = folder.problem if str(folder.path) in folder.problem else f"task folder {folder.path}: {folder.problem}"
        broken = Unavailable(UnavailableKind.INVALID_TASK, reason)
        return TaskSpec(id=folder.task_id, suite=folder.settings.suite, description=f"task folder {folder.path} "
                        "(cannot be read)", module=folder.name, parameter_kinds=("code",), scoring="combined_score",
                        module_path=str(folder.path), tags=(*TAGS, "root"), availability=lambda: broken)
    trust = "trusted split evaluator" if folder.form == "split" else "plain evaluate(): candidate-reachable score"
    return TaskSpec(id=folder.task_id, suite=folder.settings.suite, description=f"task folder {folder.path} ({trust})",
                    module=folder.name, parameter_kinds=("code",), scoring="combined_score",
                    module_path=str(folder.path), tags=(*TAGS, "root"))


def build(spec: TaskSpec, eval_kwargs: dict[str, Any]) -> dict[str, Any]:
    from trace_bench.tasks.discovery.problem import build_problem
    from trace_bench.tasks.discovery.task import from_builtin

    return build_problem(from_builtin(spec.name, eval_kwargs))


def build_folder(path: str, eval_kwargs: dict[str, Any]) -> dict[str, Any]:
    from pathlib import Path

    from trace_bench.tasks.discovery.folder import load_folder
    from trace_bench.tasks.discovery.problem import build_problem
    from trace_bench.tasks.discovery.task import from_folder

    return build_problem(from_folder(load_folder(Path(path)), eval_kwargs))
