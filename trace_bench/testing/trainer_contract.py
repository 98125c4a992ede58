"""The contract every trainer must honour, as reusable checks (ours and plugins' alike).

Each check runs real jobs through the job body (:func:`trace_bench.runner.job.body.run_job`) in stub
mode, in this process, and asserts on the persisted artifacts, so a trainer is judged by what a
user would see in its run directory:

* determinism: the same seed gives the same curve; different seeds differ somewhere;
* budget: ``budget: {llm_calls: N}`` means at most N training-phase LLM calls, and the job ends
  ``ok`` or ``budget_exhausted`` (never failed);
* curve: one row per reported step plus the initial row;
* restorable: re-applying ``best_state.yaml`` reproduces ``score_best``.

The restore check needs a task whose evaluation is deterministic (the default
``internal:numeric_param`` is).
"""

from __future__ import annotations

import contextlib
import io
import math
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trace_bench.store.status import Status

DEFAULT_TASK = "internal:numeric_param"
_JOB_ENV = ("TRACE_BENCH_MODE", "TRACE_BENCH_JOB_DIR", "TRACE_BENCH_RUN_ID", "TRACE_BENCH_JOB_ID")
_CURVE_SCORES = ("step", "n_evals", "llm_calls", "score", "best_score")


@dataclass
class JobOutcome:
    """A finished job: its spec, record and directory (a ``trace_bench.store.JobStore``)."""

    spec: Any
    result: Any
    job: Any

    def curve(self) -> list[dict[str, Any]]:
        """The curve's rows (``step``, ``score``, ... as numbers; None for an empty cell)."""
        return [row.model_dump(exclude={"schema_version"}) for row in self.job.read_curve()]

    def score_curve(self) -> list[tuple[Any, ...]]:
        """The curve without timing or token columns (those legitimately differ between runs)."""
        return [tuple(row[c] for c in _CURVE_SCORES) for row in self.curve()]

    def events(self) -> list[dict[str, Any]]:
        """The job's events as mappings (every field of the event's model)."""
        return [event.model_dump(mode="json") for event in self.job.events()]


@contextlib.contextmanager
def _job_sandbox() -> Iterator[None]:
    """Undo what a job body does to its (normally dedicated) process: env vars, the current LLM
    session and opto's LLM factory."""
    from trace_bench.runner.job.body import prepare_process

    prepare_process()  # before opto is imported here: it defers litellm and keeps it offline
    import opto.utils.llm as opto_llm

    import trace_bench.llm.current as current

    saved_env = {name: os.environ.get(name) for name in _JOB_ENV}
    saved_llm, saved_session = opto_llm.LLM, current.get_session()
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            yield
    finally:
        opto_llm.LLM = saved_llm
        current.set_session(saved_session)
        for name, value in saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def run_trainer(trainer_id: str, runs_dir: Path, *, task: str = DEFAULT_TASK,
                params: Mapping[str, Any] | None = None, seed: int = 1,
                budget: Mapping[str, Any] | None = None, optimizer: str | None = None,
                optimizer_kwargs: Mapping[str, Any] | None = None,
                eval_kwargs: Mapping[str, Any] | None = None, run_name: str = "contract") -> JobOutcome:
    """Run one stub-mode job of ``trainer_id`` on ``task`` and return its outcome."""
    from trace_bench.config import parse_config
    from trace_bench.matrix.expand import expand_matrix
    from trace_bench.registry.tasks import TaskCatalog
    from trace_bench.runner.job.body import run_job
    from trace_bench.store.run_store import RunStore

    entry: dict[str, Any] = {"id": trainer_id, "params_variants": [dict(params or {})], "logger": "none"}
    if optimizer:
        entry["optimizer"] = optimizer
    if optimizer_kwargs:
        entry["optimizer_kwargs"] = dict(optimizer_kwargs)
    config: dict[str, Any] = {"tasks": [{"id": task, "eval_kwargs": dict(eval_kwargs or {})}],
                              "trainers": [entry], "seeds": [seed], "mode": "stub"}
    if budget:
        config["budget"] = dict(budget)
    (spec,) = expand_matrix(parse_config(config), TaskCatalog.create())
    job = RunStore(Path(runs_dir) / run_name).job(spec.job_id)
    with _job_sandbox():
        result = run_job(spec, job, run_id=run_name)
    return JobOutcome(spec, result, job)


def _assert_finished(outcome: JobOutcome, allowed: tuple[str, ...] = ("ok",)) -> None:
    result = outcome.result
    assert result.status in allowed, (
        f"{result.spec.trainer} on {result.spec.task}: status {result.status!r} (expected {allowed}): {result.error}\n"
        f"{result.traceback or ''}")


def check_curve(outcome: JobOutcome) -> None:
    """curve.csv is the record: the initial row, one row per reported step numbered 1..n_steps, and a
    last row at the job's total trainer-phase spend (``final`` when training ended normally,
    ``harness_final`` after a stop); the job's best score is the best its curve shows."""
    rows = outcome.curve()
    result = outcome.result
    n_steps = result.n_steps
    assert len(rows) == n_steps + 2, f"curve has {len(rows)} rows for {n_steps} steps (expected n_steps + 2)"
    assert [int(row["step"]) for row in rows] == [*range(n_steps + 1), n_steps], "curve steps are not 0..n_steps, n"
    kinds = [row["kind"] for row in rows]
    last = "final" if result.status == Status.OK else "harness_final"
    assert kinds == ["initial", *["step"] * n_steps, last], f"curve kinds {kinds}"
    assert (int(rows[-1]["llm_calls"]), int(rows[-1]["tokens"])) == (result.llm_calls, result.total_tokens), \
        "the curve's last row is not at the job's total trainer-phase spend"
    bests = [float(row["best_score"]) for row in rows if row["best_score"] not in ("", None)]
    assert result.score_best is None or (bests and max(bests) == result.score_best), \
        f"score_best {result.score_best} is not the best the curve shows ({bests})"


