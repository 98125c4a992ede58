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

from dataclasses import dataclass
from typing import Any

from trace_bench.llm.errors import QuotaExhaustedError, budget_text
from trace_bench.runner.job.failures import exception_text, formatted, status_of
from trace_bench.runner.job.recorder import JobRecorder
from trace_bench.runner.job.setup import JobSetup
from trace_bench.runner.job.task_fields import task_report_fields
from trace_bench.store.events import EventLog
from trace_bench.store.live_result import LiveResult
from trace_bench.store.models import BudgetExhausted, JobError, JobSpec, KeyRefusal
from trace_bench.store.status import Status


@dataclass
class TrainingOutcome:
    """How training ended: its error (none: the trainer finished) and the evaluations it made."""

    error: JobError | None = None
    n_evals: int = 0

    @property
    def status(self) -> Status:
        return Status.OK if self.error is None else self.error.status


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
        needed = float(getattr(exc, "needed", 0.0) or 0.0)
        outcome.error = JobError(status=Status.BUDGET_EXHAUSTED, type=type(exc).__name__, phase="train",
                                 message=budget_text(exc.resource, exc.limit, used, needed))
        events.write(BudgetExhausted(resource=exc.resource, limit=exc.limit, spent=used, needed=needed))
    except MemoryError:
        raise
    except Exception as exc:
        message = f"training_error: {exception_text(exc)}"
        cause = getattr(setup.session, "last_error", None)
        if cause is not None and not isinstance(exc, type(cause)):
            # optimizers such as OptoPrimeMulti swallow LLM errors and fail later with an unrelated
            # IndexError; the LLM error is the cause a user needs to see
            message += f" (after LLM error {type(cause).__name__}: {cause})"
        outcome.error = JobError(status=status_of(exc), type=type(exc).__name__, message=message,
                                 traceback=formatted(exc), phase="train")
    outcome.n_evals = context.n_evals
    task_failure = setup.problem.guide_failures.first
    if task_failure is not None:  # the first one, even if a trainer or a library swallowed it
        outcome.error = JobError(status=Status.TASK_ERROR, type=type(task_failure).__name__, phase="train",
                                 message=f"task_error: {task_failure}", traceback=task_failure.traceback_text)
    return outcome


def finalise(live: LiveResult, setup: JobSetup, recorder: JobRecorder, outcome: TrainingOutcome) -> None:
    """Measure the final state, write the final and best states, fill the record's scores, and
    leave the live parameters at the best state.  A task error is recorded without any score."""
    from trace_bench.trainers.state import apply_state, snapshot

    if outcome.error is not None:
        live.fail(outcome.error)
    live.set(n_steps=recorder.steps, n_evals=outcome.n_evals)
    if outcome.status == Status.TASK_ERROR:
        recorder.stop(outcome.n_evals)
        return
    final = snapshot(setup.parameters)
    final_score, final_dict = _final_selection(final, setup, outcome)
    if outcome.error is not None and live.error is not outcome.error:
        live.fail(outcome.error)  # a refused charge stops the job
    credited = outcome.status == Status.OK  # a stopped trainer never validated what it left
    best_state = recorder.finish(final, final_score, final_dict, credited=credited, n_evals=outcome.n_evals)
    live.set(score_final=final_score, score_best=recorder.best.score, score_dict_best=recorder.best.score_dict,
             best_state_failed=setup.measurer.failed(best_state),
             **task_report_fields(setup.problem, best_state))
    if setup.problem.test_dataset:
        test_best = setup.measurer.test(best_state)
        live.set(score_test_last=setup.measurer.test(final), score_test_best=test_best, score_test=test_best)
    apply_state(setup.parameters, best_state)


def _final_selection(final: Any, setup: JobSetup, outcome: TrainingOutcome) -> tuple[float | None, dict[str, float]]:
    """The final state's selection score: charged to the budget when training ended normally (the
    state is credited like a step); when that charge is refused the job ends ``budget_exhausted``
    and the state is scored uncharged, never credited, like a stopped trainer's."""
    from trace_bench.llm.errors import BudgetExhausted as BudgetExhaustedError

    if outcome.status == Status.OK:
        try:
            return setup.measurer.selection(final)
        except BudgetExhaustedError as exc:
            used = getattr(setup.session.budget_spent(), exc.resource, None)
            used = exc.spent if used is None else used
            message = budget_text(exc.resource, exc.limit, used, float(getattr(exc, "needed", 0.0) or 0.0))
            outcome.error = JobError(status=Status.BUDGET_EXHAUSTED, type=type(exc).__name__, phase="finalise",
                                     message=message)
    return setup.measurer.selection(final, charged=False)


def fill_usage(live: LiveResult, session: Any) -> None:
    """The job's LLM usage: the trainer's calls (the ``train`` phase, what the budget counts) as the
    job's cost, earlier attempts' spend included (``carried_*``), the harness's measurement calls
    apart, an evaluator's calls (its share of the trainer-phase spend), every role and phase in
    ``usage_by_role`` (errors and retries of both phases, this attempt's), what its budget counted,
    and a refusal of its key."""
    totals, spent = session.totals, session.budget_spent()
    if session.budget.limits.evaluations is not None:  # the job's evaluations, where a budget counts them
        spent = spent.model_copy(update={"evaluations": live.n_evals})
    live.charge(totals.by_phase["train"], totals.by_phase["measure"], session.budget.carried, spent,
                estimated=totals.estimated, evaluator=totals.by_caller.get("evaluator"), by_role=totals.by_role,
                errors=totals.errors, retries=totals.retries)
    selection = totals.by_caller.get("selection")
    live.set(selection_llm_calls=selection.llm_calls if selection is not None else 0,
             selection_tokens=selection.total_tokens if selection is not None else 0,
             selection_cost_usd=round(selection.cost_usd, 10) if selection is not None else 0.0)
    refusal = getattr(session, "key_refusal", None)
    if refusal is not None:
        variable, error = refusal
        live.set(key_refused=KeyRefusal(key_variable=variable, status=error.status, message=str(error)[:500],
                                        kind="quota" if isinstance(error, QuotaExhaustedError) else "auth"))
