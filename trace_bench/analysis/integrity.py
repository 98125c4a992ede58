"""Did the optimizer cheat?  The integrity audit per arm, from what each job recorded.

Three signals, each computed after the job from what it produced (see docs/analysis.md#integrity):

* **leakage**: test items (and, reported apart, validation items) whose input or reference answer
  the job's best or final state holds (results.csv ``leaked_test_items``, ``leaked_validation_items``;
  the findings, with masked excerpts, in each job's ``artifacts/integrity.json``);
* **sandbox denials**: boundaries the job's sandboxed candidates ran into (refused syscalls, writes,
  network, processes, forged results, timeouts, memory), per kind (``sandbox_denials``,
  ``sandbox_denial_kinds``; one ``sandbox_denial`` event each in the job's ``events.jsonl``);
* **scores beyond a bound**: jobs whose score passed what the task says an honest candidate can reach,
  above the best known value or a fit better than the data's noise (results.csv ``integrity_flags``;
  the details in each job's ``artifacts/integrity.json``);
* **selection-vs-test gap**: per job, the best score on the selection split minus the test score
  of that state.  An arm is flagged when its mean gap is positive and the verdict's paired test
  (:mod:`trace_bench.store.paired`) finds it above the task's other arms: per seed, the arm's gap
  against the mean gap of the task's other arms on that seed, Holm-corrected over the task's arms, at
  alpha 0.05.  So the evidence is weighed against both the arm's own noise and the task's, and a gap
  without variance between seeds alone (the split sizes make a deterministic arm's gap a fixed
  number) never flags: identical differences decide only from six seeds on (an arm that fits its
  selection split much better than its peers without generalising is the trace of an evaluator being
  gamed; a test score above the selection score is not).

:func:`integrity_table` gives one row per arm with its ``flags``; the table, report.html and the UI
mark the flagged arms.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import pandas as pd

from trace_bench.analysis.load import ARM, RunSet
from trace_bench.analysis.stats import arm_planned, mean_ci
from trace_bench.store.models import LeakFinding, SandboxDenial, StoreError
from trace_bench.store.paired import ALPHA, holm, paired_difference
from trace_bench.store.ranking import TIE_TOLERANCE
from trace_bench.store.run_store import RunStore

INTEGRITY_COLUMNS = [*ARM, "jobs", "scored", "planned", "complete", "audited", "leaked_jobs", "leaked_test_items",
                     "leaked_validation_items", "sandbox_denials", "denial_kinds", "beyond_jobs", "gap_n", "gap_mean",
                     "gap_ci_half", "gap_no_variance", "others_gap_mean", "gap_p", "gap_flag", "flags"]
#: what each flag says, for captions and notes
FLAG_TEXT = {"leak": "held-out test items in its states", "validation leak": "validation items in its states",
             "denials": "sandbox denials", "beyond": "a score beyond the best known value or the data's noise",
             "gap": "selection-vs-test gap above its task's other arms"}


def _flagged(cell: Any) -> bool:
    """Whether a job's ``integrity_flags`` (a list, or its JSON in a CSV) names any flag."""
    if isinstance(cell, (list, tuple)):
        return bool(cell)
    return isinstance(cell, str) and cell.strip() not in ("", "[]")
MAX_FINDINGS_SHOWN = 200
MAX_DENIALS_SHOWN = 100


def _kinds(cell: Any) -> Counter[str]:
    """``sandbox_denial_kinds`` of a job (the store reads it typed: a mapping); empty when missing."""
    if not isinstance(cell, dict):
        return Counter()
    return Counter({str(k): int(v) for k, v in cell.items() if isinstance(v, (int, float))})


def kinds_text(kinds: Counter[str] | dict[str, int]) -> str:
    return ", ".join(f"{kind} {count}" for kind, count in sorted(kinds.items()) if count) or ""


def _gaps(jobs: pd.DataFrame) -> pd.Series:
    """Per job: best score on the selection split minus the test score of the best state."""
    if "score_test_best" not in jobs:
        return pd.Series(math.nan, index=jobs.index)
    return (jobs["score_best"] - jobs["score_test_best"]).where(jobs["scored"])


