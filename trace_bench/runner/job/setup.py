"""Session setup of a job: its LLM session, its problem, its trainable parameters, its measurer.

Everything here happens inside the job's own process, which runs exactly one job, so process-wide
settings (the current session, ``opto``'s LLM factory, the job's environment variables) never
leak into another job.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from trace_bench import sandbox
from trace_bench.runner.job.failures import JobFailure
from trace_bench.runner.job.measure import Measurer
from trace_bench.store.events import EventLog
from trace_bench.store.job_store import JobStore
from trace_bench.store.layout import llm_cache_file
from trace_bench.store.models import JobSpec, Resolution, Spend
from trace_bench.store.status import Status


@dataclass
class JobSetup:
    """What the training and the recorder of one job share."""

    session: Any
    problem: Any
    parameters: list[Any]
    measurer: Measurer
    resolution: Resolution


def announce_job(spec: JobSpec, job: JobStore, run_id: str) -> None:
    """Context for task code that needs it (a guide writing per-job artifacts, a tool that must
    not run in stub mode, the sandbox that may fall back to the weak mode only where allowed)."""
    os.environ["TRACE_BENCH_MODE"] = spec.mode
    os.environ["TRACE_BENCH_JOB_DIR"] = str(job.root)
    os.environ["TRACE_BENCH_RUN_ID"] = run_id
    os.environ["TRACE_BENCH_JOB_ID"] = spec.job_id
    sandbox.allow_weak(spec.sandbox == "weak")


def set_up_job(spec: JobSpec, job: JobStore, events: EventLog, carried: Spend) -> JobSetup:
    from trace_bench.llm.current import set_session
    from trace_bench.llm.factory import build_session, stub_policy_of
    from trace_bench.llm.limiter import attach_limiter, make_limiter
    from trace_bench.runner.job.problem import load_problem
    from trace_bench.trainers.state import trainable_parameters

    session = build_session(mode=spec.mode, llm=spec.llm, budget=spec.budget, seed=spec.seed, events=events.write,
                            carried=carried, job_id=spec.job_id,
                            cache_path=str(llm_cache_file(job.run_root)),
                            journal=job.open_spend_journal(durable=spec.mode == "real"))
    if spec.llm.transcripts:
        session.transcript = job.open_transcript(max_chars=spec.llm.transcript_max_chars,
                                                 max_mb=spec.llm.transcript_max_mb)
    set_session(session)
    if spec.mode == "real":  # run-wide bound on concurrent requests: lock-file slots in the run dir
        attach_limiter(make_limiter(job.run_root, spec.llm.max_concurrency))
    _route_opto_llm(session)
    problem = load_problem(spec)
    policy = stub_policy_of(session)
    if policy is not None:
        policy.candidates = list(problem.stub_candidates)
        policy.answers = dict(problem.stub_answers)
    _share_context(problem, spec, job)
    parameters = trainable_parameters(problem.param)
    if not parameters:
        raise JobFailure(Status.FAILED, "no_trainable_parameters")
    return JobSetup(session, problem, parameters, Measurer(problem, parameters, session), resolve(spec, problem))


def resolve(spec: JobSpec, problem: Any) -> Resolution:
    """What the job really uses, computed once, here, when its problem is built: the optimizer's
    canonical name (none for a trainer that uses no opto optimizer and was given none), the task's
    optimizer kwargs updated with the config's (as the trainer context merges them), the guide's class."""
    from trace_bench.store import jsonio
    from trace_bench.trainers.optimizers import canonical_optimizer

    guide = getattr(problem, "guide", None)
    optimizer = canonical_optimizer(spec.optimizer) if spec.optimizer or spec.uses_optimizer else None
    return Resolution(trainer_kwargs=spec.trainer_kwargs, optimizer=optimizer,
                      optimizer_kwargs=jsonio.plain({**problem.optimizer_kwargs, **spec.optimizer_kwargs}),
                      guide=None if guide is None else f"{type(guide).__module__}.{type(guide).__qualname__}",
                      logger=spec.logger)


def _route_opto_llm(session: Any) -> None:
    """Agents that build ``opto.utils.llm.LLM()`` inside ``forward`` get the job's agent client."""
    import opto.utils.llm as opto_llm

    client = session.client("agent")

    def job_llm(*args: Any, **kwargs: Any) -> Any:
        return client

    opto_llm.LLM = job_llm  # this process runs exactly one job: no cross-job leak


def _share_context(problem: Any, spec: JobSpec, job: JobStore) -> None:
    """Guides of the original Trace-Bench learn their job through ``set_trace_bench_context``."""
    hook = getattr(problem.guide, "set_trace_bench_context", None)
    if callable(hook):
        hook(run_id=os.environ.get("TRACE_BENCH_RUN_ID", ""), job_id=spec.job_id, task_id=spec.task,
             suite=spec.suite, mode=spec.mode, job_dir=str(job.root), artifacts_dir=str(job.artifacts_dir),
             tb_dir=str(job.tensorboard_dir), runs_dir=str(job.runs_dir))
