"""The job's integrity audit, inside the job process: sandbox denials and candidate outputs as they
happen, leakage and flags at the end.

While the job runs, every boundary a sandboxed call ran into (:mod:`trace_bench.sandbox.denials`,
refused system calls counted from the sandbox's own record) is written to the job's
``events.jsonl`` as a ``sandbox_denial`` event, and the text candidates output while the job trains
(what they printed and returned, :mod:`trace_bench.sandbox.outputs`; not while the harness measures a
state, where a right answer to a test item is no leak) is kept, bounded.  When the job ends (ok or
not, as long as its problem was built), its best and final states, as written to ``artifacts/``, and
those outputs are searched for the test and validation splits' inputs and reference answers, as
written and as common encodings decode (:mod:`trace_bench.integrity.leakage`); and a score beyond what
the task says an honest candidate can reach is flagged: above 100 % of the best known value, or a fit
better than the data's noise allows (the problem's ``metadata.score_bounds``, per split).  The result
goes to ``artifacts/integrity.json`` and the record's ``leaked_test_items``,
``leaked_validation_items``, ``sandbox_denials``, ``sandbox_denial_kinds`` and ``integrity_flags``.
The audit never changes a job's status or score: an error in it is written to ``integrity.json`` and
leaves the leak counts null.
"""

from __future__ import annotations

import hashlib
import math
import threading
from typing import Any

from trace_bench.integrity import scan_states
from trace_bench.sandbox import denials, outputs
from trace_bench.store.events import EventLog
from trace_bench.store.job_store import JobStore
from trace_bench.store.live_result import LiveResult
from trace_bench.store.models import (
    IntegrityFlag,
    IntegrityReport,
    LeakFinding,
    SandboxDenial,
    StoreError,
)

AUDITED_STATES = ("best", "final")
MAX_OUTPUT_CHARS = 4 << 20  # candidate output kept for the scan, per job


class DenialWatch:
    """Writes each sandbox denial of this process to the job's event log until :meth:`close`, and keeps
    what candidates output while the job trains (distinct texts, at most :data:`MAX_OUTPUT_CHARS`)."""

    def __init__(self, events: EventLog) -> None:
        self._events = events
        self._lock = threading.Lock()
        self._seen: set[bytes] = set()
        self._kept = 0
        self.outputs: list[tuple[str, str]] = []
        self._stop = denials.listen(self._write)
        self._stop_outputs = outputs.listen(self._keep)

    def _write(self, denial: denials.Denial) -> None:
        self._events.write(SandboxDenial(kind=denial.kind, target=denial.target, status=denial.status,
                                         caught=denial.caught, detail=denial.detail, count=denial.count))

    def _keep(self, target: str, text: str) -> None:
        from trace_bench.llm.current import get_session

        session = get_session()
        if session is not None and session.harness_scoring():
            return  # the harness measuring a state: a right answer to a test item is no leak
        digest = hashlib.sha256(text.encode("utf-8", "replace")).digest()
        with self._lock:
            if digest in self._seen or self._kept + len(text) > MAX_OUTPUT_CHARS:
                return
            self._seen.add(digest)
            self._kept += len(text)
            self.outputs.append((target, text))

    def close(self) -> None:
        self._stop()
        self._stop_outputs()


def _state(job: JobStore, kind: str) -> list[tuple[str, Any]] | None:
    state = job.read_state(kind)
    if state is None:
        return None
    return [(str(p.name or f"parameter {p.index}"), p.value) for p in state.parameters]


def _finite(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        and math.isfinite(value) else None


def score_flags(problem: Any, result: Any) -> list[IntegrityFlag]:
    """Scores an honest candidate cannot reach: above the best known value, or beyond the data's noise."""
    flags = []
    pct = _finite(result.pct_of_best_known)
    if pct is not None and pct > 100.0:
        verified = result.metrics_best.get("beats_best_known")
        check = "no exact re-check" if verified is None else \
            "confirmed by an exact re-check" if verified == 1.0 else "not confirmed by the exact re-check"
        flags.append(IntegrityFlag(kind="beyond_best_known", field="pct_of_best_known", value=pct, bound=100.0,
                                   verified=None if verified is None else verified == 1.0,
                                   detail=f"the best state reaches {pct:.6g}% of the best known value "
                                          f"{result.best_known:g} ({result.best_known_source or 'no source'}); {check}"))
    bounds = (getattr(problem, "metadata", None) or {}).get("score_bounds")
    if isinstance(bounds, dict):
        why = str(bounds.get("why") or "the data")
        for split, field in ((result.selection_split, "score_best"), ("test", "score_test_best"),
                             ("test", "score_test_last")):
            bound, value = _finite(bounds.get(split)), _finite(getattr(result, field))
            if bound is not None and value is not None and value > bound:
                flags.append(IntegrityFlag(kind="beyond_noise", field=field, value=value, bound=bound,
                                           detail=f"{field} {value:.6g} is better than {bound:.6g}, the best an honest "
                                                  f"candidate reaches on the {split} split but with probability "
                                                  f"1e-6 ({why})"))
    return flags


def audit_job(job: JobStore, problem: Any | None, live: LiveResult, watch: DenialWatch | None = None) -> None:
    """Fill the record's integrity fields and write ``integrity.json`` (never raises)."""
    kinds = denials.counts()
    live.set(sandbox_denials=sum(kinds.values()), sandbox_denial_kinds=kinds)
    report = IntegrityReport(sandbox_denials=kinds)
    if problem is None:
        report.error = "the job ended before its problem was built: nothing to search"
    else:
        try:
            report.flags = score_flags(problem, live)
            live.set(integrity_flags=sorted({flag.kind for flag in report.flags}))
            states: dict[str, Any] = {kind: state for kind in AUDITED_STATES if (state := _state(job, kind)) is not None}
            searched_outputs = list(watch.outputs) if watch is not None else []
            if searched_outputs:
                states["outputs"] = searched_outputs
            scan = scan_states(states, {"test": problem.test_dataset, "validation": problem.validate_dataset},
                               initial=_state(job, "initial") or [], train=problem.train_dataset)
            report = report.model_copy(update={
                "searched": scan.searched, "shared_with_train": scan.shared_with_train, "leaked": scan.leaked,
                "findings": [LeakFinding(**vars(f)) for f in scan.findings], "more_findings": scan.more_findings,
                "states": sorted(states), "outputs_searched": len(searched_outputs)})
            if states:
                live.set(leaked_test_items=scan.leaked_count("test"),
                         leaked_validation_items=scan.leaked_count("validation"))
        except (StoreError, ValueError, TypeError, RecursionError, MemoryError) as exc:
            report.error = f"{type(exc).__name__}: {exc}"[:500]
    try:
        job.write_integrity(report)
    except OSError:
        pass