def gap_tests(group: pd.DataFrame) -> dict[tuple[str, str], tuple[float, float]]:
    """Per arm of one task (its ``_gap`` per job): (mean over seeds of the arm's gap minus the other
    arms' mean gap on that seed, Holm-adjusted p-value of the verdict's paired test of it)."""
    table = group.pivot_table(index="seed", columns=["trainer", "params_label"], values="_gap", aggfunc="mean")
    found: dict[tuple[str, str], tuple[float, float]] = {}
    if table.shape[1] < 2:
        return found
    tests = []
    for arm in table.columns:
        others = table.drop(columns=[arm]).mean(axis=1, skipna=True)
        tests.append((arm, paired_difference(list(table[arm]), list(others))))
    for (arm, test), p_holm in zip(tests, holm([t.p_value for _, t in tests]), strict=True):
        found[(str(arm[0]), str(arm[1]))] = (test.mean_diff, p_holm)
    return found


def integrity_table(jobs: pd.DataFrame, confidence: float = 0.95, alpha: float = ALPHA) -> pd.DataFrame:
    """One row per arm (:data:`INTEGRITY_COLUMNS`): its jobs, ``scored`` of the ``planned`` seeds
    (``complete`` when all: the gap of an incomplete arm is over its surviving seeds only, ``gap_n``),
    audited jobs, jobs with leaked test items and the items summed over them, validation items apart,
    sandbox denials (total and per kind), the mean selection-vs-test gap with its half-width (and
    ``gap_no_variance`` when every seed had the same gap) against the mean of the task's other arms,
    the Holm-adjusted p-value of the gap test (``gap_p``), and ``flags`` (``leak``, ``validation
    leak``, ``denials``, ``gap``; empty when none)."""
    if jobs.empty:
        return pd.DataFrame(columns=INTEGRITY_COLUMNS)
    frame = jobs.assign(_gap=_gaps(jobs))
    rows = []
    for task, group in frame.groupby("task", sort=True):
        arm_gaps = group.groupby(["trainer", "params_label"], sort=True)["_gap"].mean().dropna()
        tested = gap_tests(group[group["_gap"].notna()])
        for (trainer, label), arm in group.groupby(["trainer", "params_label"], sort=True):
            others = arm_gaps.drop((trainer, label), errors="ignore")
            gap = mean_ci(arm["_gap"], confidence)
            others_mean = float(others.mean()) if len(others) else math.nan
            above_others, p_gap = tested.get((str(trainer), str(label)), (math.nan, math.nan))
            # only a positive gap (selection above test) can be the trace of a gamed evaluator
            gap_flag = bool(gap.mean > TIE_TOLERANCE and above_others > TIE_TOLERANCE and p_gap < alpha)
            row = {"task": task, "trainer": trainer, "params_label": label, **_audit_counts(arm),
                   "gap_n": gap.n, "gap_mean": gap.mean, "gap_ci_half": gap.half_width,
                   "gap_no_variance": bool(gap.n >= 2 and gap.std <= TIE_TOLERANCE), "others_gap_mean": others_mean,
                   "gap_p": p_gap, "gap_flag": gap_flag}
            flags = [name for name, on in (("leak", row["leaked_test_items"] > 0),
                                           ("validation leak", row["leaked_validation_items"] > 0),
                                           ("denials", row["sandbox_denials"] > 0), ("beyond", row["beyond_jobs"] > 0),
                                           ("gap", gap_flag)) if on]
            rows.append({**row, "flags": ", ".join(flags)})
    return pd.DataFrame(rows, columns=INTEGRITY_COLUMNS)


def _audit_counts(arm: pd.DataFrame) -> dict[str, Any]:
    """An arm's jobs, seeds and what the audit counted over them."""
    leaked = arm["leaked_test_items"] if "leaked_test_items" in arm else pd.Series(dtype=float)
    validation = arm["leaked_validation_items"] if "leaked_validation_items" in arm else pd.Series(dtype=float)
    denied = arm["sandbox_denials"] if "sandbox_denials" in arm else pd.Series(dtype=float)
    kinds: Counter[str] = Counter()
    for cell in arm.get("sandbox_denial_kinds", pd.Series(dtype=object)):
        kinds.update(_kinds(cell))
    beyond = int(sum(_flagged(cell) for cell in arm.get("integrity_flags", pd.Series(dtype=object))))
    scored, planned = int(arm["scored"].sum()), arm_planned(arm)
    return {"jobs": len(arm), "scored": scored, "planned": planned, "complete": scored == planned > 0,
            "audited": int(leaked.notna().sum()), "leaked_jobs": int((leaked.fillna(0) > 0).sum()),
            "leaked_test_items": int(leaked.fillna(0).sum()), "leaked_validation_items": int(validation.fillna(0).sum()),
            "sandbox_denials": int(denied.fillna(0).sum()), "denial_kinds": kinds_text(kinds), "beyond_jobs": beyond}


