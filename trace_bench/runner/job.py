"""The job body: one (task, trainer, params variant, seed) cell, run inside its own process.

Every executor (local process pool, Ray) calls :func:`run_job`; nothing here knows how it was
started.  Progress is written as it happens (events, curve, state history, best state), so a job
that is killed still leaves its best-so-far state and curve behind.
"""

from __future__ import annotations

import csv
import os
import random
import threading
import time
import traceback
from pathlib import Path
from typing import Any

import yaml

from trace_bench.matrix.expand import JobSpec
from trace_bench.store.atomic import write_json, write_text
from trace_bench.store.events import EventLog, utc_now
from trace_bench.store.run_dir import JobPaths
from trace_bench.store.schemas import CURVE_COLUMNS, JobResult


class JobFailure(Exception):
    """A job-level failure with a status other than 'failed' (e.g. skipped)."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status


def seed_everything(seed: int) -> None:
    random.seed(seed)
    try:
        import numpy as np

        np.random.seed(seed % (2**32))
    except ImportError:
        pass


def prepare_process() -> None:
    """Process-wide setup for a job process: deferred heavy imports, telemetry off, compat names."""
    from trace_bench.compat import fast_inspect
    from trace_bench.runtime import configure_environment

    configure_environment()
    fast_inspect.install()
    from trace_bench.compat.opto_shim import install

    install()


class Heartbeat:
    """Writes ``heartbeat.json`` (pid, time) every few seconds while the job runs, so a driver or
    a person can tell a live job from a lost one, and find its process."""

    def __init__(self, path: Path, interval_s: float = 2.0) -> None:
        self.path = path
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="heartbeat", daemon=True)

    def _beat(self) -> None:
        try:
            write_json(self.path, {"pid": os.getpid(), "ts": utc_now(), "monotonic": time.monotonic()},
                       durable=False)
        except OSError:
            pass

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._beat()

    def start(self) -> None:
        self._beat()
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()


class CurveWriter:
    """curve.csv: the fixed columns, then ``obj_<metric>`` per objective of a multi-objective task
    (the reported state's mean on the selection split, as the guide returned it)."""

    def __init__(self, path: Path, objectives: list[str] | None = None) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._handle = open(path, "w", encoding="utf-8", newline="")  # noqa: SIM115
        self._writer = csv.writer(self._handle, lineterminator="\n")
        self._objectives = list(objectives or [])
        self._writer.writerow([*CURVE_COLUMNS, *(f"obj_{name}" for name in self._objectives)])
        self._handle.flush()

    def row(self, values: dict[str, Any], score_dict: dict[str, float] | None = None) -> None:
        objectives = [(score_dict or {}).get(name) for name in self._objectives]
        cells = [values.get(c) for c in CURVE_COLUMNS] + objectives
        self._writer.writerow(["" if value is None else value for value in cells])
        self._handle.flush()

    def close(self) -> None:
        self._handle.close()


def _state_yaml(parameters: list[Any], state: list[Any], score: float | None, **extra: Any) -> str:
    from trace_bench.trainers.params import describe

    data = {**describe(parameters, state), "score": score, **extra}
    # libyaml's emitter writes the same text as the pure-Python one, five times faster
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump(data, Dumper=dumper, sort_keys=False, allow_unicode=True)


def run_job(spec: JobSpec, paths: JobPaths, *, run_id: str, carried: dict[str, float] | None = None,
            attempt: int = 1) -> JobResult:
    """Run one job to completion and return its record (never raises for job-level failures)."""
    started_wall = time.time()
    started = time.monotonic()
    paths.artifacts.mkdir(parents=True, exist_ok=True)
    events = EventLog(paths.events)
    result = JobResult(run_id=run_id, job_id=spec.job_id, task=spec.task, suite=spec.suite, trainer=spec.trainer,
                       params=spec.params, params_label=spec.params_label, seed=spec.seed, mode=spec.mode,
                       llm_model=str(spec.llm_identity.get("model") or spec.mode), status="failed",
                       started_at=utc_now(), attempt=attempt)
    events.write({"type": "job_started", "job_id": spec.job_id, "task": spec.task, "trainer": spec.trainer,
                  "seed": spec.seed, "attempt": attempt})
    session = None
    # Context for task code that needs it (a guide writing per-job artifacts, a tool that must not
    # run in stub mode).  Each job is its own process, so this never leaks into another job.
    os.environ["TRACE_BENCH_MODE"] = spec.mode
    os.environ["TRACE_BENCH_JOB_DIR"] = str(paths.root)
    os.environ["TRACE_BENCH_RUN_ID"] = run_id
    os.environ["TRACE_BENCH_JOB_ID"] = spec.job_id
    heartbeat = Heartbeat(paths.root / "heartbeat.json")
    heartbeat.start()
    try:
        prepare_process()
        seed_everything(spec.seed)
        session = _run(spec, paths, events, result, carried or {})
    except JobFailure as exc:
        result.status, result.error = exc.status, str(exc)
    except MemoryError:
        result.status, result.error = "oom", "out of memory (job_memory_mb limit reached)"
    except Exception as exc:  # failures are data: recorded, never raised through the matrix
        result.status = _status_of(exc)
        result.error = f"{type(exc).__name__}: {exc}"
        result.traceback = traceback.format_exc()
    finally:
        heartbeat.stop()
        if session is not None:
            _fill_usage(result, session)
        result.time_seconds = round(time.monotonic() - started, 6)
        result.finished_at = utc_now()
        events.write({"type": "job_finished", "status": result.status, "score_best": result.score_best,
                      "error": result.error[:500], "time_seconds": result.time_seconds,
                      "wall_started": started_wall})
        events.close()
    return result


def _status_of(exc: BaseException) -> str:
    """Exceptions may name their job status (e.g. a suite's InfraError -> ``infra_error``)."""
    status = getattr(exc, "job_status", None)
    return status if isinstance(status, str) and status else "failed"


def _fill_usage(result: JobResult, session: Any) -> None:
    totals = session.totals
    result.llm_calls = totals.llm_calls
    result.cache_hits = totals.cache_hits
    result.prompt_tokens = totals.prompt_tokens
    result.completion_tokens = totals.completion_tokens
    result.total_tokens = totals.total_tokens
    result.tokens_estimated = totals.estimated
    result.cost_usd = round(totals.cost_usd, 10)
    result.llm_errors = totals.errors
    result.llm_retries = totals.retries
    result.usage_by_role = {role: vars(usage) for role, usage in totals.by_role.items()}
    result.budget_spent = session.budget_spent()


def _run(spec: JobSpec, paths: JobPaths, events: EventLog, result: JobResult, carried: dict[str, float]) -> Any:
    from trace_bench.llm.budget import Spent
    from trace_bench.llm.errors import BudgetExhausted
    from trace_bench.llm.factory import build_session, stub_policy_of
    from trace_bench.runner.measure import Measurer
    from trace_bench.runner.problem_loader import load_problem
    from trace_bench.trainers.archive import BestStates, objective_names
    from trace_bench.trainers.context import StepReport, TrainerContext
    from trace_bench.trainers.params import snapshot, trainable_parameters

    session = build_session(mode=spec.mode, llm=spec.llm, budget=spec.budget, seed=spec.seed, events=events.write,
                            carried=Spent(**{k: carried.get(k, 0) for k in ("llm_calls", "tokens", "usd", "wall_s")}),
                            job_id=spec.job_id, cache_path=str(paths.root.parent.parent / "llm_cache.sqlite"))
    from trace_bench.llm.current import set_session
    from trace_bench.llm.limiter import attach_limiter, make_limiter

    set_session(session)
    if spec.mode == "real":  # run-wide bound on concurrent requests: lock-file slots in the run dir
        attach_limiter(make_limiter(paths.root.parent.parent, (spec.llm or {}).get("max_concurrency")))
    _route_opto_llm(session)
    problem = load_problem(spec)
    policy = stub_policy_of(session)
    if policy is not None:
        policy.candidates = list(problem.stub_candidates)
    _share_context(problem, spec, paths)
    parameters = trainable_parameters(problem.param)
    if not parameters:
        raise JobFailure("failed", "no_trainable_parameters")
    result.selection_split = problem.selection_split
    measurer = Measurer(problem, parameters, session)
    initial = snapshot(parameters)
    initial_score, initial_dict = measurer.selection(initial)
    result.score_initial = initial_score
    write_text(paths.state_file("initial"), _state_yaml(parameters, initial, initial_score), durable=False)
    progress = BestStates(measurer.objective)
    progress.offer(initial_score, initial, initial_dict)
    curve = CurveWriter(paths.curve, objective_names(initial_dict))
    history = EventLog(paths.state_history)
    t0 = time.monotonic()

    def curve_row(step: int, score: float | None, n_evals: int, score_dict: dict[str, float]) -> None:
        spent = session.totals
        curve.row({"step": step, "wall_s": round(time.monotonic() - t0, 6), "n_evals": n_evals,
                   "llm_calls": spent.llm_calls, "tokens": spent.total_tokens, "usd": round(spent.cost_usd, 10),
                   "score": score, "best_score": progress.best_score}, score_dict)

    curve_row(0, initial_score, 0, initial_dict)
    history.write({"kind": "initial", "step": 0, "score": initial_score, "score_dict": initial_dict,
                   "state": _plain_state(parameters, initial)})

    console = spec.logger != "none"

    def on_step(report: StepReport) -> None:
        improved = progress.offer(report.score, report.state, report.score_dict, step=report.step)
        if console:
            print(f"[Step {report.step}] score: {report.score} best: {progress.best_score} "
                  f"llm_calls: {session.totals.llm_calls}", flush=True)
        progress.steps = report.step
        curve_row(report.step, report.score, report.n_evals, report.score_dict)
        events.write({"type": "step", "step": report.step, "score": report.score, "best_score": progress.best_score,
                      "score_dict": report.score_dict,
                      "n_evals": report.n_evals, "llm_calls": session.totals.llm_calls,
                      "tokens": session.totals.total_tokens, "usd": session.totals.cost_usd,
                      "wall_s": round(report.wall_s, 6), **({"info": report.info} if report.info else {})})
        if report.accepted:
            history.write({"kind": "step", "step": report.step, "score": report.score,
                           "score_dict": report.score_dict, "state": _plain_state(parameters, report.state)})
        if improved and progress.best_state is not None:
            write_text(paths.state_file("best"), _state_yaml(parameters, progress.best_state, progress.best_score,
                                                             step=progress.best_step), durable=False)

    from trace_bench.registry.trainers import resolve_trainer

    info = resolve_trainer(spec.trainer)
    trainer_cls = info.cls
    params = trainer_cls.Params.model_validate(spec.trainer_kwargs)
    context = TrainerContext(problem, session=session, seed=spec.seed, optimizer=spec.optimizer,
                             optimizer_kwargs=spec.optimizer_kwargs, num_threads=params.num_threads,
                             on_step=on_step, selection_score=measurer.selection)
    trainer = trainer_cls(context, params)
    status, error = "ok", ""
    try:
        trainer.train()
    except BudgetExhausted as exc:
        status, error = "budget_exhausted", str(exc)
        spent = session.budget_spent()  # settled: calls in flight when the stop came are counted
        events.write({"type": "budget_exhausted", "resource": exc.resource, "limit": exc.limit,
                      "spent": spent.get(exc.resource, exc.spent)})
    except MemoryError:
        raise
    except Exception as exc:
        status, error = _status_of(exc), f"training_error: {type(exc).__name__}: {exc}"
        cause = getattr(session, "last_error", None)
        if cause is not None and not isinstance(exc, type(cause)):
            # optimizers such as OptoPrimeMulti swallow LLM errors and fail later with an unrelated
            # IndexError; the LLM error is the cause a user needs to see
            error += f" (after LLM error {type(cause).__name__}: {cause})"
        result.traceback = traceback.format_exc()
    final = snapshot(parameters)
    final_score, final_dict = measurer.selection(final)
    progress.offer(final_score, final, final_dict)
    write_text(paths.state_file("final"), _state_yaml(parameters, final, final_score), durable=False)
    best_state = progress.best_state if progress.best_state is not None else final
    write_text(paths.state_file("best"), _state_yaml(parameters, best_state, progress.best_score), durable=False)
    history.write({"kind": "final", "step": progress.steps, "score": final_score, "score_dict": final_dict,
                   "state": _plain_state(parameters, final)})
    history.close()
    curve.close()
    result.status, result.error = status, error
    result.score_final = final_score
    result.score_best = progress.best_score
    result.score_dict_best = progress.best_score_dict
    result.best_state_failed = measurer.failed(best_state)
    result.n_steps = progress.steps
    result.n_evals = context.n_evals
    if problem.test_dataset:
        result.score_test = measurer.test(best_state)
    from trace_bench.trainers.params import apply_state

    apply_state(parameters, best_state)
    return session


def _share_context(problem: Any, spec: JobSpec, paths: JobPaths) -> None:
    """Guides of the original Trace-Bench learn their job through ``set_trace_bench_context``."""
    hook = getattr(problem.guide, "set_trace_bench_context", None)
    if callable(hook):
        hook(run_id=os.environ.get("TRACE_BENCH_RUN_ID", ""), job_id=spec.job_id, task_id=spec.task,
             suite=spec.suite, mode=spec.mode, job_dir=str(paths.root), artifacts_dir=str(paths.artifacts),
             tb_dir=str(paths.root / "tb"), runs_dir=str(paths.root.parent.parent.parent))


def _plain_state(parameters: list[Any], state: list[Any]) -> dict[str, Any]:
    from trace_bench.trainers.params import describe

    return describe(parameters, state)


def _route_opto_llm(session: Any) -> None:
    """Agents that build ``opto.utils.llm.LLM()`` inside ``forward`` get the job's agent client."""
    import opto.utils.llm as opto_llm

    client = session.client("agent")

    def job_llm(*args: Any, **kwargs: Any) -> Any:
        return client

    opto_llm.LLM = job_llm  # this process runs exactly one job: no cross-job leak


def write_job_meta(paths: JobPaths, spec: JobSpec, run_id: str, attempt: int = 1) -> None:
    """``job_meta.json``: the job's full specification, written by the driver before each attempt."""
    write_json(paths.meta, {"schema_version": 1, "run_id": run_id, "attempt": attempt, **spec.to_dict()},
               durable=False)
