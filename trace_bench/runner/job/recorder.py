"""The recorder: the one object that writes a job's progress through its :class:`JobStore`.

Every trainer reports through ``TrainerContext.report_step``; the recorder turns each report into
a curve row (with ``obj_<metric>`` columns on a multi-objective task), a ``step`` event and a
state-history line (accepted steps), both with the state's per-objective ``score_dict``, and, when
the best state changed (:class:`BestSoFar`, Pareto-aware), a new ``best_state.yaml``.  All of it is written as it happens, so a job that is killed
still leaves its curve, its best state so far and its spend.

The curve is the record: the job's best score is the best its curve shows, and its last row stands
at the job's total trainer-phase spend.  When training ends normally the state it ended on is
measured and credited like a step (row ``final``).  When it was stopped (budget, error) the
parameters the trainer left mid-iteration were never validated by it: the harness's measurement of
them is shown (row ``harness_final``) but never becomes the best state.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

from trace_bench.store.curve_file import CurveWriter
from trace_bench.store.events import EventLog, LineLog
from trace_bench.store.job_store import JobStore
from trace_bench.store.models import CurveRow, Spend, StateFile, StateHistoryLine, StateSnapshot, Step
from trace_bench.trainers.objectives import ObjectiveConfig, front_order, objective_names, pareto_front


@dataclass
class FrontEntry:
    """A measured state kept by :class:`BestSoFar` (``order``: when it was offered)."""

    state: list[Any]
    score: float
    score_dict: dict[str, float]
    order: int
    step: int | None = None


@dataclass
class BestSoFar:
    """A job's best-so-far state under the task's objective: what the harness reports as *best*.

    Every measured state (initial, each step, final) is offered with its selection score and
    per-objective means.  Without an objective, and in ``scalar`` and ``weighted`` mode, the best
    is the highest score (non-finite scores never count; the earlier state wins a tie).  In
    ``pareto`` mode ``front`` keeps the non-dominated states (a state equal on every metric to a
    kept one is not added) and the best is the front's first member by
    :func:`~trace_bench.trainers.objectives.front_order`, by default the one closest to the ideal
    point: so ``pareto`` and ``weighted`` differ exactly when the balanced trade-off is not the
    weighted sum's favourite.  Its ``score`` is still the weighted scalarization, so it may go
    *down* when a more balanced state joins the front.
    """

    objective: ObjectiveConfig | None = None
    front: list[FrontEntry] = field(default_factory=list)
    _best: FrontEntry | None = None
    _offered: int = 0

    @property
    def pareto(self) -> bool:
        return self.objective is not None and self.objective.mode == "pareto"

    @property
    def score(self) -> float | None:
        return None if self._best is None else self._best.score

    @property
    def state(self) -> list[Any] | None:
        return None if self._best is None else self._best.state

    @property
    def score_dict(self) -> dict[str, float]:
        return {} if self._best is None else dict(self._best.score_dict)

    @property
    def step(self) -> int | None:
        """The step that reported the best state (None for the initial and final states)."""
        return None if self._best is None else self._best.step

    def offer(self, score: float | None, state: list[Any], score_dict: dict[str, float],
              step: int | None = None) -> bool:
        """Consider a measured state; True when the best changed (in ``pareto`` mode the new best
        may be an earlier front member: adding a state renormalizes the front)."""
        if score is None or not math.isfinite(score):
            return False
        self._offered += 1
        entry = FrontEntry(list(state), float(score), dict(score_dict), self._offered, step)
        if not self.pareto:
            if self._best is None or entry.score > self._best.score:
                self._best = entry
                return True
            return False
        return self._offer_pareto(entry)

    def _offer_pareto(self, entry: FrontEntry) -> bool:
        assert self.objective is not None
        if any(kept.score_dict == entry.score_dict for kept in self.front):
            return False
        candidates = [*self.front, entry]
        kept = pareto_front([c.score_dict for c in candidates], self.objective)
        if len(candidates) - 1 not in kept:
            return False
        self.front = [candidates[i] for i in kept]
        order = front_order([c.score_dict for c in self.front], self.objective)
        pick = self.front[order[0]] if order else entry
        changed = pick is not self._best
        self._best = pick
        return changed


class JobRecorder:
    """Writes one job's curve, step events, state history and state files (see module docstring)."""

    def __init__(self, job: JobStore, events: EventLog, session: Any, parameters: list[Any], *,
                 objective: ObjectiveConfig | None = None, console: bool = True,
                 carried_measure: Spend | None = None) -> None:
        self.job = job
        #: earlier attempts' measurement calls: the curve's measure columns start there, as the record's
        self.carried_measure = carried_measure or Spend()
        self.events = events
        self.session = session
        self.parameters = parameters
        self.console = console
        self.best = BestSoFar(objective)
        self.steps = 0
        self._curve: CurveWriter | None = None
        self._history: LineLog | None = None
        self._t0 = time.monotonic()

    def snapshot(self, state: list[Any]) -> StateSnapshot:
        from trace_bench.trainers.state import describe

        return StateSnapshot.model_validate(describe(self.parameters, state))

    def write_state(self, kind: str, state: list[Any], score: float | None, step: int | None = None) -> None:
        snapshot = self.snapshot(state)
        self.job.write_state(kind, StateFile(parameters=snapshot.parameters, score=score, step=step))

    def start(self, state: list[Any], score: float | None, score_dict: dict[str, float]) -> None:
        """The initial state: its file, the best so far, curve row 0 and the first history line."""
        self.write_state("initial", state, score)
        self.best.offer(score, state, score_dict)
        self._curve = self.job.open_curve(objective_names(score_dict))
        self._history = self.job.open_state_history()
        self._t0 = time.monotonic()
        self._curve_row(0, score, 0, score_dict, "initial")
        self._history.append(StateHistoryLine(kind="initial", step=0, score=score, score_dict=dict(score_dict),
                                              state=self.snapshot(state)))
        self.session.at_step(1)  # the calls from here on lead to step 1's state (the job's transcript says so)

    def on_step(self, report: Any) -> None:
        """The ``on_step`` callback of ``TrainerContext`` (a ``StepReport``)."""
        improved = self.best.offer(report.score, report.state, report.score_dict, step=report.step)
        spend = _trainer_spend(self.session)
        if self.console:
            print(f"[Step {report.step}] score: {_short(report.score)} best: {_short(self.best.score)} "
                  f"llm_calls: {spend.llm_calls}", flush=True)
        self.steps = report.step
        self.session.at_step(report.step + 1)
        self._curve_row(report.step, report.score, report.n_evals, report.score_dict, "step")
        self.events.write(Step(step=report.step, score=report.score, best_score=self.best.score,
                               score_dict=report.score_dict, n_evals=report.n_evals, llm_calls=spend.llm_calls,
                               tokens=spend.tokens, usd=spend.usd, wall_s=round(report.wall_s, 6),
                               info=report.info or None))
        if report.accepted and self._history is not None:
            self._history.append(StateHistoryLine(kind="step", step=report.step, score=report.score,
                                                  score_dict=report.score_dict, state=self.snapshot(report.state)))
        if improved and self.best.state is not None:  # in pareto mode the new best may be an earlier state
            self.write_state("best", self.best.state, self.best.score, step=self.best.step)

    def finish(self, state: list[Any], score: float | None, score_dict: dict[str, float], *, credited: bool = True,
               n_evals: int | None = None) -> list[Any]:
        """The final state: its file, its curve row at the total spend, the best state's final
        version, the last history line.  ``credited``: training ended normally, so the state counts
        like a step; otherwise (a stop) its score is the harness's and never the best.  Returns the
        best state (the final one when no state had a finite score)."""
        if credited:
            self.best.offer(score, state, score_dict)
        self._curve_row(self.steps, score, n_evals, score_dict, "final" if credited else "harness_final")
        self.write_state("final", state, score)
        best_state = self.best.state if self.best.state is not None else state
        self.write_state("best", best_state, self.best.score)
        if self._history is not None:
            self._history.append(StateHistoryLine(kind="final", step=self.steps, score=score,
                                                  score_dict=dict(score_dict), state=self.snapshot(state)))
        self.close()
        return best_state

    def stop(self, n_evals: int | None = None) -> None:
        """The job ends without measuring its last parameters (its task failed): a curve row with
        the total spend and no score."""
        self._curve_row(self.steps, None, n_evals, {}, "stop")
        self.close()

    def close(self) -> None:
        for log in (self._history, self._curve):
            if log is not None:
                log.close()

    def _curve_row(self, step: int, score: float | None, n_evals: int | None, score_dict: dict[str, float],
                   kind: str) -> None:
        if self._curve is None or self._curve.closed:
            return
        measured = self.session.totals.by_phase["measure"].spend().plus(self.carried_measure).rounded()
        self._curve.row(CurveRow.at(_trainer_spend(self.session), measured, step=step,
                                    wall_s=round(time.monotonic() - self._t0, 6), n_evals=n_evals, score=score,
                                    best_score=self.best.score,
                                    objectives={name: score_dict[name] for name in objective_names(score_dict)},
                                    kind=kind))


def _short(value: float | None) -> str:
    """A score for stdout.log: 6 significant digits (the curve keeps full precision), not 17."""
    return "None" if value is None else f"{value:.6g}"


def _trainer_spend(session: Any) -> Spend:
    """What the trainer spent in the job so far (the curve's cost axes: the quantity a budget
    counts; the harness's measurements are recorded beside it), what earlier (interrupted) attempts
    spent included: a resumed job's curve starts at the spend carried into it and ends at the
    record's cost columns."""
    spent: Spend = session.totals.by_phase["train"].spend().plus(session.budget.carried).rounded()
    return spent