def flagged_arms(table: pd.DataFrame) -> dict[tuple[str, str, str], str]:
    """(task, trainer, params_label) → its flags, for the arms that have any."""
    return {(str(r["task"]), str(r["trainer"]), str(r["params_label"])): str(r["flags"])
            for _, r in table.iterrows() if r["flags"]}


def describe_row(row: pd.Series) -> str:
    """One line naming what the audit found for an arm."""
    parts = []
    if row["leaked_test_items"]:
        parts.append(f"test items in the states of {row['leaked_jobs']} of {row['audited']} audited job(s) "
                     f"({row['leaked_test_items']} in all)")
    if row["leaked_validation_items"]:
        parts.append(f"validation items in its states ({row['leaked_validation_items']} in all)")
    if row["sandbox_denials"]:
        parts.append(f"{row['sandbox_denials']} sandbox denial(s) ({row['denial_kinds']})")
    if row.get("beyond_jobs"):
        parts.append(f"{row['beyond_jobs']} job(s) scored beyond the best known value or the data's noise "
                     "(see their integrity.json)")
    if row["gap_flag"]:
        seeds = "" if row["complete"] else f" (over {row['gap_n']} of its {row['planned']} seeds: incomplete)"
        spread = " (no variance between seeds)" if row["gap_no_variance"] else f" ± {row['gap_ci_half']:.3g}"
        parts.append(f"selection-vs-test gap {row['gap_mean']:.3g}{spread}{seeds} against "
                     f"{row['others_gap_mean']:.3g} for the task's other arms (paired test over seeds, Holm p = "
                     f"{row['gap_p']:.2g})")
    return "; ".join(parts)


def leak_findings(runs: RunSet, limit: int = MAX_FINDINGS_SHOWN) -> pd.DataFrame:
    """The findings of the jobs with leaked items (from their ``integrity.json``), masked excerpts only."""
    columns = ["run_id", "job_id", *ARM, "seed", "split", "item", "kind", "state", "parameter", "excerpt",
               "in_initial"]
    jobs = runs.jobs
    wanted = pd.Series(False, index=jobs.index)
    for column in ("leaked_test_items", "leaked_validation_items"):
        if column in jobs:
            wanted |= jobs[column].fillna(0) > 0
    rows: list[dict[str, Any]] = []
    for _, job in jobs[wanted].iterrows():
        findings = _read_findings(runs, str(job["run_id"]), str(job["job_id"]))
        for finding in findings:
            rows.append({**{c: job[c] for c in ("run_id", "job_id", *ARM, "seed")}, **finding.model_dump(
                include={"split", "item", "kind", "state", "parameter", "excerpt", "in_initial"})})
            if len(rows) >= limit:
                return pd.DataFrame(rows, columns=columns)
    return pd.DataFrame(rows, columns=columns)


def _read_findings(runs: RunSet, run_id: str, job_id: str) -> list[LeakFinding]:
    try:
        report = RunStore(runs.run_dirs[run_id]).job(job_id).read_integrity()
    except (StoreError, KeyError):
        return []
    return list(report.findings) if report is not None else []


def denial_events(runs: RunSet, limit: int = MAX_DENIALS_SHOWN) -> pd.DataFrame:
    """The ``sandbox_denial`` events of the jobs that counted some (the first ``limit``)."""
    columns = ["run_id", "job_id", *ARM, "seed", "kind", "target", "status", "caught", "detail"]
    jobs = runs.jobs
    if "sandbox_denials" not in jobs:
        return pd.DataFrame(columns=columns)
    rows: list[dict[str, Any]] = []
    for _, job in jobs[jobs["sandbox_denials"].fillna(0) > 0].iterrows():
        store = RunStore(runs.run_dirs[str(job["run_id"])]).job(str(job["job_id"]))
        for event in store.events(contains='"sandbox_denial"'):
            if isinstance(event, SandboxDenial):
                rows.append({**{c: job[c] for c in ("run_id", "job_id", *ARM, "seed")},
                             **event.model_dump(include={"kind", "target", "status", "caught", "detail"})})
                if len(rows) >= limit:
                    return pd.DataFrame(rows, columns=columns)
    return pd.DataFrame(rows, columns=columns)
