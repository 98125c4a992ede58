"""ShinkaEvolve (Sakana AI) run through its own runner, ``shinka.core.ShinkaEvolveRunner``.

ShinkaEvolve's current API (PyPI ``shinka-evolve`` 0.0.7 and its source since 2026-03-01): one
``EvolutionConfig``, ``ShinkaEvolveRunner``'s ``run_async``, ``DatabaseConfig`` and ``LocalJobConfig``.
SkyDiscover's ``shinkaevolve`` backend imports the API ShinkaEvolve removed then
(``shinka.core.runner``), so the job drives the runner itself.  What the job sets:

- every LLM role ``EvolutionConfig`` names (``*llm_models``) is the job's gateway, as a ShinkaEvolve
  ``local/<model>@<url>?api_key_env=VAR`` OpenAI-compatible model whose key is in an env var set for
  the run only; embeddings are off (``embedding_model`` None: the gateway serves chat), meta
  recommendations off unless asked; ``SHINKA_PRICING_MODE=offline`` for the run (the runner would
  otherwise fetch a price catalog from the network; the gateway meters the cost);
- ShinkaEvolve runs its evaluator as a process; the evaluator it gets is
  :class:`~.candidate_endpoint.CandidateEndpoint`'s, which hands the program text to the job, where
  the task scores it (in the sandbox for discovery tasks);
- one curve step per program evaluated after the initial one, reported from the job thread; the run
  is cancelled as soon as the gateway refuses a call for the budget (its ``on_budget_stop``, before
  the library sees the 429) or a watcher finds the wall budget spent; one evaluation and one proposal
  at a time;
- the final state is the best program by the task's own score (ShinkaEvolve's best needs its
  ``correct`` flag, which a score alone does not give).
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import os
import tempfile
import threading
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
from trace_bench.trainers.external.candidate_endpoint import CandidateEndpoint
from trace_bench.trainers.external.program_view import (
    ProgramView,
    program_view,
    suggested_iterations,
    system_message,
    task_metrics,
)
from trace_bench.trainers.state import State

#: ShinkaEvolve ``DatabaseConfig`` settings a job may set.
DATABASE_KNOBS = ("num_islands", "archive_size", "parent_selection_strategy", "parent_selection_lambda",
                  "elite_selection_ratio", "num_archive_inspirations", "num_top_k_inspirations", "migration_interval",
                  "migration_rate", "island_elitism")
KEY_ENV = "TRACE_BENCH_SHINKA_GATEWAY_KEY"
PRICING_ENV = "SHINKA_PRICING_MODE"
PatchType = Literal["diff", "full", "cross"]
_PATCH_TYPES: list[PatchType] = ["diff", "full", "cross"]


class ShinkaEvolveParams(TrainerParams):
    iterations: int | None = Field(default=None, ge=0, description="generations (one child program each); default: "
                                   "the task's own max_iterations (a task folder's config.yaml), else 10")
    patch_types: list[PatchType] = Field(default_factory=lambda: _PATCH_TYPES.copy(), min_length=1,
                                         description="ShinkaEvolve's mutation kinds")
    patch_type_probs: list[float] = Field(default_factory=lambda: [0.6, 0.3, 0.1])
    max_patch_attempts: int = Field(default=3, ge=1, description="LLM tries per generation for a patch that applies")
    temperature: float = Field(default=0.7, ge=0)
    max_tokens: int = Field(default=4096, ge=1)
    meta_rec_interval: int | None = Field(default=None, ge=1, description="generations between meta-recommendation "
                                          "calls (off by default; each is one more LLM call through the gateway)")
    database: dict[str, Any] = Field(default_factory=dict, description="settings of ShinkaEvolve's DatabaseConfig")

    @model_validator(mode="after")
    def _consistent(self) -> ShinkaEvolveParams:
        if len(self.patch_type_probs) != len(self.patch_types):
            raise ValueError(f"patch_type_probs needs one probability per patch type ({len(self.patch_types)})")
        if any(p < 0 for p in self.patch_type_probs) or sum(self.patch_type_probs) <= 0:
            raise ValueError("patch_type_probs must be non-negative with a positive sum")
        unknown = sorted(set(self.database) - set(DATABASE_KNOBS))
        if unknown:
            raise ValueError(f"unknown database settings: {', '.join(unknown)} (allowed: {', '.join(DATABASE_KNOBS)})")
        return self


class ShinkaEvolveTrainer(Trainer[ShinkaEvolveParams]):
    Params = ShinkaEvolveParams
    knob_aliases = {"ps_steps": "iterations", "max_iterations": "iterations", "num_generations": "iterations"}
    uses_optimizer = False

    def train(self) -> None:
        from trace_bench.trainers.external.shinka_probe import import_shinka

        import_shinka()
        ctx = self.ctx
        view = program_view(ctx.problem, text_parameters(ctx))
        base = ctx.current_state()
        iterations = suggested_iterations(ctx.problem, self.params)
        with GatewayLink(ctx) as link, tempfile.TemporaryDirectory(prefix="shinkaevolve_") as workdir:
            run = _Run(self, view, base, link, workdir)
            with link.guard(), CandidateEndpoint(run.evaluate) as endpoint, _env({KEY_ENV: link.api_key,
                                                                                  PRICING_ENV: "offline"}):
                asyncio.run(run.main(iterations, endpoint))
            link.check()
        final = run.best_state()
        ctx.report_step(final, None, final=True)
        ctx.apply(final)


class _env:  # noqa: N801 - used as a context manager, named like one
    """Environment variables for the run only (ShinkaEvolve reads a local model's key and its pricing
    mode from the environment); whatever was there before is put back."""

    def __init__(self, values: dict[str, str]) -> None:
        self.values, self.before = values, {name: os.environ.get(name) for name in values}

    def __enter__(self) -> None:
        os.environ.update(self.values)

    def __exit__(self, *exc: Any) -> None:
        for name, value in self.before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


class _Run:
    """One backend run: configs, the evaluation callback, the watcher that reports steps and stops."""

    def __init__(self, trainer: ShinkaEvolveTrainer, view: ProgramView, base: State, link: GatewayLink,
                 workdir: str) -> None:
        self.ctx, self.params = trainer.ctx, trainer.params
        self.view, self.base, self.link, self.workdir = view, base, link, workdir
        self.context = contextvars.copy_context()
        self.initial = view.render(texts_of(view.parameters, base))
        self._lock = threading.Lock()
        self._evaluated = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._finished = threading.Event()
        self._best: tuple[float, State] | None = None
        self.stop: BaseException | None = None

    # -- configuration --------------------------------------------------------------------
    def model(self) -> str:
        return f"local/trace-bench-optimizer@{self.link.base_url}?api_key_env={KEY_ENV}"

    def shinka_configs(self, iterations: int, evaluator_path: str, program_path: str) -> dict[str, Any]:
        from shinka.core import EvolutionConfig
        from shinka.database import DatabaseConfig
        from shinka.launch import LocalJobConfig

        params = self.params
        fields = {f.name for f in dataclasses.fields(EvolutionConfig)}
        if "llm_models" not in fields:
            raise RuntimeError("this shinka's EvolutionConfig has no llm_models: its LLM calls cannot be routed")
        wanted: dict[str, Any] = {
            "num_generations": iterations, "results_dir": os.path.join(self.workdir, "results"), "job_type": "local",
            "language": self.view.language, "patch_types": list(params.patch_types),
            "patch_type_probs": list(params.patch_type_probs), "max_patch_attempts": params.max_patch_attempts,
            "llm_kwargs": {"temperatures": [params.temperature], "max_tokens": params.max_tokens},
            "meta_rec_interval": params.meta_rec_interval,
            "task_sys_msg": system_message(self.ctx.problem) or None, "init_program_path": program_path,
            "use_text_feedback": True,
        }
        for name in fields:  # every LLM role to the gateway, no embeddings (the gateway serves chat only)
            if name.endswith("llm_models"):
                wanted[name] = [self.model()]
            elif name.endswith("embedding_model"):
                wanted[name] = None
        evolution = EvolutionConfig(**{k: v for k, v in wanted.items() if k in fields})
        db_fields = {f.name for f in dataclasses.fields(DatabaseConfig)}
        unknown = sorted(set(params.database) - db_fields)
        if unknown:
            raise RuntimeError(f"the installed shinka's DatabaseConfig has no {', '.join(unknown)}")
        database = DatabaseConfig(**{"db_path": os.path.join(self.workdir, "programs.sqlite"), **params.database}
                                  if "db_path" in db_fields else dict(params.database))
        job = LocalJobConfig(eval_program_path=evaluator_path, time=_hms(_evaluation_timeout(self.ctx.problem)))
        return {"evo_config": evolution, "job_config": job, "db_config": database}

    # -- the run --------------------------------------------------------------------------
    async def main(self, iterations: int, endpoint: CandidateEndpoint) -> None:
        from shinka.core import ShinkaEvolveRunner

        program_path = os.path.join(self.workdir, f"initial{_SUFFIXES.get(self.view.language, '.py')}")
        evaluator_path = os.path.join(self.workdir, "evaluate.py")
        with open(program_path, "w", encoding="utf-8") as handle:
            handle.write(self.initial)
        timeout = _evaluation_timeout(self.ctx.problem)
        with open(evaluator_path, "w", encoding="utf-8") as handle:
            handle.write(endpoint.evaluator_source("Candidates are scored by trace-bench (in its sandbox).", timeout)
                         + _SHINKA_MAIN)
        runner = ShinkaEvolveRunner(**self.shinka_configs(iterations, evaluator_path, program_path), verbose=False,
                                    max_evaluation_jobs=1, max_proposal_jobs=1, max_db_workers=1)
        task = asyncio.ensure_future(runner.run_async())
        loop = self._loop = asyncio.get_running_loop()
        # cancelled as soon as a call is refused for the budget, before the library sees the refusal
        def stop() -> None:
            loop.call_soon_threadsafe(task.cancel)

        self.link.gateway.on_budget_stop = stop
        try:
            while not task.done():
                await asyncio.wait({task}, timeout=0.2)
                if self.stop is None:
                    try:
                        self.link.check()
                    except Exception as exc:  # the budget is spent: stop the library, then re-raise
                        self.stop = exc
                if self.stop is not None and not task.done():
                    task.cancel()
            try:
                task.result()
            except asyncio.CancelledError:
                self.stop = self.stop or self.link.gateway.budget_error
                if self.stop is None:
                    raise
        finally:
            self.link.gateway.on_budget_stop = None
            self._finished.set()
            if not task.done():
                task.cancel()
        if self.stop is not None:
            raise self.stop

    # -- evaluation (endpoint thread) and steps (job thread) -------------------------------
    def evaluate(self, code: str) -> dict[str, Any]:
        return self.context.copy().run(self._evaluate, code)

    def _evaluate(self, code: str) -> dict[str, Any]:
        with self._lock:
            self._evaluated += 1
            initial = self._evaluated == 1 and code == self.initial
        try:
            state = state_from_texts(self.view.parameters, self.base, self.view.parse(code))
        except ValueError as exc:
            self._queue(None, str(exc), initial)
            score = failure_score(self.ctx)
            return {"combined_score": score, "public": {"validity": 0}, "private": {}, "correct": False,
                    "text_feedback": str(exc)}
        result = self.ctx.evaluate(state, self.ctx.validation_dataset)
        with self._lock:
            if self._best is None or result.score > self._best[0]:
                self._best = (result.score, state)
        self._queue(state, "", initial)
        metrics = task_metrics(self.ctx.problem, state)
        return {"combined_score": result.score, "public": metrics, "private": {}, "correct": True,
                "text_feedback": " | ".join(f for f in result.feedbacks if f)[:4000]}

    def _queue(self, state: State | None, error: str, initial: bool) -> None:
        """Report the program's step in the job thread (the event loop's) and wait for it, so the step
        is recorded at the spend of its own proposal, before the library can ask for the next one."""
        loop = self._loop
        if initial or loop is None or self._finished.is_set():
            return
        done = threading.Event()

        def report() -> None:
            try:
                if state is not None:
                    self.ctx.report_step(state, None)
                else:
                    self.ctx.report_step(self.best_state(), None, accepted=False, rejected=error[:200])
            finally:
                done.set()

        loop.call_soon_threadsafe(report)
        while not done.wait(0.5) and not self._finished.is_set():
            pass

    def best_state(self) -> State:
        with self._lock:
            return list(self._best[1]) if self._best is not None else list(self.base)


def _evaluation_timeout(problem: Any) -> float:
    timeout = (getattr(problem, "metadata", {}) or {}).get("timeout_s")
    return 3 * float(timeout) + 30 if isinstance(timeout, (int, float)) else 600.0


#: ShinkaEvolve's evaluator protocol around the endpoint's evaluate(): the runner starts
#: ``python evaluate.py --program_path P --results_dir R`` and reads R/metrics.json and R/correct.json
_SHINKA_MAIN = """

def main(program_path, results_dir):
    import json
    import os

    result = evaluate(program_path)
    os.makedirs(results_dir, exist_ok=True)
    correct = bool(result.pop("correct", True))
    with open(os.path.join(results_dir, "metrics.json"), "w", encoding="utf-8") as handle:
        json.dump(result, handle)
    with open(os.path.join(results_dir, "correct.json"), "w", encoding="utf-8") as handle:
        json.dump({"correct": correct, "error": "" if correct else str(result.get("text_feedback", ""))}, handle)


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--program_path", required=True)
    parser.add_argument("--results_dir", required=True)
    arguments = parser.parse_args()
    main(arguments.program_path, arguments.results_dir)
"""
_SUFFIXES = {"python": ".py", "text": ".txt", "cpp": ".cpp", "rust": ".rs", "go": ".go", "julia": ".jl"}


def _hms(seconds: float) -> str:
    total = int(seconds)
    return f"{total // 3600:02d}:{total % 3600 // 60:02d}:{total % 60:02d}"
