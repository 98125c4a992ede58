"""One discovery task as the job sees it: its program, its evaluator, its settings, its reference.

Built from a built-in problem (:mod:`.catalog`) or a task folder (:mod:`.folder`, with the config
file ``eval_kwargs.config`` names).  The sandbox receives :meth:`DiscoveryTask.payload`; the trusted
half of a split evaluator runs through :meth:`DiscoveryTask.trusted_score` in the job process.
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

from trace_bench._util.errors import ConfigError
from trace_bench._util.imports import import_file
from trace_bench.tasks.discovery.folder import TaskFolder
from trace_bench.tasks.discovery.program import EvolveProgram, parse_program
from trace_bench.tasks.discovery.settings import DEFAULT_TIMEOUT_S

TRUSTED = "trusted"
CANDIDATE_REACHABLE = "candidate-reachable"
FOLDER_FAILURE_SCORE = 0.0  # what OpenEvolve, SkyDiscover and ShinkaEvolve give a failed evaluation
IMPORT_MARGIN_S = 15.0  # a folder call's wall limit past its evaluation timeouts: writing files, imports
DEFAULT_MEMORY_MB = 2048
# Processes a task folder's evaluator may start at once inside the sandbox.  The communities'
# evaluators commonly run the candidate in a child interpreter (subprocess.Popen([sys.executable,
# ...]) with a timeout, or a process pool); those processes stay in the call's namespaces, seccomp
# filter and limits, and die with it.  Built-in problems never need one (0: refused).
FOLDER_PROCESSES = 16


@dataclass(frozen=True)
class BestKnown:
    """The best value published for a task: of which ``metric``, in which ``direction``, from where.

    ``score`` is the selection score that stands for 100 % of it (1.0 for the built-in problems, whose
    ``combined_score`` is the fraction of it; the value itself where it is of the score): cost to reach
    reads the anytime curves against it.  ``alphaevolve`` is the second yardstick of the built-in
    problems (AlphaEvolve's value, from the registry)."""

    value: float
    direction: str = "max"
    metric: str = "combined_score"
    source: str = ""
    score: float | None = None
    alphaevolve: float | None = None

    def _percent(self, reference: float, metrics: Mapping[str, float]) -> float | None:
        value = metrics.get(self.metric)
        if value is None or not math.isfinite(value) or not math.isfinite(reference) or reference <= 0:
            return None
        if self.direction == "max":
            return 100.0 * value / reference if value >= 0 else None
        return 100.0 * reference / value if value > 0 else None

    def percent(self, metrics: Mapping[str, float]) -> float | None:
        """How far ``metrics`` got, as % of the best known value (100 = matched, above = beaten).

        A ratio measures that distance only for positive values (a value of 0 is 0 % of a maximum):
        with a best known value <= 0, or a value below 0, there is no percentage (None)."""
        return self._percent(self.value, metrics)

    def percent_of_alphaevolve(self, metrics: Mapping[str, float]) -> float | None:
        """The same against AlphaEvolve's value (None where the task has none)."""
        return None if self.alphaevolve is None else self._percent(self.alphaevolve, metrics)

    def as_dict(self) -> dict[str, Any]:
        return {"value": self.value, "direction": self.direction, "metric": self.metric, "source": self.source,
                "score": self.score, "alphaevolve": self.alphaevolve}


@dataclass(frozen=True)
class DiscoveryTask:
    task_id: str
    description: str
    program: EvolveProgram
    form: str
    evaluator_module: str | None = None
    folder: TaskFolder | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    best_known: BestKnown | None = None
    system_message: str = ""
    iterations: int | None = None
    stub_candidates: tuple[str, ...] = ()
    failure_score: float | None = None
    score_floor: float | None = None
    ignored: tuple[tuple[str, str], ...] = ()
    timeout_s: float = DEFAULT_TIMEOUT_S
    memory_mb: int = DEFAULT_MEMORY_MB
    max_processes: int = 0
    cascade: bool = False
    thresholds: tuple[float, ...] = ()
    max_stages: int = 3
    llm: bool = False
    llm_configs: tuple[str, ...] = ()
    preload_openai: bool = False
    lean: tuple[str, ...] = ()
    timing_in_feedback: bool = False
    feature_dimensions: tuple[str, ...] = ()  # left out of an average score, as OpenEvolve does
    language: str = "python"
    mode: str = "train"
    notes: tuple[str, ...] = ()
    show_target: bool = True  # whether the system message and the feedback name the value to beat
    #: ``steps -> ContinuousForm`` for classical solvers (problems/continuous.py); None with the reason why not
    continuous: Any = None
    no_continuous_form: str = "it is a task folder: no continuous form is declared"

    @property
    def trust(self) -> str:
        """Whether the candidate can reach the code that computes its score (plain form) or not."""
        return TRUSTED if self.form == "split" else CANDIDATE_REACHABLE

    @property
    def ignored_keys(self) -> tuple[str, ...]:
        return tuple(key for key, _ in self.ignored)

    @property
    def protocol(self) -> str:
        return self.folder.layout.protocol if self.folder is not None and self.folder.layout is not None else "split"

    @property
    def stages(self) -> int:
        """How many evaluation stages one call may run (each under ``timeout_s``)."""
        layout = self.folder.layout if self.folder is not None else None
        if layout is None or not self.cascade or not layout.stages:
            return 1
        return max(1, min(self.max_stages, len(layout.stages)))

    @property
    def wall_limit_s(self) -> float:
        """The sandbox's wall limit of one call: the evaluation timeouts inside it fire first."""
        if self.folder is None or self.protocol == "split":
            return self.timeout_s
        return self.timeout_s * self.stages + IMPORT_MARGIN_S

    def payload(self, program: str) -> dict[str, Any]:
        """What the sandbox target receives to evaluate ``program``."""
        payload: dict[str, Any] = {"program": program, "function": "run" if self.form == "split" else "evaluate",
                                   "settings": dict(self.settings)}
        if self.evaluator_module:
            payload["module"] = self.evaluator_module
            return payload
        assert self.folder is not None and self.folder.layout is not None
        layout = self.folder.layout
        payload.update(files=_folder_files(self.folder), entry=layout.evaluator, workdir=layout.workdir,
                       suffix=self.folder.program_suffix, protocol=layout.protocol, timeout_s=self.timeout_s,
                       cascade=self.cascade, thresholds=list(self.thresholds), max_stages=self.max_stages,
                       mode=self.mode, container=layout.kind == "container", lean=list(self.lean))
        return payload

    def trusted_module(self) -> Any:
        """The split evaluator's module, imported in this (the job's) process."""
        if self.evaluator_module:
            return importlib.import_module(self.evaluator_module)
        assert self.folder is not None and self.folder.layout is not None
        return _trusted_evaluator(self.folder.path / self.folder.layout.evaluator)

    def trusted_score(self, data: Any) -> Any:
        """The split evaluator's ``score(data)``, in this (the job's) process."""
        return self.trusted_module().score(data, **self.settings)


_MODULES: dict[Path, Any] = {}


def _trusted_evaluator(source: Path) -> Any:
    """A folder's evaluator module, imported once in the job process (only its ``score`` is called
    here; its ``run`` imports candidates and runs in the sandbox alone).  ``private/`` beside it is
    readable here (``Path(__file__).parent / "private"``), never in the sandbox."""
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


def _show_target(eval_kwargs: Mapping[str, Any]) -> bool:
    wanted = eval_kwargs.get("show_target", True)
    if not isinstance(wanted, bool):
        raise ValueError(f"eval_kwargs.show_target must be true or false, got {wanted!r}")
    return wanted


def builtin_objective(name: str, show_target: bool = True) -> str:
    """The system message of a built-in problem.  By default (``show_target: true``, as OpenEvolve's,
    SkyDiscover's and ShinkaEvolve's examples do) it names the value to beat, with its source and date,
    and AlphaEvolve's; ``show_target: false`` names no value (the score stays the fraction of the best
    known value, so a search that divides the raw value by it can still infer it)."""
    from trace_bench.tasks.discovery.catalog import BUILTIN

    problem = BUILTIN[name]
    record = problem.record
    better = "larger" if record.direction == "max" else "smaller"
    if not show_target:
        return (f"{problem.description} The score grows as the {problem.scoring} gets {better}; "
                "the metrics give the raw value.")
    return (f"{problem.description} The score is the fraction of the best value known today, "
            f"{record.best_known.value} ({record.best_known.cited()}): 1.0 matches it, above 1.0 beats it "
            f"({better} is better). AlphaEvolve (2025) reached {record.alphaevolve.published}.")


def from_builtin(name: str, eval_kwargs: Mapping[str, Any]) -> DiscoveryTask:
    from trace_bench.tasks.discovery.catalog import BUILTIN

    problem = BUILTIN[name]
    record = problem.record
    module = importlib.import_module(problem.evaluator)
    show = _show_target(eval_kwargs)
    stubs = module.STUB_CANDIDATES
    stubs = stubs[problem.stubs] if isinstance(stubs, dict) else stubs
    best = BestKnown(record.best_known.number, record.direction, "value", record.best_known.cited(), score=1.0,
                     alphaevolve=record.alphaevolve.number)
    return DiscoveryTask(
        task_id=f"discovery:{name}", description=problem.description,
        program=parse_program(module.program(**problem.settings)), form="split", evaluator_module=problem.evaluator,
        settings=problem.score_settings(), best_known=best, system_message=builtin_objective(name, show),
        stub_candidates=tuple(stubs), score_floor=0.0, show_target=show, continuous=_continuous(name, problem),
        no_continuous_form=problem.no_continuous_form, **_limits(eval_kwargs, 30.0))


@dataclass(frozen=True)
class ContinuousFactory:
    """A built-in problem's continuous form for a number of steps (picklable, built on demand)."""

    name: str
    settings: dict[str, Any]

    def __call__(self, steps: int = 50) -> Any:
        from trace_bench.tasks.discovery.problems.continuous import form_of

        return form_of(self.name, self.settings, steps)


def _continuous(name: str, problem: Any) -> ContinuousFactory | None:
    return None if problem.no_continuous_form else ContinuousFactory(name, dict(problem.settings))


_LANGUAGES = {".py": "python", ".txt": "text", ".md": "text", ".cpp": "cpp", ".cc": "cpp", ".c": "c", ".rs": "rust",
              ".go": "go", ".jl": "julia", ".f90": "fortran", ".sv": "verilog", ".v": "verilog", ".js": "javascript"}


def from_folder(folder: TaskFolder, eval_kwargs: Mapping[str, Any]) -> DiscoveryTask:
    from trace_bench.tasks.discovery import requirements

    folder = folder.with_config(eval_kwargs.get("config")).with_program(eval_kwargs.get("initial_program"))
    layout, settings = folder.layout, folder.settings
    assert layout is not None
    missing = requirements.missing_imports(folder.path, layout.evaluator, layout.workdir)
    if missing:
        raise ConfigError(f"{folder.task_id}: {layout.evaluator} imports {', '.join(missing)}: not installed in the "
                          "interpreter its evaluations run in", key_path="tasks")
    mode = str(eval_kwargs.get("mode") or "train")
    if mode not in ("train", "test"):
        raise ValueError(f"eval_kwargs.mode must be train or test (evaluate.sh's second argument), got {mode!r}")
    best = None
    if settings.best_known is not None:
        own_score = settings.metric == "combined_score" and settings.direction == "max"
        best = BestKnown(settings.best_known, settings.direction, settings.metric, settings.best_known_source,
                         score=settings.best_known if own_score else None)
    message = settings.system_message.strip()
    description = message.splitlines()[0][:300] if message else \
        f"Evolve the {'prompt' if layout.prompt else 'program'} of {folder.name} ({layout.peer} layout)."
    llm = settings.llm if settings.llm is not None else requirements.calls_an_llm(folder.path, layout.evaluator,
                                                                                   layout.workdir)
    language = settings.language or _LANGUAGES.get(folder.program_suffix, folder.program_suffix.lstrip(".") or "python")
    return DiscoveryTask(
        task_id=folder.task_id, description=description, program=parse_program(folder.initial_program()),
        form=folder.form, folder=folder, best_known=best, system_message=settings.system_message or description,
        iterations=settings.iterations,
        failure_score=settings.failure_score if settings.failure_score is not None else FOLDER_FAILURE_SCORE,
        ignored=settings.ignored, cascade=settings.cascade and bool(layout.stages), thresholds=settings.thresholds,
        max_stages=settings.max_stages, llm=llm, llm_configs=requirements.llm_configs(folder.path, layout.workdir)
        if llm else (), preload_openai="openai" in requirements.imports_of(folder.path, layout.evaluator, layout.workdir),
        lean=requirements.lean_imports(folder.path), timing_in_feedback=settings.timing_in_feedback,
        feature_dimensions=settings.feature_dimensions,
        language=language, mode=mode, notes=(settings.config_note,) if settings.config_note else (),
        **_limits(eval_kwargs, settings.timeout_s, FOLDER_PROCESSES))
