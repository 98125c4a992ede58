"""SkyDiscover: UC Berkeley's discovery framework (PyPI ``skydiscover``) with its own searches.

``search`` picks one of its built-in algorithms: ``adaevolve`` (adaptive multi-island search with
paradigm breakthroughs), ``evox`` (co-evolution of the search strategy, see
:mod:`.skydiscover_evox`), ``topk``, ``beam_search`` and ``best_of_n``.  The job runs the
library's own parts: its ``Config`` objects, the search's database and discovery manager (its
prompts, LLM pool, parsing of diffs and rewrites, its iteration loop).  What changes:

- LLM calls go to the job's gateway (metered, budgeted, cached, stub-answered);
- candidates are evaluated by the task (:class:`~trace_bench.trainers.context.TrainerContext`),
  so a discovery task's program runs in the sandbox; the library's evaluator object only carries
  the result (``evaluate_function`` is replaced, cascade evaluation is off);
- the harness drives the loop's edges: it adds the initial program as SkyDiscover's controller
  does, reports one curve step per iteration (a hook around the manager's iteration), asks the
  manager to shut down at the budget, and keeps everything the library writes in a temporary
  directory;
- beam search's sets of program ids iterate in insertion order (:mod:`.skydiscover_order`), so a
  seed gives one run whatever the string hashes and the random ids.  ``skydiscover.MainController`` is not used: it installs signal handlers and
  writes logs and checkpoints next to the program.

Knobs beyond the common ones go in ``database`` (the search's database settings, checked against
:data:`DATABASE_KNOBS`, a static copy of skydiscover 0.1.0's dataclasses that a test compares
with the installed library).
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import tempfile
import uuid
from typing import Any, Literal

from pydantic import Field, model_validator

from trace_bench.trainers.base import Trainer, TrainerParams
from trace_bench.trainers.external.bridge import (
    GatewayLink,
    failure_score,
    state_from_texts,
    text_parameters,
    texts_of,
)
from trace_bench.trainers.external.program_view import (
    ProgramView,
    program_view,
    suggested_iterations,
    system_message,
    task_metrics,
)
from trace_bench.trainers.state import State

SEARCHES = ("adaevolve", "evox", "topk", "beam_search", "best_of_n")
Search = Literal["adaevolve", "evox", "topk", "beam_search", "best_of_n"]
_ADAEVOLVE = (
    "population_size", "num_islands", "decay", "intensity_min", "intensity_max", "use_adaptive_search",
    "use_ucb_selection", "use_migration", "use_unified_archive", "fixed_intensity", "migration_interval",
    "migration_count", "local_inspiration_ratio", "archive_elite_ratio", "pareto_weight", "fitness_weight",
    "novelty_weight", "k_neighbors", "diversity_strategy", "use_dynamic_islands", "max_islands",
    "spawn_productivity_threshold", "spawn_cooldown_iterations", "use_paradigm_breakthrough", "paradigm_window_size",
    "paradigm_improvement_threshold", "paradigm_max_uses", "paradigm_num_to_generate", "paradigm_max_tried",
    "stagnation_threshold", "stagnation_multi_child_count", "sibling_context_limit", "enable_error_retry",
    "max_error_retries", "archive_size", "higher_is_better", "fitness_key", "pareto_objectives",
    "pareto_objectives_weight",
)
#: Settings of each search's database config a job may set (``db_path``, ``random_seed`` and file
#: paths are the harness's: every job is in memory and seeded by its seed).
DATABASE_KNOBS: dict[str, tuple[str, ...]] = {
    "adaevolve": _ADAEVOLVE,
    "evox": ("auto_generate_variation_operators",),
    "topk": (),
    "beam_search": ("beam_width", "beam_selection_strategy", "beam_diversity_weight", "beam_temperature",
                    "beam_depth_penalty"),
    "best_of_n": ("best_of_n",),
}
#: SkyDiscover's external backends, each run by a trainer of its own.
EXTERNAL_BACKENDS = {"shinkaevolve": "'ShinkaEvolve' (SkyDiscover's shinkaevolve backend)",
                     "openevolve": "'OpenEvolveTrainer' (the openevolve library itself)",
                     "gepa": "'GEPATrainer' (the gepa library itself)"}
_HARNESS_OWNED = ("db_path", "log_prompts", "random_seed", "database_file_path", "evaluation_file", "config_path")


class SkyDiscoverParams(TrainerParams):
    search: Search = Field(default="adaevolve", description="the SkyDiscover search algorithm")
    iterations: int | None = Field(default=None, ge=0, description="iterations (one child program each); "
                                   "default: the task's own max_iterations (a task folder's config.yaml), else 10")
    diff_based: bool = Field(default=True, description="SEARCH/REPLACE diffs; false asks for full rewrites")
    num_inspirations: int = Field(default=4, ge=0)
    temperature: float = Field(default=0.7, ge=0)
    max_tokens: int = Field(default=4096, ge=1)
    timeout_s: int = Field(default=120, ge=1, description="per LLM call")
    database: dict[str, Any] = Field(default_factory=dict, description="settings of the search's database config")

    @model_validator(mode="before")
    @classmethod
    def _external_backends(cls, data: Any) -> Any:
        search = data.get("search") if isinstance(data, dict) else None
        if search in EXTERNAL_BACKENDS:
            raise ValueError(f"search '{search}' is SkyDiscover's wrapper around another library: "
                             f"use the trainer {EXTERNAL_BACKENDS[search]}")
        return data

    @model_validator(mode="after")
    def _known_database_knobs(self) -> SkyDiscoverParams:
        allowed = DATABASE_KNOBS[self.search]
        unknown = sorted(set(self.database) - set(allowed))
        if unknown:
            owned = [k for k in unknown if k in _HARNESS_OWNED]
            hint = f"{', '.join(owned)} set by the harness; " if owned else ""
            raise ValueError(f"unknown database settings for search '{self.search}': {', '.join(unknown)} "
                             f"({hint}allowed: {', '.join(allowed) or 'none'})")
        return self


def _bridge_evaluator(directory: str, problem: Any) -> str:
    """The file SkyDiscover's evaluator object is built from: it is read (as context for prompts
    that show the evaluator's code) but never called; the task's own evaluator source, commented."""
    task = getattr(getattr(problem, "guide", None), "task", None)
    source = ""
    layout = getattr(getattr(task, "folder", None), "layout", None)
    if task is not None and layout is not None:  # the folder's evaluator, wherever its layout keeps it
        source = (task.folder.path / layout.evaluator).read_text(encoding="utf-8")
    elif task is not None and getattr(task, "evaluator_module", None):
        import importlib
        import inspect

        source = inspect.getsource(importlib.import_module(task.evaluator_module))
    commented = "\n".join(f"# {line}" for line in source.splitlines())
    path = os.path.join(directory, "evaluator.py")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write('"""Candidates are evaluated by trace-bench (in its sandbox); the task\'s evaluator follows."""\n'
                     f"{commented}\n\n\ndef evaluate(program_path):\n"
                     "    raise RuntimeError('evaluated by trace-bench')\n")
    with open(os.path.join(directory, "requirements.txt"), "w", encoding="utf-8") as handle:
        handle.write("numpy\n")  # EvoX lists the packages a program may use; this keeps it from probing
    return path


