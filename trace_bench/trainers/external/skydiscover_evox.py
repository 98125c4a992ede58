"""EvoX with its LLM-written search strategies kept in the sandbox.

EvoX (SkyDiscover's ``CoEvolutionManager``) co-evolves the *search strategy*: an LLM writes a
``ProgramDatabase`` subclass whose ``sample()`` picks the next parent and inspirations, and the
library imports and runs that code in its own process.  Here the job's process never runs it:

- the library's validation of a new strategy (``search_strategy_evaluator.evaluate``) runs in
  the sandbox (:func:`check_strategy`);
- a strategy that passes becomes a :class:`SandboxedStrategyDatabase`: programs are stored and
  ranked by trusted code in the job, and only the question "which programs next?" goes to the
  strategy, in the sandbox (:func:`sample_with_strategy`), which answers with program ids.

The search side (the LLM that writes strategies) is configured in code and talks to the job's
gateway only.  skydiscover 0.1.0's wheel lacks EvoX's search-side config and prompt files, so the
search side uses the library's default prompt builder with a system message of ours.
"""

from __future__ import annotations

import logging
import os
import tempfile
from typing import Any

_SANDBOX_CALL_S = 30.0
SEARCH_SYSTEM_MESSAGE = (
    "You improve a search strategy for an evolutionary program search. The program is a Python module that "
    "defines `EvolvedProgram` (a dataclass subclass of skydiscover.search.base_database.Program) and "
    "`EvolvedProgramDatabase` (a subclass of skydiscover.search.base_database.ProgramDatabase) with "
    "`add(self, program, iteration=None, **kwargs) -> str` and `sample(self, num_inspirations=4, **kwargs)` "
    "returning ({label: parent}, {label: [inspiration programs]}). A better strategy picks parents and "
    "inspirations so that the solution search improves faster. Keep the class names and signatures; never "
    "change a program's metrics.")

logger = logging.getLogger(__name__)


# -- sandbox targets (run inside the sandbox only) -------------------------------------------
def _light_import() -> None:
    """Make ``import skydiscover.<module>`` skip the package's ``__init__`` (which loads its whole
    controller and the OpenAI client, ~2.5 s): a strategy needs only the database modules."""
    import importlib.util
    import sys
    import types

    if "skydiscover" in sys.modules:
        return
    spec = importlib.util.find_spec("skydiscover")
    if spec is None or not spec.submodule_search_locations:
        return
    package = types.ModuleType("skydiscover")
    package.__path__ = list(spec.submodule_search_locations)
    sys.modules["skydiscover"] = package


def _load_strategy(code: str) -> tuple[Any, Any]:
    _light_import()
    from skydiscover.search.utils.discovery_utils import load_database_from_file

    path = os.path.join(tempfile.mkdtemp(prefix="strategy_"), "strategy.py")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(code)
    return load_database_from_file(path)


def check_strategy(payload: dict[str, Any]) -> Any:
    """Sandbox target: skydiscover's own validation of a search strategy's code."""
    _light_import()
    from skydiscover.search.evox.database import search_strategy_evaluator

    path = os.path.join(tempfile.mkdtemp(prefix="strategy_"), "strategy.py")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(str(payload["code"]))
    return dict(search_strategy_evaluator.evaluate(path, fast_mode=True))


def sample_with_strategy(payload: dict[str, Any]) -> Any:
    """Sandbox target: replay the programs into the strategy's database and ask it to sample."""
    _light_import()
    from skydiscover.config import EvoxDatabaseConfig

    database_class, program_class = _load_strategy(str(payload["code"]))
    database_class.DIVERGE_LABEL = str(payload.get("diverge_label") or "")
    database_class.REFINE_LABEL = str(payload.get("refine_label") or "")
    config = EvoxDatabaseConfig(random_seed=int(payload["seed"]))
    database = database_class("evox", config)
    for entry in payload["programs"]:
        database.add(program_class(**entry), iteration=entry.get("iteration_found"))
    parents, inspirations = database.sample(num_inspirations=int(payload["num_inspirations"]))
    return {"parents": [[str(label), str(program.id)] for label, program in parents.items()],
            "inspirations": [[str(label), [str(p.id) for p in programs]] for label, programs in inspirations.items()]}


# -- the job side ------------------------------------------------------------------------------
def _sandboxed(target: str, payload: dict[str, Any]) -> Any:
    from trace_bench.sandbox import SandboxLimits, run_sandboxed

    result = run_sandboxed(f"{__name__}:{target}", payload, SandboxLimits(wall_s=_SANDBOX_CALL_S, memory_mb=1024))
    if not result.ok:
        raise RuntimeError(f"the search strategy failed in the sandbox: {result.describe()}")
    return result.value


def _program_fields(program: Any) -> dict[str, Any]:
    """What a strategy may see of a program: plain fields only."""
    metrics = {k: v for k, v in (program.metrics or {}).items() if isinstance(v, (int, float, str, bool))}
    return {"id": program.id, "solution": program.solution, "language": program.language, "metrics": metrics,
            "iteration_found": program.iteration_found, "parent_id": program.parent_id,
            "generation": program.generation}


