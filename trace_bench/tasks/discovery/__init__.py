"""discovery:* tasks: programs evolved against an evaluator, in the task-folder layouts of
OpenEvolve, SkyDiscover (plain and containerized) and ShinkaEvolve, plus a built-in suite of
AlphaEvolve's Appendix B problems.

A task folder (:mod:`.folder`, :mod:`.layout`) loaded with ``--root`` becomes
``discovery:<folder>`` (or ``<suite>:<folder>`` when its config declares a suite); the built-in
problems (:mod:`.catalog`) are listed here.  Every candidate runs in the sandbox; built-in problems
score in trusted code (split form).  Listing is static: no problem module, numpy or opto is
imported, and a folder's evaluator is read, never run.
"""

from __future__ import annotations

from typing import Any

from trace_bench.tasks.spec import TaskSpec, requires

SUITE = "discovery"
TAGS = ("discovery", "sandbox")


def discover() -> list[TaskSpec]:
    from trace_bench.tasks.discovery.catalog import BUILTIN

    specs = []
    for name, problem in BUILTIN.items():
        record = problem.record
        yardsticks = {"best_known": f"{record.best_known.value} ({record.best_known.date})",
                      "best_known_source": record.best_known.source,
                      "alphaevolve": f"{record.alphaevolve.value} ({record.alphaevolve.date})"}
        specs.append(TaskSpec(id=f"{SUITE}:{name}", suite=SUITE, description=problem.description,
                              module=problem.evaluator, parameter_kinds=problem.parameter_kinds,
                              scoring=f"{problem.scoring} ({record.direction}; {record.yardsticks()})",
                              needs=("numpy",), availability=requires("numpy"), tags=TAGS, yardsticks=yardsticks))
    return specs


def folder_spec(folder: Any) -> TaskSpec:
    """The listing record of a task folder (:class:`.folder.TaskFolder`); a folder with a
    ``problem`` (or none of the layouts) is listed unavailable with it, and a config naming it is
    refused with it; one whose evaluator imports a module this interpreter lacks is unavailable
    naming the package to install."""
    from trace_bench._util.availability import Unavailable, UnavailableKind

    if folder.problem:
        reason = folder.problem if str(folder.path) in folder.problem else f"task folder {folder.path}: {folder.problem}"
        broken = Unavailable(UnavailableKind.INVALID_TASK, reason)
        what = "not a task folder" if folder.not_task else "cannot be read"
        return TaskSpec(id=folder.task_id, suite=folder.settings.suite, description=f"{folder.path} ({what})",
                        module=folder.name, parameter_kinds=("code",), scoring="combined_score",
                        module_path=str(folder.path), tags=("discovery", "root"), availability=lambda: broken)
    layout = folder.layout
    trust = "trusted split evaluator" if folder.form == "split" else "candidate-reachable score"
    note = f"; {folder.settings.config_note}" if folder.settings.config_note else ""

    def availability() -> Unavailable | None:
        from trace_bench.tasks.discovery.requirements import missing_imports

        missing = missing_imports(folder.path, layout.evaluator, layout.workdir)
        if not missing:
            return None
        return Unavailable(UnavailableKind.MISSING_PACKAGE, f"{layout.evaluator} imports {', '.join(missing)}: "
                                                            "not installed")

    return TaskSpec(id=folder.task_id, suite=folder.settings.suite,
                    description=f"task folder {folder.path} ({layout.peer}; {trust}{note})",
                    module=folder.name, parameter_kinds=("text",) if layout.prompt else ("code",),
                    scoring="combined_score", module_path=str(folder.path), tags=(*TAGS, "root"),
                    availability=availability)


def build(spec: TaskSpec, eval_kwargs: dict[str, Any]) -> dict[str, Any]:
    from trace_bench.tasks.discovery.problem import build_problem
    from trace_bench.tasks.discovery.task import from_builtin

    return build_problem(from_builtin(spec.name, eval_kwargs))


def build_folder(path: str, eval_kwargs: dict[str, Any], label: str = "") -> dict[str, Any]:
    from pathlib import Path

    from trace_bench.tasks.discovery.folder import load_folder
    from trace_bench.tasks.discovery.problem import build_problem
    from trace_bench.tasks.discovery.task import from_folder

    return build_problem(from_folder(load_folder(Path(path), label), eval_kwargs))
