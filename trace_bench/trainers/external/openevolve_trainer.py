"""OpenEvolveTrainer: OpenEvolve's evolutionary loop over the task's code and text parameters.

The parameters are rendered as one *program*: an ``EVOLVE-BLOCK`` per parameter, labelled with its
name and kind.  Each iteration uses OpenEvolve's own parts, configured through its ``Config``
objects: ``ProgramDatabase`` (islands, MAP-Elites sampling, migration) picks a parent and
inspirations, ``PromptSampler`` builds the prompt, ``LLMEnsemble`` (an OpenAI client pointed at the
job's gateway) answers with SEARCH/REPLACE diffs or a full rewrite, and OpenEvolve's code utilities
apply them.  The child is scored by the task's guide through the harness (which sandboxes code
where the task does), with the guide's feedback stored as the program's artifact for later prompts.

Why not ``openevolve.run_evolution``: it evaluates in a process pool whose workers re-import an
evaluator *file*, so they can reach neither this job's problem objects nor its gateway accounting,
and it installs signal handlers.  Running the same iteration in-process keeps one job, one process.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import Field

from trace_bench.trainers.base import Trainer, TrainerParams
from trace_bench.trainers.context import given
from trace_bench.trainers.external.bridge import (
    GatewayLink,
    evaluate_texts,
    failure_score,
    summarize_feedback,
    text_parameters,
    texts_of,
)
from trace_bench.trainers.external.program_view import (
    ProgramView,
    parse_program,
    program_view,
    render_program,
    suggested_iterations,
    system_message,
    task_metrics,
)
from trace_bench.trainers.state import State

__all__ = ["OpenEvolveParams", "OpenEvolveTrainer", "parse_program", "render_program"]


class OpenEvolveParams(TrainerParams):
    iterations: int | None = Field(default=None, ge=0, description="iterations (one child program each); "
                                   "default: the task's own max_iterations (a task folder's config.yaml), else 10")
    diff_based: bool = Field(default=True, description="SEARCH/REPLACE diffs; false asks for full rewrites")
    num_islands: int = Field(default=2, ge=1)
    population_size: int = Field(default=50, ge=2)
    num_top_programs: int = Field(default=3, ge=0)
    num_diverse_programs: int = Field(default=2, ge=0)
    migration_interval: int = Field(default=10, ge=1)
    temperature: float = Field(default=0.7, ge=0)
    max_tokens: int = Field(default=4096, ge=1)
    timeout_s: int = Field(default=120, ge=1, description="per LLM call")


class OpenEvolveTrainer(Trainer[OpenEvolveParams]):
    Params = OpenEvolveParams
    knob_aliases = {"ps_steps": "iterations", "max_iterations": "iterations"}
    uses_optimizer = False

    def train(self) -> None:
        from openevolve.config import Config, LLMModelConfig
        from openevolve.database import Program, ProgramDatabase
        from openevolve.llm.ensemble import LLMEnsemble
        from openevolve.prompt.sampler import PromptSampler

        params = self.params
        ctx = self.ctx
        parameters = text_parameters(ctx)
        base = ctx.current_state()
        view = program_view(ctx.problem, parameters)
        language = view.language
        iterations = suggested_iterations(ctx.problem, params)
        with GatewayLink(ctx) as link:
            config = self._config(Config, LLMModelConfig, link, language)
            database = ProgramDatabase(config.database)
            sampler = PromptSampler(config.prompt)
            llm = LLMEnsemble(config.llm.models)
            initial = view.render(texts_of(parameters, base))
            metrics, feedback, _ = self._score(view, base, initial)
            database.add(Program(id="p00000", code=initial, language=language, metrics=metrics), iteration=0)
            database.store_artifacts("p00000", {"feedback": feedback})
            for iteration in range(1, iterations + 1):
                link.check()
                island = (iteration - 1) % params.num_islands
                parent, inspirations = database.sample_from_island(island, num_inspirations=params.num_diverse_programs)
                top = sorted((database.programs[i] for i in database.islands[island] if i in database.programs),
                             key=lambda p: p.metrics.get("combined_score", 0.0), reverse=True)
                prompt = sampler.build_prompt(
                    current_program=parent.code, parent_program=parent.code, program_metrics=parent.metrics,
                    previous_programs=[p.to_dict() for p in top[: params.num_top_programs]],
                    top_programs=[p.to_dict() for p in top[: params.num_top_programs + params.num_diverse_programs]],
                    inspirations=[p.to_dict() for p in inspirations], language=language, evolution_round=iteration,
                    diff_based_evolution=params.diff_based, program_artifacts=database.get_artifacts(parent.id) or None,
                    feature_dimensions=config.database.feature_dimensions)
                with link.guard():
                    response = asyncio.run(llm.generate_with_context(
                        system_message=prompt["system"], messages=[{"role": "user", "content": prompt["user"]}]))
                child, problem = self._child(config, parent.code, response or "", language)
                state, score = self._state_of(view, base, parent.code), None
                if child is not None:
                    metrics, feedback, child_state = self._score(view, base, child)
                    program = Program(id=f"p{iteration:05d}", code=child, language=language, parent_id=parent.id,
                                      generation=parent.generation + 1, metrics=metrics, iteration_found=iteration,
                                      metadata={"island": island})
                    admitted = database.add(program, iteration=iteration, target_island=island)
                    database.store_artifacts(program.id, {"feedback": feedback})
                    database.increment_island_generation(island_idx=island)
                    if database.should_migrate():
                        database.migrate_programs()
                    problem = "" if child_state is not None else feedback
                    if child_state is not None and admitted is not None:
                        state, score = child_state, metrics["combined_score"]
                ctx.report_step(state, score, accepted=not problem, **given(rejected=problem[:300]))
            best = database.get_best_program()
            final = self._state_of(view, base, best.code if best is not None else initial)
        ctx.report_step(final, None, final=True)
        ctx.apply(final)

    def _config(self, config_cls: Any, model_cls: Any, link: GatewayLink, language: str) -> Any:
        params = self.params
        config = config_cls()
        config.language = language
        config.random_seed = self.ctx.seed
        config.diff_based_evolution = params.diff_based
        config.llm.models = [model_cls(name="trace-bench-optimizer", api_base=link.base_url, api_key=link.api_key,
                                       weight=1.0, temperature=params.temperature, max_tokens=params.max_tokens,
                                       timeout=params.timeout_s, retries=0, retry_delay=0, random_seed=self.ctx.seed)]
        config.llm.evaluator_models = []
        config.prompt.num_top_programs = params.num_top_programs
        if system_message(self.ctx.problem):
            config.prompt.system_message = system_message(self.ctx.problem)
        config.prompt.num_diverse_programs = params.num_diverse_programs
        database = config.database
        database.in_memory, database.db_path, database.random_seed = True, None, self.ctx.seed
        database.num_islands, database.population_size = params.num_islands, params.population_size
        database.archive_size = min(database.archive_size, params.population_size)
        database.migration_interval = params.migration_interval
        return config

    @staticmethod
    def _child(config: Any, parent: str, response: str, language: str) -> tuple[str | None, str]:
        """The child program from an answer, or (None, why it could not be used)."""
        from openevolve.utils.code_utils import apply_diff_blocks, extract_diffs, parse_full_rewrite

        if config.diff_based_evolution:
            try:
                blocks = extract_diffs(response, config.diff_pattern)
            except ValueError as exc:
                return None, str(exc)
            if not blocks:
                return None, "no SEARCH/REPLACE diff in the answer"
            child, applied = apply_diff_blocks(parent, blocks)
            if applied == 0 or child == parent:
                return None, "the diff did not change the program"
            return child, ""
        child = parse_full_rewrite(response, language)
        if not child or child == parent:
            return None, "no new program in the answer"
        return child, ""

    def _state_of(self, view: ProgramView, base: State, code: str) -> State:
        from trace_bench.trainers.external.bridge import state_from_texts

        try:
            return state_from_texts(view.parameters, base, view.parse(code))
        except ValueError:
            return list(base)

    def _score(self, view: ProgramView, base: State, code: str) -> tuple[dict[str, float], str, State | None]:
        """(OpenEvolve metrics, feedback artifact, state) of a program, scored on the validation split."""
        try:
            texts = view.parse(code)
        except ValueError as exc:
            return {"combined_score": failure_score(self.ctx)}, str(exc), None
        state, result, error = evaluate_texts(self.ctx, view.parameters, base, texts, self.ctx.validation_dataset)
        if state is None or result is None:
            return {"combined_score": failure_score(self.ctx)}, error, None
        metrics = {**task_metrics(self.ctx.problem, state), "combined_score": result.score}
        metrics.update({k: v for k, v in result.score_dict.items() if k != "score"})
        return metrics, summarize_feedback(result.feedbacks)[:4000], state
