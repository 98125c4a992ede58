"""``trace-bench verdict RUN...``: what a run concludes, per task and across tasks, as Markdown, CSV or JSON.

Per task it is the leaderboard's verdict (:mod:`trace_bench.store.paired`: ranks from the paired
t-test, Holm over the task's pairs of arms, ties as ties); across tasks it is
:mod:`.across_tasks` (rliable, autorank, baycomp).  Each format carries the metric, the test and the
correction it used.  ``verdict_main`` exits 0, or 2 with a one-line message for anything the user can fix.
"""

from __future__ import annotations

import csv
import io
import json
import math
import sys
from collections.abc import Sequence
from typing import Any

import pandas as pd

from trace_bench.analysis.across_tasks import DEFAULT_ROPE, CrossTaskVerdict, cross_task_verdict
from trace_bench.analysis.equal_spend import as_metric, equal_spend_text, is_equal_spend_metric
from trace_bench.analysis.load import RunDirError, distinguish_runs, load_runs
from trace_bench.analysis.protocol import DEFAULT_METRIC, METRICS, describe, task_metrics
from trace_bench.analysis.stats import leaderboard
from trace_bench.analysis.table import verdict_cell
from trace_bench.store.models import arm_label
from trace_bench.store.paired import ALPHA, CORRECTION, TEST_NAME

FORMATS = ("md", "csv", "json")
PER_TASK = ["task", "rank", "trainer", "params_label", "metric", "vs_best", "p_vs_best", "count", "planned", "mean",
            "ci95_low", "ci95_high", "no_variance", "mode"]


def test_text(alpha: float) -> str:
    return (f"{TEST_NAME} over seeds (two-sided; where every seed gives the same difference, the exact sign-flip "
            f"p = 2/2^n), {CORRECTION}, alpha {alpha:g}: arms not separated from the best share its rank")


