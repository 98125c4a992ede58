"""One discovery task as the job sees it: its program, its evaluator's two halves, its reference.

Built from a built-in problem (:mod:`.catalog`) or a task folder (:mod:`.folder`).  The sandbox
receives :meth:`DiscoveryTask.payload`; the trusted half of a split evaluator runs through
:meth:`DiscoveryTask.trusted_score` in the job process.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trace_bench._util.imports import import_file
from trace_bench.tasks.discovery.folder import EVALUATOR, Form, TaskFolder
from trace_bench.tasks.discovery.program import EvolveProgram, parse_program

TRUSTED = "trusted"
CANDIDATE_REACHABLE = "candidate-reachable"
DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MEMORY_MB = 2048
# Processes a task folder's evaluator may start at once inside the sandbox.  The communities'
# evaluators commonly run the candidate in a child interpreter (subprocess.Popen([sys.executable,
# ...]) with a timeout, or a process pool); those processes stay in the call's namespaces, seccomp
# filter and limits, and die with it.  Built-in problems never need one (0: refused).
FOLDER_PROCESSES = 16


@dataclass(frozen=True)
class BestKnown:
    """The best value published for a task: of which ``metric``, in which ``direction``, from where."""

    value: float
    direction: str = "max"
    metric: str = "combined_score"
    source: str = ""

    def percent(self, metrics: Mapping[str, float]) -> float | None:
        """How far ``metrics`` got, as % of the best known value (100 = matched, above = beaten).

        A ratio measures that distance only for positive values (a value of 0 is 0 % of a maximum):
        with a best known value <= 0, or a value below 0, there is no percentage (None)."""
        value = metrics.get(self.metric)
        if value is None or not math.isfinite(value) or not math.isfinite(self.value) or self.value <= 0:
            return None
        if self.direction == "max":
            return 100.0 * value / self.value if value >= 0 else None
        return 100.0 * self.value / value if value > 0 else None

    def as_dict(self) -> dict[str, Any]:
        return {"value": self.value, "direction": self.direction, "metric": self.metric, "source": self.source}


@dataclass(frozen=True)
class DiscoveryTask:
    task_id: str
    description: str
    program: EvolveProgram
    form: Form
    evaluator_module: str | None = None
    folder: TaskFolder | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    best_known: BestKnown | None = None
    system_message: str = ""
    iterations: int | None = None
    stub_candidates: tuple[str, ...] = ()
    failure_score: float | None = None
    score_floor: float | None = None
    ignored_keys: tuple[str, ...] = ()
    timeout_s: float = DEFAULT_TIMEOUT_S
    memory_mb: int = DEFAULT_MEMORY_MB
    max_processes: int = 0

    @property
    def trust(self) -> str:
        """Whether the candidate can reach the code that computes its score (plain form) or not."""
        return TRUSTED if self.form == "split" else CANDIDATE_REACHABLE

    def payload(self, program: str) -> dict[str, Any]:
        """What the sandbox target receives to evaluate ``program``."""
        payload: dict[str, Any] = {"program": program, "function": "run" if self.form == "split" else "evaluate",
                                   "settings": dict(self.settings)}
        if self.evaluator_module:
            payload["module"] = self.evaluator_module
        else:
            assert self.folder is not None
            payload["files"] = _folder_files(self.folder)
            payload["entry"] = EVALUATOR
            payload["suffix"] = self.folder.program_suffix
        return payload

    def trusted_module(self) -> Any:
        """The split evaluator's module, imported in this (the job's) process."""
        if self.evaluator_module:
            return importlib.import_module(self.evaluator_module)
        assert self.folder is not None
        return _trusted_evaluator(self.folder.path / EVALUATOR)

    def trusted_score(self, data: Any) -> Any:
        """The split evaluator's ``score(data)``, in this (the job's) process."""
        return self.trusted_module().score(data, **self.settings)


_MODULES: dict[Path, Any] = {}


def _trusted_evaluator(source: Path) -> Any:
    """A folder's evaluator module, imported once in the job process (only its ``score`` is called
    here; its ``run`` imports candidates and runs in the sandbox alone)."""
    if source not in _MODULES:
        name = f"trace_bench_discovery_evaluator_{abs(hash(str(source))):x}"
        if str(source.parent) not in sys.path:  # its sibling modules, as in the sandbox
            sys.path.insert(0, str(source.parent))
        _MODULES[source] = import_file(name, source)
    return _MODULES[source]


_FILES: dict[Path, dict[str, bytes]] = {}


def _folder_files(folder: TaskFolder) -> dict[str, bytes]:
    if folder.path not in _FILES:  # read once per job: the folder is the task, it does not change mid-run
        _FILES[folder.path] = folder.files()
    return _FILES[folder.path]


def _limits(eval_kwargs: Mapping[str, Any], timeout: float | None, processes: int = 0) -> dict[str, Any]:
    wanted = eval_kwargs.get("max_processes", processes)
    if isinstance(wanted, bool) or not isinstance(wanted, int) or wanted < 0:
        raise ValueError(f"eval_kwargs.max_processes must be a whole number >= 0, got {wanted!r}")
    return {"timeout_s": float(eval_kwargs.get("timeout_s") or timeout or DEFAULT_TIMEOUT_S),
            "memory_mb": int(eval_kwargs.get("memory_mb") or DEFAULT_MEMORY_MB), "max_processes": wanted}


def from_builtin(name: str, eval_kwargs: Mapping[str, Any]) -> DiscoveryTask:
    from trace_bench.tasks.discovery.catalog import BUILTIN

    problem = BUILTIN[name]
    module = importlib.import_module(problem.evaluator)
    settings = {**problem.settings, "best_known": problem.best_known, "direction": problem.direction}
    stubs = module.STUB_CANDIDATES
    stubs = stubs[problem.stubs] if isinstance(stubs, dict) else stubs
    objective = (f"{problem.description} The score is the fraction of the best known value "
                 f"({problem.best_known:g}, {problem.source}); 1.0 matches it.")
    return DiscoveryTask(
        task_id=f"discovery:{name}", description=problem.description,
        program=parse_program(module.program(**problem.settings)), form="split", evaluator_module=problem.evaluator,
        settings=settings, best_known=BestKnown(float(problem.best_known), problem.direction, "value", problem.source),
        system_message=objective, stub_candidates=tuple(stubs), score_floor=0.0,
        **_limits(eval_kwargs, 30.0))


def from_folder(folder: TaskFolder, eval_kwargs: Mapping[str, Any]) -> DiscoveryTask:
    settings = folder.settings
    source = folder.initial_program()
    best = None
    if settings.best_known is not None:
        best = BestKnown(settings.best_known, settings.direction, settings.metric, settings.best_known_source)
    description = settings.system_message.strip().splitlines()[0] if settings.system_message.strip() else \
        f"Evolve the program of {folder.path.name} (evaluator.py scores it)."
    return DiscoveryTask(
        task_id=folder.task_id, description=description, program=parse_program(source), form=folder.form,
        folder=folder, best_known=best, system_message=settings.system_message or description,
        iterations=settings.iterations, failure_score=settings.failure_score, ignored_keys=settings.ignored,
        **_limits(eval_kwargs, settings.timeout_s, FOLDER_PROCESSES))
