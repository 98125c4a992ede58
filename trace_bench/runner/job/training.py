"""Training and finalisation of a job: run the trainer, then measure and record how it ended.

A trainer's exception ends training, not the job: the final and best states are still measured
and written, and the record carries the error.  A failure of the task itself (its guide raised or
gave a non-finite score, see :mod:`trace_bench.trainers.evaluate`) ends the job ``task_error``
without any score, even when the trainer or a library swallowed the exception.  When training was
stopped (budget, error), the parameters the trainer left are measured and shown as the harness's
(curve row ``harness_final``, ``score_final``) but never credited as the best state
(:mod:`.recorder`).
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from typing import Any

from trace_bench.llm.errors import QuotaExhaustedError, budget_text
from trace_bench.runner.job.failures import exception_text, status_of
from trace_bench.runner.job.recorder import JobRecorder
from trace_bench.runner.job.setup import JobSetup
from trace_bench.runner.job.task_fields import task_report_fields
from trace_bench.store.events import EventLog
from trace_bench.store.models import BudgetExhausted, JobResult, JobSpec, KeyRefusal
from trace_bench.store.status import Status


@dataclass
class TrainingOutcome:
    status: Status = Status.OK
    error: str = ""
    traceback: str = ""
    n_evals: int = 0


def train(spec: JobSpec, setup: JobSetup, recorder: JobRecorder, events: EventLog) -> TrainingOutcome:
    """Build the trainer with its validated knobs and run it; its failure is the outcome's error."""
    from trace_bench.llm.errors import BudgetExhausted as BudgetExhaustedError
    from trace_bench.registry.trainers import resolve_trainer
    from trace_bench.trainers.context import TrainerContext

    trainer_cls = resolve_trainer(spec.trainer).cls
    params = trainer_cls.Params.model_validate(spec.trainer_kwargs)
    context = TrainerContext(setup.problem, session=setup.session, seed=spec.seed, optimizer=spec.optimizer,
                             optimizer_kwargs=spec.optimizer_kwargs, num_threads=params.num_threads,
                             on_step=recorder.on_step, selection_score=setup.measurer.selection)
    trainer = trainer_cls(context, params)
    outcome = TrainingOutcome()
    try:
        trainer.train()
    except BudgetExhaustedError as exc:
        spent = setup.session.budget_spent()  # settled: calls in flight when the stop came are counted
        used = getattr(spent, exc.resource, None)
        used = exc.spent if used is None else used
        # the settled figure, not the one the stopping thread saw while other threads' calls were in
        # flight: the text is then the same in a run and in its replay
        outcome.status = Status.BUDGET_EXHAUSTED
        needed = float(getattr(exc, "needed", 0.0) or 0.0)
        outcome.error = budget_text(exc.resource, exc.limit, used, needed)
        events.write(BudgetExhausted(resource=exc.resource, limit=exc.limit, spent=used, needed=needed))
    except MemoryError:
        raise
    except Exception as exc:
        outcome.status, outcome.error = status_of(exc), f"training_error: {exception_text(exc)}"
        cause = getattr(setup.session, "last_error", None)
        if cause is not None and not isinstance(exc, type(cause)):
            # optimizers such as OptoPrimeMulti swallow LLM errors and fail later with an unrelated
            # IndexError; the LLM error is the cause a user needs to see
            outcome.error += f" (after LLM error {type(cause).__name__}: {cause})"
        outcome.traceback = traceback.format_exc()
    outcome.n_evals = context.n_evals
    task_failure = setup.problem.guide_failures.first
    if task_failure is not None:  # the first one, even if a trainer or a library swallowed it
        outcome.status, outcome.error = Status.TASK_ERROR, f"task_error: {task_failure}"
        outcome.traceback = task_failure.traceback_text
    return outcome


def finalise(result: JobResult, setup: JobSetup, recorder: JobRecorder, outcome: TrainingOutcome) -> None:
    """Measure the final state, write the final and best states, fill the record's scores, and
    leave the live parameters at the best state.  A task error is recorded without any score."""
    from trace_bench.trainers.state import apply_state, snapshot

    result.status, result.error = outcome.status, outcome.error
    if outcome.traceback:
        result.traceback = outcome.traceback
    result.n_steps = recorder.steps
    result.n_evals = outcome.n_evals
    if outcome.status == Status.TASK_ERROR:
        recorder.stop(outcome.n_evals)
        return
    final = snapshot(setup.parameters)
    final_score, final_dict = setup.measurer.selection(final)
    credited = outcome.status == Status.OK  # a stopped trainer never validated what it left
    best_state = recorder.finish(final, final_score, final_dict, credited=credited, n_evals=outcome.n_evals)
    result.score_final = final_score
    result.score_best = recorder.best.score
    result.score_dict_best = recorder.best.score_dict
    result.best_state_failed = setup.measurer.failed(best_state)
    for name, value in task_report_fields(setup.problem, best_state).items():
        setattr(result, name, value)
    if setup.problem.test_dataset:
        result.score_test_last = setup.measurer.test(final)
        result.score_test_best = setup.measurer.test(best_state)
        result.score_test = result.score_test_best
    apply_state(setup.parameters, best_state)


def fill_usage(result: JobResult, session: Any) -> None:
    """The job's LLM usage: the trainer's calls (the ``train`` phase, what the budget counts) as the
    job's cost, earlier attempts' spend included (``carried_*``), the harness's measurement calls
    apart, every role and phase in ``usage_by_role`` (errors and retries of both phases, this
    attempt's), and what its budget counted."""
    totals = session.totals
    train, measure = totals.by_phase["train"], totals.by_phase["measure"]
    carried = session.budget.carried
    result.carried_llm_calls, result.carried_tokens = carried.llm_calls, carried.tokens
    result.carried_cost_usd = round(carried.usd, 10)
    result.llm_calls = train.llm_calls + result.carried_llm_calls
    result.cache_hits = train.cache_hits
    result.prompt_tokens = train.prompt_tokens
    result.completion_tokens = train.completion_tokens
    result.total_tokens = train.total_tokens + result.carried_tokens
    result.tokens_estimated = totals.estimated
    result.cost_usd = round(train.cost_usd + carried.usd, 10)
    result.measure_llm_calls = measure.llm_calls
    result.measure_tokens = measure.total_tokens
    result.measure_cost_usd = round(measure.cost_usd, 10)
    evaluator = totals.by_caller.get("evaluator")
    if evaluator is not None:  # an evaluator that calls an LLM: its share of the trainer-phase spend
        result.eval_llm_calls, result.eval_tokens = evaluator.llm_calls, evaluator.total_tokens
        result.eval_cost_usd = round(evaluator.cost_usd, 10)
    result.llm_errors = totals.errors
    result.llm_retries = totals.retries
    result.llm_unanswered = train.unanswered
    result.usage_by_role = {role: usage.model_copy() for role, usage in totals.by_role.items()}
    spent = session.budget_spent()
    if session.budget.limits.evaluations is not None:  # the job's evaluations, where a budget counts them
        spent = spent.model_copy(update={"evaluations": result.n_evals})
    result.budget_spent = spent
    refusal = getattr(session, "key_refusal", None)
    if refusal is not None:
        variable, error = refusal
        result.key_refused = KeyRefusal(key_variable=variable, status=error.status, message=str(error)[:500],
                                        kind="quota" if isinstance(error, QuotaExhaustedError) else "auth")