def sandboxed_strategy_database(base: Any, program_base: type) -> type:
    """A ``ProgramDatabase`` subclass (of skydiscover's ``base``) whose sampling is decided by
    LLM-written code in the sandbox; storage, ranking and statistics stay trusted."""

    class SandboxedStrategyDatabase(base):
        _program_class = program_base
        last_iteration: int
        DIVERGE_LABEL = ""
        REFINE_LABEL = ""

        def __init__(self, name: str, config: Any, code: str) -> None:
            super().__init__(name, config)
            self.code = code

        def add(self, program: Any, iteration: int | None = None, **kwargs: Any) -> str:
            self.programs[program.id] = program
            if iteration is not None:
                self.last_iteration = max(self.last_iteration, iteration)
            self._update_best_program(program)
            return str(program.id)

        def sample(self, num_inspirations: int | None = 4, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]]:
            answer = _sandboxed("sample_with_strategy", {
                "code": self.code, "programs": [_program_fields(p) for p in self.programs.values()],
                "num_inspirations": int(num_inspirations or 0), "seed": int(self.config.random_seed or 0),
                "diverge_label": self.DIVERGE_LABEL, "refine_label": self.REFINE_LABEL})
            parents = answer.get("parents") if isinstance(answer, dict) else None
            if not isinstance(parents, list) or len(parents) != 1:
                raise RuntimeError("the search strategy must sample exactly one parent")
            label, parent_id = parents[0]
            chosen = {str(label)[:2000]: self._known(parent_id)}
            inspirations = {str(lab)[:2000]: [self._known(i) for i in ids] for lab, ids in answer["inspirations"]}
            return chosen, inspirations

        def _known(self, program_id: Any) -> Any:
            if not isinstance(program_id, str) or program_id not in self.programs:
                raise RuntimeError(f"the search strategy sampled an unknown program {str(program_id)[:80]!r}")
            return self.programs[program_id]

    return SandboxedStrategyDatabase


def coevolution_manager(manager_input: Any, search_models: list[Any]) -> Any:
    """SkyDiscover's ``CoEvolutionManager`` with the search side configured in code (gateway models,
    the default prompt builder) and every LLM-written strategy run in the sandbox."""
    from skydiscover.config import (
        Config,
        DatabaseConfig,
        EvaluatorConfig,
        LLMConfig,
        PromptConfig,
        SearchConfig,
    )
    from skydiscover.search.base_database import Program, ProgramDatabase
    from skydiscover.search.default_discovery_manager import DiscoveryManager, DiscoveryManagerInput
    from skydiscover.search.evox.coevolve_manager import CoEvolutionManager
    from skydiscover.search.evox.utils.search_scorer import LogWindowScorer
    from skydiscover.search.route import get_database_class

    strategy_database = sandboxed_strategy_database(ProgramDatabase, Program)

    class SandboxedCoEvolutionManager(CoEvolutionManager):
        database: Any
        def _init_search_evolution_manager(self) -> None:
            db_cfg = self.config.search.database
            with open(db_cfg.database_file_path, encoding="utf-8") as handle:
                self._search_initial_code = handle.read()
            config = Config(max_iterations=1, checkpoint_interval=10**9, log_level="WARNING",
                            random_seed=self.config.random_seed, language="python", diff_based_generation=False,
                            llm=LLMConfig(models=search_models, api_base=search_models[0].api_base,
                                          api_key=search_models[0].api_key, retries=0, retry_delay=0),
                            prompt=PromptConfig(system_message=SEARCH_SYSTEM_MESSAGE),
                            search=SearchConfig(type="evolve_search_strategy",
                                                database=DatabaseConfig(random_seed=self.config.random_seed)),
                            evaluator=EvaluatorConfig(timeout=600, max_retries=0, cascade_evaluation=False,
                                                      parallel_evaluations=1))
            database = get_database_class(config.search.type, config.search.database)
            self.search_manager = DiscoveryManager(DiscoveryManagerInput(
                config=config, evaluation_file=db_cfg.evaluation_file, database=database, file_suffix=".py",
                output_dir=os.path.join(self.output_dir or tempfile.gettempdir(), "search")))
            self.search_manager.evaluator.evaluate_function = _check_strategy_file
            self.search_scorer = LogWindowScorer()
            self._active_search_algorithm_code = self._search_initial_code
            self._init_search_tracking()

        def _switch_to_new_search_algorithm(self, result: Any) -> bool:
            code = (result.child_program_dict or {}).get("solution")
            if not code:
                return False
            new_database = strategy_database(self.config.search.type, self.config.search.database, code)
            self._assign_labels_to_db(new_database)
            try:
                self._migrate_to_db(new_database)
                new_database.sample(num_inspirations=self.num_inspirations)  # it must work before it is used
            except Exception as exc:
                logger.warning("search strategy rejected: %s", exc)
                return False
            new_database.get_best_program()
            self._fallback_database, self._fallback_search_code = self.database, self._active_search_algorithm_code
            self.database = new_database
            self.evaluator.database = new_database
            self._active_search_algorithm_code = code
            return True

    return SandboxedCoEvolutionManager(manager_input)


def _check_strategy_file(program_path: str) -> dict[str, Any]:
    with open(program_path, encoding="utf-8") as handle:
        code = handle.read()
    try:
        answer = _sandboxed("check_strategy", {"code": code})
    except RuntimeError as exc:
        return {"validity": 0, "error": str(exc), "combined_score": 0.0}
    if not isinstance(answer, dict):
        return {"validity": 0, "error": "malformed validation result", "combined_score": 0.0}
    validity = answer.get("validity")
    error = answer.get("error")
    return {"validity": 1 if validity == 1 else 0, "combined_score": 0.0,
            **({"error": str(error)[:2000]} if error else {})}
