"""The recorder: the one object that writes a job's progress through its :class:`JobStore`.

Every trainer reports through ``TrainerContext.report_step``; the recorder turns each report into
a curve row, a ``step`` event, a state-history line (accepted steps) and, when the best score
improved, a new ``best_state.yaml``.  All of it is written as it happens, so a job that is killed
still leaves its curve, its best state so far and its spend.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

from trace_bench.store.events import EventLog, LineLog
from trace_bench.store.job_store import CurveWriter, JobStore
from trace_bench.store.models import CurveRow, StateFile, StateHistoryLine, StateSnapshot, Step


@dataclass
class BestSoFar:
    """The best selection score seen so far, its state and its per-metric scores."""

    score: float | None = None
    state: list[Any] | None = None
    score_dict: dict[str, float] = field(default_factory=dict)

    def offer(self, score: float | None, state: list[Any], score_dict: dict[str, float]) -> bool:
        """Keep ``state`` when it beats the best (non-finite scores never do); True when it did."""
        if score is None or not math.isfinite(score):
            return False
        if self.score is None or score > self.score:
            self.score, self.state, self.score_dict = score, list(state), dict(score_dict)
            return True
        return False


class JobRecorder:
    """Writes one job's curve, step events, state history and state files (see module docstring)."""

    def __init__(self, job: JobStore, events: EventLog, session: Any, parameters: list[Any], *,
                 console: bool = True) -> None:
        self.job = job
        self.events = events
        self.session = session
        self.parameters = parameters
        self.console = console
        self.best = BestSoFar()
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
        self._curve = self.job.open_curve()
        self._history = self.job.open_state_history()
        self._t0 = time.monotonic()
        self._curve_row(0, score, 0)
        self._history.append(StateHistoryLine(kind="initial", step=0, score=score, state=self.snapshot(state)))

    def on_step(self, report: Any) -> None:
        """The ``on_step`` callback of ``TrainerContext`` (a ``StepReport``)."""
        improved = self.best.offer(report.score, report.state, report.score_dict)
        totals = self.session.totals
        if self.console:
            print(f"[Step {report.step}] score: {report.score} best: {self.best.score} "
                  f"llm_calls: {totals.llm_calls}", flush=True)
        self.steps = report.step
        self._curve_row(report.step, report.score, report.n_evals)
        fields: dict[str, Any] = {"step": report.step, "score": report.score, "best_score": self.best.score,
                                  "n_evals": report.n_evals, "llm_calls": totals.llm_calls,
                                  "tokens": totals.total_tokens, "usd": totals.cost_usd,
                                  "wall_s": round(report.wall_s, 6)}
        if report.info:
            fields["info"] = report.info
        self.events.write(Step(**fields))
        if report.accepted and self._history is not None:
            self._history.append(StateHistoryLine(kind="step", step=report.step, score=report.score,
                                                  state=self.snapshot(report.state)))
        if improved:
            self.write_state("best", report.state, report.score, step=report.step)

    def finish(self, state: list[Any], score: float | None, score_dict: dict[str, float]) -> list[Any]:
        """The final state: its file, the best state's final version, the last history line.
        Returns the best state (the final one when no state had a finite score)."""
        self.best.offer(score, state, score_dict)
        self.write_state("final", state, score)
        best_state = self.best.state if self.best.state is not None else state
        self.write_state("best", best_state, self.best.score)
        if self._history is not None:
            self._history.append(StateHistoryLine(kind="final", step=self.steps, score=score,
                                                  state=self.snapshot(state)))
        self.close()
        return best_state

    def close(self) -> None:
        for log in (self._history, self._curve):
            if log is not None:
                log.close()

    def _curve_row(self, step: int, score: float | None, n_evals: int) -> None:
        if self._curve is None:
            return
        totals = self.session.totals
        self._curve.row(CurveRow(step=step, wall_s=round(time.monotonic() - self._t0, 6), n_evals=n_evals,
                                 llm_calls=totals.llm_calls, tokens=totals.total_tokens,
                                 usd=round(totals.cost_usd, 10), score=score, best_score=self.best.score))
