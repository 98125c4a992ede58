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
from typing import Any

from trace_bench import sandbox
from trace_bench._util.imports import after_import
from trace_bench.runner.job.audit import DenialWatch, audit_job
from trace_bench.runner.job.failures import error_of
from trace_bench.runner.job.recorder import JobRecorder
from trace_bench.runner.job.setup import JobSetup, announce_job, set_up_job
from trace_bench.runner.job.training import fill_usage, finalise, train
from trace_bench.store.events import utc_now
from trace_bench.store.heartbeat import HeartbeatThread
from trace_bench.store.job_store import JobStore
from trace_bench.store.live_result import LiveResult
from trace_bench.store.models import JobFinished, JobResult, JobSpec, JobStarted, Spend
from trace_bench.store.status import Status


def job_body(args: dict[str, Any], job: JobStore) -> dict[str, Any]:
    """The body executors run (``trace_bench.execution.job_process.JobBody``): ``args`` as built
    by the driver (``trace_bench.runner.driver.launch_args``); returns the job's record as JSON."""
    spec = JobSpec.model_validate(args["spec"])
    carried = Spend.model_validate(args["carried"]) if args.get("carried") else None
    measured = Spend.model_validate(args["carried_measure"]) if args.get("carried_measure") else None
    record = run_job(spec, job, run_id=args["run_id"], carried=carried, attempt=args.get("attempt", 1),
                     carried_measure=measured)
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
            attempt: int = 1, carried_measure: Spend | None = None) -> JobResult:
    """Run one job to completion and return its record (never raises for job-level failures): the
    job fills its live record as it goes (:class:`LiveResult`) and freezes it once, at its end.
    ``carried``/``carried_measure``: what earlier attempts spent training and measuring."""
    started_wall = time.time()
    started = time.monotonic()
    job.make_dirs()
    events = job.open_events()
    live = LiveResult(spec, run_id, attempt, carried_measure=carried_measure)
    live.set(started_at=utc_now())
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
        live.resolved = setup.resolution
        _train_and_finalise(spec, job, events, setup, live)
    except Exception as exc:  # failures are data: recorded, never raised through the matrix
        live.fail(error_of(exc, live.phase))
    finally:
        heartbeat.stop()
        live.set(sandbox=",".join(sandbox.used_modes()))
        watch.close()
        record = _finish(live, job, setup, started, watch)
        events.write(JobFinished(status=record.status, score_best=record.score_best, error=record.error[:500],
                                 time_seconds=record.time_seconds, wall_started=started_wall))
        events.close()
    return record


def declared_range(score_range: tuple[float, float] | None) -> list[float | None] | None:
    """A task's declared score range as the record keeps it: an infinite side is null (strict JSON)."""
    if score_range is None:
        return None
    return [value if math.isfinite(value) else None for value in score_range]


def _finish(live: LiveResult, job: JobStore, setup: JobSetup | None, started: float,
            watch: DenialWatch) -> JobResult:
    """What every job does at its end, however it ended: its audit, its spend (calls a thread left in
    flight included: the provider bills them), its error printed whole to stdout.log (where a user
    looks first), its times; then its record, frozen."""
    audit_job(job, setup.problem if setup is not None else None, live, watch)
    if setup is not None:
        setup.session.charge_cut_off()
        fill_usage(live, setup.session)
        if setup.problem.score_guide_errors:
            live.set(guide_errors_scored=setup.problem.guide_failures.scored)
        for sink in (setup.session.journal, setup.session.transcript):
            if sink is not None:
                sink.close()
    if live.status == Status.TASK_ERROR:
        live.clear_scores()
    if live.error is not None and live.error.traceback and live.status != Status.SKIPPED:
        print(f"job {live.status}: {live.error.message}\n{live.error.traceback.rstrip()}", file=sys.stderr,
              flush=True)
    live.set(time_seconds=round(time.monotonic() - started, 6), finished_at=utc_now())
    return live.freeze()


def _initial_selection(initial: Any, setup: JobSetup) -> tuple[float | None, dict[str, float]]:
    """The initial state's selection score, charged to the budget; a budget too small for it leaves
    the initial state unscored (the trainer's first call then meets the spent budget)."""
    from trace_bench.llm.errors import BudgetExhausted as BudgetExhaustedError

    try:
        return setup.measurer.selection(initial)
    except BudgetExhaustedError:
        return None, {}


def _train_and_finalise(spec: JobSpec, job: JobStore, events: Any, setup: JobSetup, live: LiveResult) -> None:
    from trace_bench.trainers.state import snapshot

    live.phase = "train"
    live.set(selection_split=setup.problem.selection_split, score_range=declared_range(setup.problem.score_range))
    recorder = JobRecorder(job, events, setup.session, setup.parameters, objective=setup.measurer.objective,
                           console=spec.logger != "none", carried_measure=live.carried_measure)
    try:
        initial = snapshot(setup.parameters)
        initial_score, initial_dict = _initial_selection(initial, setup)
        live.set(score_initial=initial_score)
        recorder.start(initial, initial_score, initial_dict)
        outcome = train(spec, setup, recorder, events)
        live.phase = "finalise"
        finalise(live, setup, recorder, outcome)
    finally:
        recorder.close()
