"""ShinkaEvolve (Sakana AI) run through SkyDiscover's ``shinkaevolve`` backend.

A trainer of its own rather than a ``search`` of :class:`SkyDiscoverTrainer`: it needs a library
that SkyDiscover's other searches do not (``shinka``, whose published releases lack the API the
backend imports, see :mod:`.shinka_probe`), so ``list-trainers`` can say that this one is
unavailable while SkyDiscover runs; and its knobs are ShinkaEvolve's (patch types, islands,
meta-recommendations), not SkyDiscover's database settings.

The job calls the backend's own ``run`` (its mapping onto ShinkaEvolve's ``AsyncEvolutionRunner``,
its command-line wrapper around the evaluator, its reading of ShinkaEvolve's database), through
the backend's escape hatch for complete configs (``external_config``) so that the harness, not the
backend's tuned defaults, decides where calls go.  What changes:

- every LLM role ShinkaEvolve's ``EvolutionConfig`` names (``*llm_models``) is the job's gateway, as
  a ShinkaEvolve ``local/<model>@<url>`` OpenAI-compatible model whose key is read from an env var
  set for the run only; embeddings are off (``*embedding_model`` = None): the gateway serves chat;
- ShinkaEvolve runs its evaluator as a process; the evaluator it gets is
  :class:`~.candidate_endpoint.CandidateEndpoint`'s, which hands the program text to the job, where
  the task scores it (in the sandbox for discovery tasks);
- one curve step per program evaluated after the initial one (one per generation), reported from
  the job thread; the run is cancelled as soon as the gateway refuses a call for the budget (its
  ``on_budget_stop``, before the library sees the 429) or a watcher finds the wall budget spent;
  evaluations run one at a time (``max_parallel_jobs`` 1);
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

#: ShinkaEvolve ``DatabaseConfig`` settings a job may set (those SkyDiscover's tuned defaults set).
DATABASE_KNOBS = ("num_islands", "archive_size", "parent_selection_strategy", "parent_selection_lambda",
                  "elite_selection_ratio", "num_archive_inspirations", "num_top_k_inspirations", "migration_interval",
                  "migration_rate", "island_elitism")
KEY_ENV = "TRACE_BENCH_SHINKA_GATEWAY_KEY"
PatchType = Literal["diff", "full", "cross"]


class ShinkaEvolveParams(TrainerParams):
    iterations: int | None = Field(default=None, ge=0, description="generations (one child program each); default: "
                                   "the task's own max_iterations (a task folder's config.yaml), else 10")
    patch_types: list[PatchType] = Field(default_factory=lambda: ["diff", "full", "cross"], min_length=1)
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
            with link.guard(), CandidateEndpoint(run.evaluate) as endpoint, _key_in_env(link.api_key):
                asyncio.run(run.main(iterations, endpoint))
            link.check()
        final = run.best_state()
        ctx.report_step(final, None, final=True)
        ctx.apply(final)


class _key_in_env:  # noqa: N801 - used as a context manager, named like one
    """The gateway token in :data:`KEY_ENV` for the run only (ShinkaEvolve reads a local model's key
    from the environment); whatever was there before is put back."""

    def __init__(self, key: str) -> None:
        self.key, self.before = key, os.environ.get(KEY_ENV)

    def __enter__(self) -> None:
        os.environ[KEY_ENV] = self.key

    def __exit__(self, *exc: Any) -> None:
        if self.before is None:
            os.environ.pop(KEY_ENV, None)
        else:
            os.environ[KEY_ENV] = self.before


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

    def shinka_configs(self, iterations: int, evaluator_path: str) -> dict[str, Any]:
        from shinka.core.runner import EvolutionConfig
        from shinka.database import DatabaseConfig
        from shinka.launch import LocalJobConfig

        params = self.params
        fields = {f.name: f for f in dataclasses.fields(EvolutionConfig)}
        if "llm_models" not in fields:
            raise RuntimeError("this shinka's EvolutionConfig has no llm_models: its LLM calls cannot be routed")
        wanted: dict[str, Any] = {
            "num_generations": iterations, "results_dir": os.path.join(self.workdir, "results"), "job_type": "local",
            "language": self.view.language, "max_parallel_jobs": 1, "patch_types": list(params.patch_types),
            "patch_type_probs": list(params.patch_type_probs), "max_patch_attempts": params.max_patch_attempts,
            "llm_kwargs": {"temperatures": [params.temperature], "max_tokens": params.max_tokens},
            "meta_rec_interval": params.meta_rec_interval, "task_sys_msg": system_message(self.ctx.problem) or None,
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
        job = LocalJobConfig(eval_program_path=evaluator_path, time=_hms(_evaluation_timeout(self.ctx.problem)))
        return {"evo_config": evolution, "job_config": job, "db_config": DatabaseConfig(**params.database)}

    def sky_config(self, iterations: int, evaluator_path: str) -> Any:
        from skydiscover import config as sky

        config = sky.Config(max_iterations=iterations, log_dir=self.workdir, random_seed=self.ctx.seed,
                            language=self.view.language, llm=sky.LLMConfig(models=[]),
                            prompt=sky.PromptConfig(system_message=system_message(self.ctx.problem) or "system_message"))
        config.external_config = self.shinka_configs(iterations, evaluator_path)
        return config

    # -- the run --------------------------------------------------------------------------
    async def main(self, iterations: int, endpoint: CandidateEndpoint) -> None:
        from skydiscover.extras.external import shinkaevolve_backend

        program_path = os.path.join(self.workdir, "initial_program.py")
        evaluator_path = os.path.join(self.workdir, "evaluator.py")
        with open(program_path, "w", encoding="utf-8") as handle:
            handle.write(self.initial)
        timeout = _evaluation_timeout(self.ctx.problem)
        with open(evaluator_path, "w", encoding="utf-8") as handle:
            handle.write(endpoint.evaluator_source("Candidates are scored by trace-bench (in its sandbox).", timeout))
        config = self.sky_config(iterations, evaluator_path)
        task = asyncio.ensure_future(shinkaevolve_backend.run(program_path, evaluator_path, config, iterations,
                                                              os.path.join(self.workdir, "output")))
        loop = self._loop = asyncio.get_running_loop()
        # cancelled as soon as a call is refused for the budget, before the library sees the refusal
        self.link.gateway.on_budget_stop = lambda: loop.call_soon_threadsafe(task.cancel)
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


def _hms(seconds: float) -> str:
    total = int(seconds)
    return f"{total // 3600:02d}:{total % 3600 // 60:02d}:{total % 60:02d}"