def check_restorable(outcome: JobOutcome, tolerance: float = 1e-9) -> None:
    """Values in best_state.yaml, applied to a freshly built problem, score ``score_best`` again."""
    from trace_bench.llm.factory import build_session
    from trace_bench.runner.job.measure import Measurer
    from trace_bench.runner.job.problem import load_problem
    from trace_bench.trainers.state import trainable_parameters

    spec, result = outcome.spec, outcome.result
    saved = outcome.job.read_state("best")
    assert saved is not None, "no best_state.yaml"
    state = [entry.value for entry in sorted(saved.parameters, key=lambda e: e.index)]
    problem = load_problem(spec)
    parameters = trainable_parameters(problem.param)
    session = build_session(mode=spec.mode, llm=spec.llm, budget=None, seed=spec.seed,
                            stub_candidates=problem.stub_candidates, stub_answers=problem.stub_answers)
    score, _ = Measurer(problem, parameters, session).selection(state)
    assert score is not None and result.score_best is not None, "no score to compare"
    assert math.isclose(score, result.score_best, rel_tol=0, abs_tol=tolerance), (
        f"best_state.yaml re-applied scores {score!r}, results say score_best={result.score_best!r}")


def check_determinism(trainer_id: str, runs_dir: Path, *, task: str = DEFAULT_TASK,
                      params: Mapping[str, Any] | None = None, seeds: tuple[int, ...] = (1, 2, 3),
                      expect_seed_variation: bool | None = None) -> JobOutcome:
    """Same seed -> identical curve; across ``seeds``, some curve differs.  Returns the first run.

    ``expect_seed_variation`` defaults to whether the trainer uses an optimizer (a do-nothing
    baseline is the same under every seed).
    """
    from trace_bench.registry.trainers import resolve_trainer

    first = run_trainer(trainer_id, runs_dir, task=task, params=params, seed=seeds[0], run_name="seed-a")
    again = run_trainer(trainer_id, runs_dir, task=task, params=params, seed=seeds[0], run_name="seed-b")
    _assert_finished(first)
    _assert_finished(again)
    assert first.score_curve() == again.score_curve(), (
        f"{trainer_id}: seed {seeds[0]} gave two different curves:\n"
        f"{first.score_curve()}\n{again.score_curve()}")
    if expect_seed_variation is None:
        expect_seed_variation = bool(getattr(resolve_trainer(trainer_id).cls, "uses_optimizer", True))
    if expect_seed_variation and len(seeds) > 1:
        curves = {tuple(first.score_curve())}
        for seed in seeds[1:]:
            other = run_trainer(trainer_id, runs_dir, task=task, params=params, seed=seed,
                                run_name=f"seed-{seed}")
            _assert_finished(other)
            curves.add(tuple(other.score_curve()))
        assert len(curves) > 1, f"{trainer_id}: seeds {seeds} all gave the same curve; is ctx.rng used?"
    return first


def check_budget(trainer_id: str, runs_dir: Path, *, task: str = DEFAULT_TASK,
                 params: Mapping[str, Any] | None = None, llm_calls: int = 5) -> JobOutcome:
    """With ``budget: {llm_calls: N}`` the trainer makes at most N training-phase calls and stops cleanly."""
    outcome = run_trainer(trainer_id, runs_dir, task=task, params=params, budget={"llm_calls": llm_calls},
                          run_name="budget")
    _assert_finished(outcome, ("ok", "budget_exhausted"))
    calls = [e for e in outcome.events()
             if e.get("type") == "llm_call" and e.get("phase") != "measure" and not e.get("error")]
    assert len(calls) <= llm_calls, f"{trainer_id}: {len(calls)} training LLM calls, budget {llm_calls}"
    assert outcome.result.budget_spent.llm_calls <= llm_calls
    check_curve(outcome)
    return outcome


def check_trainer(trainer_id: str, tmp_path: Path, *, task: str = DEFAULT_TASK,
                  params: Mapping[str, Any] | None = None, budget_params: Mapping[str, Any] | None = None,
                  expect_seed_variation: bool | None = None) -> None:
    """Every contract check for one trainer; ``params`` should keep the run short (a few steps)."""
    outcome = check_determinism(trainer_id, tmp_path, task=task, params=params,
                                expect_seed_variation=expect_seed_variation)
    check_curve(outcome)
    check_restorable(outcome)
    check_budget(trainer_id, tmp_path, task=task, params=params if budget_params is None else budget_params)


def trainer_contract_test(*trainer_ids: str, task: str = DEFAULT_TASK,
                          params: Mapping[str, Any] | None = None) -> Any:
    """A pytest test function running :func:`check_trainer` for each id, for a plugin's test suite::

        from trace_bench.testing import trainer_contract_test
        test_contract = trainer_contract_test("MyTrainer", params={"num_steps": 2})
    """
    import pytest

    @pytest.mark.parametrize("trainer_id", trainer_ids)
    def test_trainer_contract(trainer_id: str, tmp_path: Path) -> None:
        check_trainer(trainer_id, tmp_path, task=task, params=params)

    return test_trainer_contract