def _number(value: Any, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    return f"{float(value):.{digits}g}"


def _interval(low: Any, high: Any) -> str:
    return "-" if _number(low) == "-" else f"[{_number(low)}, {_number(high)}]"


def task_lines(board: pd.DataFrame) -> list[str]:
    """One sentence per task: its best arm alone, or the arms tied with it, then the arms below."""
    lines = []
    for task, group in board.groupby("task", sort=True):
        named: dict[str, list[str]] = {str(r["vs_best"]): [] for _, r in group.iterrows()}
        for _, r in group.iterrows():
            named[str(r["vs_best"])].append(arm_label(str(r["trainer"]), str(r["params_label"])))
        best = named.get("best", [])
        if not best:
            lines.append(f"{task}: no arm has a score")
            continue
        tied = named.get("tied", [])
        text = (f"{task}: {best[0]} is the sole best, separated from every other arm" if not tied else
                f"{task}: no sole best; tied at #1: {', '.join(best + tied)}")
        below = named.get("below", [])
        if below:
            text += f"; below: {', '.join(below)}"
        lines.append(text + ".")
    return lines


def summary_lines(board: pd.DataFrame, verdict: CrossTaskVerdict) -> list[str]:
    """The verdict in a few sentences, per task and across tasks."""
    lines = task_lines(board)
    if verdict.aggregate:
        top = verdict.aggregate[0]
        lines.append(f"across {len(verdict.tasks)} task(s): highest IQM of normalized scores: {top['arm']} "
                     f"{_number(top['iqm'], 3)} {_interval(top['iqm_low'], top['iqm_high'])}")
        overlapping = [r["arm"] for r in verdict.aggregate[1:] if r["iqm_high"] >= top["iqm_low"]]
        if overlapping:
            lines[-1] += f"; its interval overlaps {', '.join(overlapping)}"
        lines[-1] += "."
    for row in verdict.bayesian:
        for claim, probability in ((f"{row['arm']} better than {row['versus']}", row["p_better"]),
                                   (f"{row['arm']} practically equivalent to {row['versus']}", row["p_equivalent"]),
                                   (f"{row['versus']} better than {row['arm']}", row["p_worse"])):
            if probability >= 0.95:
                lines.append(f"Bayesian signed-rank (ROPE {verdict.rope:g}): P({claim}) = {probability:.3g}.")
    return lines


def to_markdown(board: pd.DataFrame, verdict: CrossTaskVerdict, header: dict[str, Any]) -> str:
    def table(head: list[str], rows: list[list[str]]) -> list[str]:
        def line(cells: list[str]) -> str:
            return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"
        return [line(head), "|" + "|".join("---" for _ in head) + "|", *(line(r) for r in rows), ""]

    out = [f"# Verdict: {', '.join(header['runs'])}", "", header["metric_text"], "",
           f"Per task: {header['test']}.", ""]
    if header.get("stub"):
        out += ["Stub mode: a deterministic stub answered every LLM call; these numbers show the harness, not a "
                "real model.", ""]
    out += ["## In short", "", *(f"- {line}" for line in summary_lines(board, verdict)), "", "## Per task", ""]
    out += table(["task", "rank", "arm", "metric", "mean", "95% CI", "seeds", "verdict"],
                 [[str(r["task"]), "-" if pd.isna(r["rank"]) else str(int(r["rank"])),
                   arm_label(str(r["trainer"]), str(r["params_label"])), str(r["metric"]), _number(r["mean"]),
                   "no variance between seeds" if r["no_variance"] else _interval(r["ci95_low"], r["ci95_high"]),
                   str(r["count"]) if r["count"] == r["planned"] else f"{r['count']}/{r['planned']}",
                   verdict_cell(str(r["vs_best"]), r["p_vs_best"])] for _, r in board.iterrows()])
    out += [f"## Across tasks ({len(verdict.arms)} arms, {len(verdict.tasks)} tasks, {len(verdict.seeds)} common "
            "seeds)", "", "Scores normalized per task between its initial (metric `best`) or lowest observed score "
            "(0) and its best observed score (1)." + "".join(f" {n}." for n in [*verdict.left_out, *verdict.notes]), ""]
    if verdict.aggregate:
        out += ["### Aggregate (rliable: 95% stratified-bootstrap intervals)", ""]
        out += table(["arm", "IQM", "95% CI", "mean", "95% CI"],
                     [[r["arm"], _number(r["iqm"]), _interval(r["iqm_low"], r["iqm_high"]), _number(r["mean"]),
                       _interval(r["mean_low"], r["mean_high"])] for r in verdict.aggregate])
    if verdict.improvement:
        out += ["### Probability of improvement P(arm > versus) (rliable)", ""]
        out += table(["arm", "versus", "P", "95% CI"],
                     [[r["arm"], r["versus"], _number(r["probability"], 3), _interval(r["low"], r["high"])]
                      for r in verdict.improvement])
    if verdict.ranks:
        ranks = verdict.ranks
        out += ["### Average ranks over tasks (1 = best; Friedman and Nemenyi by autorank)", ""]
        out += table(["arm", "average rank"], [[arm, _number(rank, 3)] for arm, rank in ranks["mean_ranks"].items()])
        if ranks.get("test"):
            out += [f"{ranks['test']} p = {_number(ranks['p_value'], 3)}; {ranks['posthoc']} critical difference "
                    f"{_number(ranks['critical_difference'], 3)}; different: "
                    + ("; ".join(f"{a} vs {b}" for a, b in ranks["different"]) or "none"), ""]
        elif ranks.get("note"):
            out += [ranks["note"] + ".", ""]
    if verdict.bayesian:
        out += [f"### Bayesian signed-rank over tasks, ROPE {verdict.rope:g} (baycomp)", ""]
        out += table(["A", "B", "P(A better)", "P(equivalent)", "P(B better)"],
                     [[r["arm"], r["versus"], _number(r["p_better"], 3), _number(r["p_equivalent"], 3),
                       _number(r["p_worse"], 3)] for r in verdict.bayesian])
    return "\n".join(out).rstrip() + "\n"


CSV_HEADER = ["section", "task", "arm", "versus", "quantity", "value", "low", "high"]


def csv_rows(board: pd.DataFrame, verdict: CrossTaskVerdict) -> list[list[Any]]:
    """The verdict as one long table (:data:`CSV_HEADER`)."""
    rows: list[list[Any]] = []
    for _, r in board.iterrows():
        arm = arm_label(str(r["trainer"]), str(r["params_label"]))
        rows.append(["per_task", r["task"], arm, "", f"mean {r['metric']}", r["mean"], r["ci95_low"], r["ci95_high"]])
        rows.append(["per_task", r["task"], arm, "", "rank", r["rank"], "", ""])
        rows.append(["per_task", r["task"], arm, "best", f"vs_best {r['vs_best']}", r["p_vs_best"], "", ""])
    for r in verdict.aggregate:
        rows.append(["aggregate", "", r["arm"], "", "iqm", r["iqm"], r["iqm_low"], r["iqm_high"]])
        rows.append(["aggregate", "", r["arm"], "", "mean", r["mean"], r["mean_low"], r["mean_high"]])
    for r in verdict.improvement:
        rows.append(["improvement", "", r["arm"], r["versus"], "probability", r["probability"], r["low"], r["high"]])
    for arm, rank in (verdict.ranks.get("mean_ranks") or {}).items():
        rows.append(["ranks", "", arm, "", "average_rank", rank, "", ""])
    if verdict.ranks.get("test"):
        rows.append(["ranks", "", "", "", f"{verdict.ranks['test']}_p", verdict.ranks["p_value"], "", ""])
        rows.append(["ranks", "", "", "", "critical_difference", verdict.ranks["critical_difference"], "", ""])
    for r in verdict.bayesian:
        for name in ("p_better", "p_equivalent", "p_worse"):
            rows.append(["bayesian", "", r["arm"], r["versus"], name, r[name], "", ""])
    return rows


def to_csv(board: pd.DataFrame, verdict: CrossTaskVerdict, header: dict[str, Any]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    for row in csv_rows(board, verdict):
        writer.writerow(["" if v is None or (isinstance(v, float) and math.isnan(v)) else
                         (f"{v:.10g}" if isinstance(v, float) else v) for v in row])
    return buffer.getvalue()


def _clean(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if value is pd.NA or (isinstance(value, float) and not math.isfinite(value)):
        return None
    return value.item() if hasattr(value, "item") else value


def to_json(board: pd.DataFrame, verdict: CrossTaskVerdict, header: dict[str, Any]) -> str:
    per_task = [{k: r[k] for k in PER_TASK} for r in board.to_dict("records")]
    across = verdict.as_dict()
    across["normalized_scores"] = across.pop("scores")
    data = {**{k: v for k, v in header.items() if k != "metric_text"}, "summary": summary_lines(board, verdict),
            "per_task": per_task, "across_tasks": across}
    return json.dumps(_clean(data), indent=2) + "\n"


RENDERERS = {"md": to_markdown, "csv": to_csv, "json": to_json}


def verdict_main(run_paths: Sequence[str], fmt: str = "md", rope: float = DEFAULT_ROPE, metric: str = DEFAULT_METRIC,
                 alpha: float = ALPHA) -> int:
    """Print the verdict of one or more runs; 2 on a user error (bad run, format, metric or ROPE)."""
    try:
        if fmt not in RENDERERS:
            raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
        if metric not in METRICS and not is_equal_spend_metric(metric):
            raise ValueError(f"unknown metric {metric!r}; choose one of {', '.join(METRICS)}, at_equal, auc, "
                             "at_<spend>")
        if not 0 <= rope < 1:
            raise ValueError(f"--rope is a width on the normalized 0–1 scale: 0 <= rope < 1, got {rope}")
        runs = distinguish_runs(load_runs(list(run_paths)))
        if runs.jobs.empty:
            raise ValueError("no jobs in the given run(s) yet")
        ranked, text = metric, ""
        if is_equal_spend_metric(metric):  # the curve's reading replaces the selection-split score
            runs, ranked, text = as_metric(runs, metric), "best", equal_spend_text(metric)
        board = leaderboard(runs.jobs, ranked, alpha)
        verdict = cross_task_verdict(runs.jobs, ranked, rope, alpha)
    except (RunDirError, ValueError) as exc:
        print(f"trace-bench: error: {exc}", file=sys.stderr)
        return 2
    header = {"runs": runs.run_ids, "metric": metric,
              "metric_text": text or describe(task_metrics(runs.jobs, metric)),
              "test": test_text(alpha), "alpha": alpha, "rope": rope,
              "stub": bool("mode" in runs.jobs and (runs.jobs["mode"] == "stub").any())}
    sys.stdout.write(RENDERERS[fmt](board, verdict, header))
    return 0
