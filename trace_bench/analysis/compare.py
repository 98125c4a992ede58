"""Paired comparisons with the verdict's test: two runs cell by cell, or two arms of one run.

Two runs (``compare RUN_A RUN_B``): jobs pair by (task, trainer, params variant, seed).  Job ids cannot
pair jobs across runs (they include the LLM identity), the matrix keys can.  The two runs must differ
in at most one axis (DESIGN §10: change one axis at a time), otherwise a difference could not be
attributed, and they must share at least one scored cell; the family Holm corrects over is the arms
compared.  Two arms of one run (``compare RUN --arms A B``): per task, the arms' seeds pair, and the
decision is the leaderboard's own (Holm over every pair of the task's arms), so ``compare`` says
"tied" exactly where the leaderboard shares a rank.  Both use the paired t-test of
:mod:`trace_bench.store.paired` on the run's one metric.  ``compare_main`` is what
``trace-bench compare`` calls: exit code 0, or 2 with the refusal's message (never a traceback).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from trace_bench._util.errors import TraceBenchError
from trace_bench.analysis.axes import budget_note, differing_axes
from trace_bench.analysis.load import ARM, RunDirError, RunSet, load_runs
from trace_bench.analysis.pairs import dropped_seeds, paired_tests, seeds_run, task_scores
from trace_bench.analysis.protocol import (
    DEFAULT_METRIC,
    METRICS,
    RANK_SCORE,
    Metric,
    describe,
    task_metrics,
    with_rank_score,
)
from trace_bench.store.models import arm_label
from trace_bench.store.paired import ALPHA, decide_pairs, decision_map, holm

CELL = [*ARM, "seed"]


class CompareError(TraceBenchError, ValueError):
    """Two runs that cannot be compared fairly; the message says why and what to change."""


ROW_KEYS = ("task", "trainer", "params_label", "metric", "seeds", "dropped", "mean_a", "mean_b", "mean_a_minus_b",
            "ci_low", "ci_high", "p_value", "p_holm", "no_variance", "significant", "wins", "ties", "losses")
TEST_TEXT = "paired t-test (two-sided; no variance between seeds: sign-flip p = 2/2^n)"


@dataclass
class CompareResult:
    """A − B per arm, one dict per arm in ``rows`` with the keys of ``ROW_KEYS`` (JSON-ready: missing
    numbers are None).  ``metric``: the score compared (a held-out test score where both runs have
    one for the task, else the optimistic selection-split ``best``); ``seeds``: cells paired (only seeds
    scored in both runs); ``dropped``: the arm's other cells in either run (failed, missing or without
    the metric on one side), left out of the pairing; ``ci_*``: Student-t 95 % interval of the mean
    difference; ``p_value``: the verdict's paired t-test; ``p_holm``: Holm-corrected (over the arms
    compared for two runs; over the task's pairs of arms for two arms of one run, as the leaderboard);
    ``no_variance``: every seed gave the same difference (the p-value is then the sign-flip 2 / 2^n);
    ``significant``: ``p_holm < alpha``; wins/ties/losses count seeds where A was above/equal
    to/below B.  For two arms of one run, ``arm_a``/``arm_b`` name them (a row's ``trainer`` and
    ``params_label`` then hold the two labels)."""

    run_a: str
    run_b: str
    differing_axes: list[str]
    alpha: float
    rows: list[dict[str, Any]] = field(default_factory=list)
    only_in_a: int = 0
    only_in_b: int = 0
    unscored: int = 0
    notes: list[str] = field(default_factory=list)
    arm_a: str = ""
    arm_b: str = ""
    test: str = TEST_TEXT

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows, columns=list(ROW_KEYS))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _json_number(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    return value.item() if hasattr(value, "item") else value


def compare_runs(run_a: str | Path, run_b: str | Path, alpha: float = ALPHA) -> CompareResult:
    """Paired differences A − B per arm; raises ``CompareError`` for runs that differ in more than one
    axis or share no scored cell, ``RunDirError`` for unreadable run directories."""
    a, b = load_runs([run_a]), load_runs([run_b])
    id_a, id_b = a.run_ids[0], b.run_ids[0]
    axes = differing_axes(_axes_input(a), _axes_input(b))
    if len(axes) > 1:
        raise CompareError(f"runs {id_a} and {id_b} differ in {len(axes)} axes ({', '.join(axes)}); a fair "
                           "comparison changes one axis at a time: rerun one side so that only one of them differs")
    left, right = a.jobs.set_index(CELL), b.jobs.set_index(CELL)
    left, right = left[~left.index.duplicated(keep="last")], right[~right.index.duplicated(keep="last")]
    shared = left.index.intersection(right.index)
    if len(shared) == 0:
        hint = ("; to compare trainers or variants with each other, put them in one run and read the win-matrix "
                "section of its report" if set(axes) & {"trainers", "params_variants"} else "")
        raise CompareError(f"runs {id_a} and {id_b} share no (task, trainer, params variant, seed) cell; their "
                           f"matrices do not overlap ({_extent(a)} vs {_extent(b)}){hint}")
    both = left.loc[shared, "scored"].to_numpy() & right.loc[shared, "scored"].to_numpy()
    if not both.any():
        raise CompareError(f"runs {id_a} and {id_b} share {len(shared)} cell(s) but none has a score in both "
                           "runs (see the failures section of each run's report)")
    notes = [n for n in [budget_note(a.snapshots[id_a], b.snapshots[id_b])] if n]
    result = CompareResult(id_a, id_b, axes, alpha, only_in_a=len(left.index.difference(shared)),
                           only_in_b=len(right.index.difference(shared)), unscored=int((~both).sum()), notes=notes)
    chosen = _shared_metrics(a, b)
    result.notes.insert(0, describe(chosen))
    cells = shared[both]
    columns = [chosen[str(task)].column for task in cells.get_level_values("task")]
    paired = pd.DataFrame({"a": [left.at[cell, column] for cell, column in zip(cells, columns, strict=True)],
                           "b": [right.at[cell, column] for cell, column in zip(cells, columns, strict=True)]},
                          index=cells, dtype=float).dropna().reset_index()
    groups = list(paired.groupby(ARM, sort=True))
    results = paired_tests([(group["a"].to_numpy(), group["b"].to_numpy()) for _, group in groups])
    tests = [(key, test, group) for (key, group), test in zip(groups, results, strict=True)]
    adjusted = holm([test.p_value for _, test, _ in tests])
    either = left.index.union(right.index).droplevel("seed").value_counts()
    for (key, test, group), p_holm in zip(tests, adjusted, strict=True):
        dropped = int(either.get(tuple(key), 0)) - test.n
        values = [*key, chosen[str(key[0])].name, test.n, dropped, group["a"].mean(), group["b"].mean(), test.mean_diff,
                  test.ci_low, test.ci_high, test.p_value, p_holm, test.no_variance, bool(p_holm < alpha), test.wins,
                  test.ties, test.losses]
        result.rows.append({k: _json_number(v) for k, v in zip(ROW_KEYS, values, strict=True)})
    return result


def compare_arms(run: str | Path, arm_a: str, arm_b: str, alpha: float = ALPHA,
                 metric: str = DEFAULT_METRIC) -> CompareResult:
    """A − B for two arms of one run, per task where both have a scored seed: the pair's test from the
    task's verdict (Holm over the task's pairs of arms, :func:`trace_bench.store.paired.decide_pairs`),
    so it agrees with the leaderboard.  Arms are named by label (``trainer [params]``), or by trainer
    where that names one arm.  Raises ``CompareError`` for an unknown, ambiguous or repeated arm."""
    runs = load_runs([run])
    jobs, run_id = runs.jobs, runs.run_ids[0]
    labels = sorted({arm_label(t, p) for t, p in zip(jobs["trainer"], jobs["params_label"], strict=True)})
    label_a, label_b = _find_arm(arm_a, labels, run_id), _find_arm(arm_b, labels, run_id)
    if label_a == label_b:
        raise CompareError(f"--arms names {label_a!r} twice: give two different arms of run {run_id}")
    ranked = with_rank_score(jobs, metric)
    chosen, ran = task_metrics(jobs, metric), seeds_run(ranked)
    result = CompareResult(run_id, run_id, [], alpha, arm_a=label_a, arm_b=label_b)
    result.notes.append(describe(chosen))
    for task, scores in task_scores(ranked, RANK_SCORE).items():
        if label_a not in scores or label_b not in scores:
            continue
        decision = decision_map(decide_pairs(scores, alpha))[frozenset((label_a, label_b))]
        seeds = sorted(set(scores[label_a]) & set(scores[label_b]))
        a, b = [scores[label_a][s] for s in seeds], [scores[label_b][s] for s in seeds]
        test = paired_tests([(a, b)])[0]
        values = [task, label_a, label_b, chosen[task].name, test.n, dropped_seeds(ran, task, label_a, label_b, test.n),
                  sum(a) / len(a) if a else math.nan, sum(b) / len(b) if b else math.nan, test.mean_diff, test.ci_low,
                  test.ci_high, test.p_value, decision.p_holm, test.no_variance, decision.outcome != "tied",
                  test.wins, test.ties, test.losses]
        result.rows.append({k: _json_number(v) for k, v in zip(ROW_KEYS, values, strict=True)})
    if not result.rows:
        raise CompareError(f"arms {label_a!r} and {label_b!r} of run {run_id} share no task with a scored seed")
    return result


def _find_arm(name: str, labels: list[str], run_id: str) -> str:
    """The arm label ``name`` means: itself, or the one arm of that trainer."""
    if name in labels:
        return name
    matches = [label for label in labels if label.split(" [", 1)[0] == name]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise CompareError(f"--arms: {name!r} names {len(matches)} arms of run {run_id}; give one of: "
                           + "; ".join(matches))
    raise CompareError(f"--arms: no arm {name!r} in run {run_id}; its arms: " + "; ".join(labels))


def _shared_metrics(a: RunSet, b: RunSet) -> dict[str, Metric]:
    """Per task, the held-out metric when both runs have it, else ``best``."""
    left, right = task_metrics(a.jobs), task_metrics(b.jobs)
    return {task: left[task] if left[task] == right.get(task) else METRICS["best"] for task in left}


def _axes_input(runs: RunSet) -> tuple[dict[str, Any], dict[str, Any], pd.DataFrame]:
    run_id = runs.run_ids[0]
    return runs.manifests[run_id], runs.snapshots[run_id], runs.jobs


def _extent(runs: RunSet) -> str:
    jobs = runs.jobs

    def listed(values: Any) -> str:
        names = sorted({str(v) for v in values})
        return ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    return (f"{runs.run_ids[0]}: tasks {listed(jobs['task']) or '-'}; trainers {listed(jobs['trainer']) or '-'}; "
            f"seeds {listed(jobs['seed']) or '-'}")


def _number(value: float | None, digits: int = 4) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:.{digits}g}"


def format_compare(result: CompareResult) -> str:
    """A plain-text table for the terminal: one line per arm, A − B with its 95 % t interval."""
    arm_columns = [] if result.arm_a else ["trainer", "params"]
    header = ["task", *arm_columns, "metric", "n", "dropped", "mean A", "mean B", "A-B", "95% CI", "p", "p_holm", "sig"]
    body = [[r["task"], *([] if result.arm_a else [r["trainer"], r["params_label"]]), r["metric"], str(r["seeds"]),
             str(r["dropped"]),
             _number(r["mean_a"]), _number(r["mean_b"]),
             _number(r["mean_a_minus_b"]),
             "-" if r["ci_low"] is None else f"[{_number(r['ci_low'])}, {_number(r['ci_high'])}]",
             _number(r["p_value"], 3), _number(r["p_holm"], 3),
             "yes" if r["significant"] else "no, tied" + (" (no variance)" if r.get("no_variance") else "")]
            for r in result.rows]
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]
    numeric = set(range(2 + len(arm_columns), len(header) - 1))

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if i in numeric else c.ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    if result.arm_a:
        lines = [f"A = {result.arm_a}   B = {result.arm_b}   (run {result.run_a})",
                 f"paired by seed, only seeds both arms scored (dropped: the arms' other seeds); p: {result.test}; "
                 f"sig = p_holm < {result.alpha:g} (Holm over each task's pairs of arms, as the leaderboard)", ""]
    else:
        axis = f"differing axis: {result.differing_axes[0]}" if result.differing_axes else "no axis differs"
        lines = [f"A = {result.run_a}   B = {result.run_b}   ({axis})",
                 f"paired by seed, only seeds scored in both runs (dropped: the arm's other seeds); p: {result.test}; "
                 f"sig = p_holm < {result.alpha:g} (Holm over the arms)", ""]
    lines += [line(header), line(["-" * w for w in widths]), *(line(row) for row in body), ""]
    significant = sum(r["significant"] for r in result.rows)
    noun = "task(s)" if result.arm_a else "arm(s)"
    lines.append(f"{len(result.rows)} {noun} compared, {significant} significant, {len(result.rows) - significant} "
                 "tied" + ("" if result.arm_a else f"; cells only in A: {result.only_in_a}, only in B: "
                           f"{result.only_in_b}, shared without a score in both: {result.unscored}"))
    lines.extend(f"note: {note}" for note in result.notes)
    return "\n".join(lines)


def compare_main(runs: Sequence[str], fmt: str = "table", arms: Sequence[str] | None = None) -> int:
    """Print the paired comparison of two runs, or of two arms of one run (``arms``), as a table or
    JSON; 2 when they cannot be compared."""
    try:
        if fmt not in ("table", "json"):
            raise CompareError(f"unknown format {fmt!r}; choose table or json")
        if arms:
            if len(runs) != 1 or len(arms) != 2:
                raise CompareError("--arms A B compares two arms of one run: give one run directory and two arm "
                                   "labels")
            result = compare_arms(runs[0], arms[0], arms[1])
        elif len(runs) != 2:
            raise CompareError(f"compare needs two run directories (or one run and --arms A B), got {len(runs)}")
        else:
            result = compare_runs(runs[0], runs[1])
    except (RunDirError, CompareError) as exc:
        print(f"trace-bench: error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(result.to_dict(), indent=2) if fmt == "json" else format_compare(result))
    return 0