class SkyDiscoverTrainer(Trainer[SkyDiscoverParams]):
    Params = SkyDiscoverParams
    knob_aliases = {"ps_steps": "iterations", "max_iterations": "iterations"}
    uses_optimizer = False

    def train(self) -> None:
        ctx = self.ctx
        parameters = text_parameters(ctx)
        view = program_view(ctx.problem, parameters)
        base = ctx.current_state()
        iterations = suggested_iterations(ctx.problem, self.params)
        with GatewayLink(ctx) as link, tempfile.TemporaryDirectory(prefix="skydiscover_") as workdir:
            loop = _Loop(self, view, base, link, workdir)
            with link.guard():
                best = asyncio.run(loop.run(iterations))
            link.check()
        final = self._state_of(view, base, best)
        ctx.report_step(final, None, final=True)
        ctx.apply(final)

    @staticmethod
    def _state_of(view: ProgramView, base: State, code: str | None) -> State:
        if not code:
            return list(base)
        try:
            return state_from_texts(view.parameters, base, view.parse(code))
        except ValueError:
            return list(base)


class _Loop:
    """One library run: configuration, the manager, the hooks, the initial program."""

    def __init__(self, trainer: SkyDiscoverTrainer, view: ProgramView, base: State, link: GatewayLink,
                 workdir: str) -> None:
        self.trainer, self.ctx, self.params = trainer, trainer.ctx, trainer.params
        self.view, self.base, self.link, self.workdir = view, base, link, workdir
        self.context = contextvars.copy_context()
        self.last_child: Any = None
        self.stop: BaseException | None = None

    def models(self) -> list[Any]:
        from skydiscover.config import LLMModelConfig

        params = self.params
        return [LLMModelConfig(name="trace-bench-optimizer", api_base=self.link.base_url, api_key=self.link.api_key,
                               temperature=params.temperature, top_p=0.95, max_tokens=params.max_tokens,
                               timeout=params.timeout_s, retries=0, retry_delay=0, random_seed=self.ctx.seed)]

    def config(self, iterations: int) -> Any:
        from skydiscover import config as sky

        params = self.params
        database_class = {"adaevolve": sky.AdaEvolveDatabaseConfig, "evox": sky.EvoxDatabaseConfig,
                          "beam_search": sky.BeamSearchDatabaseConfig, "best_of_n": sky.BestOfNDatabaseConfig,
                          "topk": sky.DatabaseConfig}[params.search]
        database = database_class(random_seed=self.ctx.seed, log_prompts=False)
        for key, value in params.database.items():
            setattr(database, key, value)
        models = self.models()
        message = system_message(self.ctx.problem) or "system_message"
        return sky.Config(
            max_iterations=iterations, checkpoint_interval=10**9, log_level="WARNING", log_dir=self.workdir,
            random_seed=self.ctx.seed, language=self.view.language, diff_based_generation=params.diff_based,
            llm=sky.LLMConfig(models=models, api_base=self.link.base_url, api_key=self.link.api_key,
                              temperature=params.temperature, max_tokens=params.max_tokens, timeout=params.timeout_s,
                              retries=0, retry_delay=0, random_seed=self.ctx.seed),
            prompt=sky.PromptConfig(system_message=message),
            search=sky.SearchConfig(type=params.search, database=database, num_inspirations=params.num_inspirations,
                                    output_dir=os.path.join(self.workdir, "search")),
            evaluator=sky.EvaluatorConfig(timeout=int(_evaluation_timeout(self.ctx.problem)), max_retries=0,
                                          cascade_evaluation=False, parallel_evaluations=1))

    def manager(self, config: Any) -> Any:
        from skydiscover.search.default_discovery_manager import DiscoveryManagerInput
        from skydiscover.search.route import get_database_class, get_discovery_manager

        from trace_bench.trainers.external.skydiscover_order import insertion_ordered

        database = insertion_ordered(get_database_class(config.search.type, config.search.database))
        database.language = self.view.language
        manager_input = DiscoveryManagerInput(config=config, evaluation_file=_bridge_evaluator(self.workdir,
                                                                                             self.ctx.problem),
                                              database=database, file_suffix=".py", output_dir=self.workdir)
        if config.search.type == "evox":
            from trace_bench.trainers.external.skydiscover_evox import coevolution_manager

            manager = coevolution_manager(manager_input, self.models())
        else:
            manager = get_discovery_manager(manager_input)
        manager.evaluator.evaluate_function = self.evaluate_file
        manager.monitor_callback = self.on_child
        original = manager._run_iteration

        async def one_iteration(*args: Any, **kwargs: Any) -> Any:
            outcome = await original(*args, **kwargs)
            self.on_iteration(manager)
            return outcome

        manager._run_iteration = one_iteration
        return manager

    async def run(self, iterations: int) -> str | None:
        from skydiscover.search.route import get_program
        from skydiscover.utils.metrics_utils import get_fitness_score

        config = self.config(iterations)
        manager = self.manager(config)
        initial = self.view.render(texts_of(self.view.parameters, self.base))
        evaluation = await manager.evaluator.evaluate_program(initial, "initial")
        program = get_program(config, initial, str(uuid.uuid4()), evaluation.metrics, 0)
        program.artifacts = evaluation.artifacts
        manager.database.add(program)
        manager.database.initial_program_id = program.id
        manager.database.initial_program_score = get_fitness_score(program.metrics or {})
        if iterations > 0:
            await manager.run_discovery(1, iterations)
        if self.stop is not None:
            raise self.stop
        best = manager.database.get_best_program()
        return best.solution if best is not None else initial

    # -- hooks ----------------------------------------------------------------------------
    def evaluate_file(self, program_path: str) -> Any:
        """SkyDiscover's ``evaluate_function``: the task scores the program (in the library's executor
        thread, with the job's context)."""
        return self.context.copy().run(self._evaluate_file, program_path)

    def _evaluate_file(self, program_path: str) -> Any:
        from skydiscover.evaluation.evaluation_result import EvaluationResult

        with open(program_path, encoding="utf-8") as handle:
            code = handle.read()
        try:
            texts = self.view.parse(code)
            state = state_from_texts(self.view.parameters, self.base, texts)
        except ValueError as exc:
            return EvaluationResult({"combined_score": failure_score(self.ctx), "validity": 0, "error": str(exc)},
                                    {"feedback": str(exc)})
        result = self.ctx.evaluate(state, self.ctx.validation_dataset)
        metrics = {**task_metrics(self.ctx.problem, state), "combined_score": result.score}
        feedback = " | ".join(f for f in result.feedbacks if f)[:4000]
        return EvaluationResult(metrics, {"feedback": feedback})

    def on_child(self, program: Any, iteration: int) -> None:
        self.last_child = program

    def on_iteration(self, manager: Any) -> None:
        """One curve step per iteration: the new child, or the best program when none was added."""
        child, self.last_child = self.last_child, None
        if child is not None:
            state = SkyDiscoverTrainer._state_of(self.view, self.base, child.solution)
            self.ctx.report_step(state, None)
        else:
            best = manager.database.get_best_program()
            state = SkyDiscoverTrainer._state_of(self.view, self.base, best.solution if best else None)
            self.ctx.report_step(state, None, accepted=False, rejected="no child program this iteration")
        try:
            self.link.check()
        except Exception as exc:  # the budget is spent: let the library's loop end, then re-raise
            self.stop = exc
            manager.request_shutdown()


def _evaluation_timeout(problem: Any) -> float:
    timeout = (getattr(problem, "metadata", {}) or {}).get("timeout_s")
    return 3 * float(timeout) + 30 if isinstance(timeout, (int, float)) else 600.0
