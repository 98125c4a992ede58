"""The job body: one (task, trainer, params variant, seed) cell, run inside its own process.

Every executor runs :func:`job_body` through its one job-process wrapper
(``trace_bench.execution.job_process``); nothing here knows how the process was started.  The
body is three steps: session setup (:mod:`.setup`), training with a recorder that writes
progress as it happens (:mod:`.recorder`), and finalisation (:mod:`.training`).
"""

from __future__ import annotations

import math
import random
import sys
import time
import traceback
from typing import Any

from trace_bench import sandbox
from trace_bench._util.imports import after_import
from trace_bench.runner.job.audit import DenialWatch, audit_job
from trace_bench.runner.job.failures import JobFailure, status_of
from trace_bench.runner.job.recorder import JobRecorder
from trace_bench.runner.job.setup import JobSetup, announce_job, set_up_job
from trace_bench.runner.job.training import fill_usage, finalise, train
from trace_bench.store.events import utc_now
from trace_bench.store.job_store import HeartbeatThread, JobStore
from trace_bench.store.models import JobFinished, JobResult, JobSpec, JobStarted, Spend
from trace_bench.store.models.job import SCORE_FIELDS
from trace_bench.store.status import Status


def job_body(args: dict[str, Any], job: JobStore) -> dict[str, Any]:
    """The body executors run (``trace_bench.execution.job_process.JobBody``): ``args`` as built
    by the driver (``trace_bench.runner.driver.launch_args``); returns the job's record as JSON."""
    spec = JobSpec.model_validate(args["spec"])
    carried = Spend.model_validate(args["carried"]) if args.get("carried") else None
    record = run_job(spec, job, run_id=args["run_id"], carried=carried, attempt=args.get("attempt", 1))
    return record.record()


def seed_everything(seed: int) -> None:
    """Seed ``random`` and numpy's global generator; numpy when it is first imported if the job
    has not imported it yet (a job of a numpy-free task does not pay its import to seed it)."""
    random.seed(seed)
    if "numpy.random" in sys.modules:
        sys.modules["numpy.random"].seed(seed % (2**32))
    else:
        after_import("numpy.random", lambda module: module.seed(seed % (2**32)))


def prepare_process() -> None:
    """Process-wide setup for a job process: deferred heavy imports, telemetry off, compat names."""
    from trace_bench._util import fast_inspect
    from trace_bench._util.runtime import configure_environment
    from trace_bench.runner.job.opto_names import install
    from trace_bench.tasks import code_nodes

    configure_environment()
    fast_inspect.install()
    install()
    code_nodes.install()  # optimizer-written code of trainable functions runs in the sandbox


def run_job(spec: JobSpec, job: JobStore, *, run_id: str, carried: Spend | None = None,
            attempt: int = 1) -> JobResult:
    """Run one job to completion and return its record (never raises for job-level failures)."""
    started_wall = time.time()
    started = time.monotonic()
    job.make_dirs()
    events = job.open_events()
    result = JobResult.planned(spec, run_id, attempt)
    result.started_at = utc_now()
    events.write(JobStarted(job_id=spec.job_id, task=spec.task, trainer=spec.trainer, seed=spec.seed,
                            attempt=attempt))
    announce_job(spec, job, run_id)
    heartbeat = HeartbeatThread(job)
    heartbeat.start()
    watch = DenialWatch(events)
    setup: JobSetup | None = None
    try:
        prepare_process()
        seed_everything(spec.seed)
        setup = set_up_job(spec, job, events, carried or Spend())
        result.resolved = setup.resolution
        _train_and_finalise(spec, job, events, setup, result)
    except JobFailure as exc:
        result.status, result.error = exc.status, str(exc)
        result.traceback = traceback.format_exc()
    except MemoryError:
        result.status, result.error = Status.OOM, "out of memory (job_memory_mb limit reached)"
        result.traceback = traceback.format_exc()
    except Exception as exc:  # failures are data: recorded, never raised through the matrix
        result.status = status_of(exc)
        prefix = f"{result.status}: " if result.status == Status.TASK_ERROR else f"{type(exc).__name__}: "
        result.error = f"{prefix}{exc}"
        # a broken guide's own traceback says where the task failed; the harness's frames add nothing
        result.traceback = getattr(exc, "traceback_text", "") or traceback.format_exc()
    finally:
        heartbeat.stop()
        result.sandbox = ",".join(sandbox.used_modes())
        watch.close()
        audit_job(job, setup.problem if setup is not None else None, result, watch)
        if setup is not None:
            setup.session.charge_cut_off()  # calls a thread left in flight: the provider bills them
            fill_usage(result, setup.session)
            if setup.problem.score_guide_errors:
                result.guide_errors_scored = setup.problem.guide_failures.scored
            for sink in (setup.session.journal, setup.session.transcript):
                if sink is not None:
                    sink.close()
        if result.status == Status.TASK_ERROR:
            clear_scores(result)
        if result.traceback and result.status != Status.SKIPPED:
            # stdout.log is where a user looks first: the error and its traceback, whole
            print(f"job {result.status}: {result.error}\n{result.traceback.rstrip()}", file=sys.stderr, flush=True)
        result.time_seconds = round(time.monotonic() - started, 6)
        result.finished_at = utc_now()
        events.write(JobFinished(status=result.status, score_best=result.score_best, error=result.error[:500],
                                 time_seconds=result.time_seconds, wall_started=started_wall))
        events.close()
    return result


def declared_range(score_range: tuple[float, float] | None) -> list[float | None] | None:
    """A task's declared score range as the record keeps it: an infinite side is null (strict JSON)."""
    if score_range is None:
        return None
    return [value if math.isfinite(value) else None for value in score_range]


def clear_scores(result: JobResult) -> None:
    """A job whose task failed has no score of any kind (its curve keeps what happened before)."""
    for name in SCORE_FIELDS:
        setattr(result, name, None)
    result.score_dict_best = {}


def _train_and_finalise(spec: JobSpec, job: JobStore, events: Any, setup: JobSetup, result: JobResult) -> None:
    from trace_bench.trainers.state import snapshot

    result.selection_split = setup.problem.selection_split
    result.score_range = declared_range(setup.problem.score_range)
    recorder = JobRecorder(job, events, setup.session, setup.parameters, objective=setup.measurer.objective,
                           console=spec.logger != "none")
    try:
        initial = snapshot(setup.parameters)
        initial_score, initial_dict = setup.measurer.selection(initial)
        result.score_initial = initial_score
        recorder.start(initial, initial_score, initial_dict)
        outcome = train(spec, setup, recorder, events)
        finalise(result, setup, recorder, outcome)
    finally:
        recorder.close()
