"""The sections of report.html that state the verdict: the leaderboard (ranks from the paired test, ties
as ties), the verdict across tasks (rliable, autorank, baycomp), the per-task tests behind the
win/tie/loss matrix, and the power plan.  Each names the one metric it compares."""

from __future__ import annotations

import numpy as np
import pandas as pd

from trace_bench.analysis import _html as h
from trace_bench.analysis.across_tasks import DEFAULT_ROPE, CrossTaskVerdict, cross_task_verdict
from trace_bench.analysis.across_tasks import cd_diagram as draw_cd_diagram
from trace_bench.analysis.load import RunSet
from trace_bench.analysis.pairs import pairwise_tests, win_matrix
from trace_bench.analysis.power import DEFAULT_ALPHA, DEFAULT_EFFECT, DEFAULT_POWER, power_table, seeds_text
from trace_bench.analysis.power import describe as describe_power
from trace_bench.analysis.protocol import RANK_SCORE, describe, task_metrics, with_rank_score
from trace_bench.analysis.race_history import race_history
from trace_bench.analysis.stats import leaderboard
from trace_bench.analysis.table import verdict_cell
from trace_bench.analysis.verdict_output import summary_lines
from trace_bench.store.paired import seeds_to_decide_without_variance

METRIC_NAMES = {"test_best": "test (best state)", "test_last": "test (last iterate)"}


def metric_cell(name: object) -> str:
    """How a table names a metric; the selection split is marked optimistic."""
    return METRIC_NAMES.get(str(name), "selection (optimistic)")


def interval_cell(row: pd.Series, low: str = "ci95_low", high: str = "ci95_high") -> str:
    """A 95 % interval, or ``no variance between seeds`` where the seeds all scored alike."""
    if bool(row.get("no_variance")):
        return "no variance between seeds"
    return h.interval(row[low], row[high])


def budget_spent_cell(row: pd.Series) -> str:
    """An arm's mean share of its budget spent, and its jobs that left over 10 % unspent, with why."""
    used = row.get("mean_budget_used")
    if used is None or pd.isna(used):
        return "no budget"
    under = int(row.get("under_spent") or 0)
    return f"{used:.0%}" + (f" ({under} under-spent: {row['under_spent_reasons']})" if under else "")


def seeds_cell(count: int, planned: int) -> str:
    return str(count) if count == planned else f"{count}/{planned} (incomplete)"


def leaderboard_section(runs: RunSet) -> str:
    board = leaderboard(runs.jobs)
    rows = [[r["task"], r["rank"] if pd.notna(r["rank"]) else "-", r["trainer"], r["params_label"],
             metric_cell(r["metric"]), verdict_cell(str(r["vs_best"]), r["p_vs_best"]),
             seeds_cell(int(r["count"]), int(r["planned"])), r["failed"], r["mean"], r["std"], interval_cell(r)]
            for _, r in board.iterrows()]
    classes = [" ".join(c for c in ("win" if r["vs_best"] == "best" else "", "" if r["complete"] else "incomplete")
                        if c) for _, r in board.iterrows()]
    table = h.table(rows, ["task", "rank", "trainer", "params", "metric", "verdict", "seeds", "failed", "mean", "std",
                           "95% CI"], numeric=range(6, 10), empty="no jobs", row_classes=classes)
    return "".join([h.paragraph(describe(task_metrics(runs.jobs))), table, race_history(runs)])


def verdict_section(jobs: pd.DataFrame, rope: float = DEFAULT_ROPE) -> str:
    """The verdict in short (per task and across tasks), then across tasks in full (:mod:`.across_tasks`):
    report.html's ``verdict`` section and the UI's verdict panel."""
    if jobs.empty:
        return h.paragraph("no jobs")
    try:
        verdict = cross_task_verdict(jobs, rope=rope)
    except ImportError as exc:
        return h.paragraph(f"the verdict across tasks needs the analysis extra (rliable, autorank, baycomp): {exc}")
    summary = "".join(f"<li>{h.text(line)}</li>" for line in summary_lines(leaderboard(jobs), verdict))
    parts: list[str] = [h.heading(3, "In short"), h.Safe(f"<ul>{summary}</ul>"), h.paragraph(scope_text(verdict))]
    if verdict.aggregate:
        rows = [[r["arm"], r["iqm"], h.interval(r["iqm_low"], r["iqm_high"]), r["mean"],
                 h.interval(r["mean_low"], r["mean_high"])] for r in verdict.aggregate]
        parts += [h.heading(3, "Normalized score over tasks and seeds (rliable, stratified bootstrap)"),
                  h.table(rows, ["arm", "IQM", "95% CI", "mean", "95% CI"], numeric=range(1, 5))]
    if verdict.improvement:
        arms = verdict.arms
        cells = {(r["arm"], r["versus"]): r for r in verdict.improvement}
        rows = [[x, *[("—" if x == y else f"{h.number(cells[(x, y)]['probability'], 3)} "
                      f"{h.interval(cells[(x, y)]['low'], cells[(x, y)]['high'])}") for y in arms]] for x in arms]
        parts += [h.heading(3, "Probability of improvement P(row > column) with its 95% CI (rliable)"),
                  h.table(rows, ["arm \\ versus", *arms])]
    parts.append(_ranks(verdict))
    if verdict.bayesian:
        rows = [[r["arm"], r["versus"], r["p_better"], r["p_equivalent"], r["p_worse"]] for r in verdict.bayesian]
        parts += [h.heading(3, f"Bayesian signed-rank test over tasks, ROPE {rope:g} (baycomp)"),
                  h.table(rows, ["A", "B", "P(A better)", "P(equivalent)", "P(B better)"], numeric=range(2, 5))]
    return "".join(parts)


def scope_text(verdict: CrossTaskVerdict) -> str:
    """Which arms, tasks and seeds the verdict across tasks covers, and how scores were normalized."""
    lows = sorted({n["low_from"] for n in verdict.normalization})
    text = (f"{len(verdict.arms)} arm(s) over {len(verdict.tasks)} task(s) and {len(verdict.seeds)} common seed(s); "
            f"each task's scores normalized between its {' / '.join(lows) or 'lowest'} score (0) and its best "
            "observed score (1).")
    for item in [*verdict.left_out, *verdict.notes]:
        text += f" {item}."
    return text


def _ranks(verdict: CrossTaskVerdict) -> str:
    ranks = verdict.ranks
    if not ranks:
        return ""
    rows = [[arm, rank] for arm, rank in ranks["mean_ranks"].items()]
    parts: list[str] = [h.heading(3, "Average rank over tasks (1 = best)"),
                        h.table(rows, ["arm", "average rank"], numeric=[1])]
    if ranks.get("test"):
        parts.append(h.paragraph(f"{ranks['test']} test over {len(verdict.tasks)} tasks: p = "
                                 f"{h.number(ranks['p_value'], 3)}; {ranks['posthoc']} critical difference "
                                 f"{h.number(ranks['critical_difference'], 3)} (autorank). Arms whose average ranks "
                                 "differ by less are not told apart (joined by a bar in the diagram)."))
        matrices = {arm: np.array(rows, dtype=float) for arm, rows in verdict.scores.items()}
        svg = draw_cd_diagram(matrices, verdict.tasks, verdict.alpha)
        if svg:
            parts.append(h.Safe(f'<div class="charts"><div>{svg}</div></div>'))
    elif ranks.get("note"):
        parts.append(h.paragraph(ranks["note"] + "."))
    return "".join(parts)


def win_matrix_section(runs: RunSet) -> str:
    ranked = with_rank_score(runs.jobs)
    tests = pairwise_tests(ranked, column=RANK_SCORE)
    if tests.empty:
        return h.paragraph("fewer than two arms share seeds on any task: nothing to pair")
    matrix = win_matrix(ranked, tests=tests)
    arms = sorted(set(matrix["arm"]) | set(matrix["versus"]))
    cells = {(r["arm"], r["versus"]): r for _, r in matrix.iterrows()}
    rows = []
    for arm in arms:
        row: list[object] = [arm]
        for other in arms:
            found = cells.get((arm, other))
            if found is None:
                row.append("—" if arm == other else "")
                continue
            css = "win" if found["wins"] > found["losses"] else "loss" if found["losses"] > found["wins"] else ""
            dropped = f" ({found['dropped']} seeds dropped)" if found["dropped"] else ""
            row.append(h.cell(f"{found['wins']}–{found['ties']}–{found['losses']}{dropped}", css))
        rows.append(row)
    detail = [[r["task"], r["arm_a"], r["arm_b"], r["n"], r["dropped"], r["mean_diff"],
               h.interval(r["ci_low"], r["ci_high"]), "no variance" if r["no_variance"] else r["statistic"],
               r["p_value"], r["p_holm"], f"{r['wins']}/{r['ties']}/{r['losses']}", r["outcome"]]
              for _, r in tests.iterrows()]
    classes = ["win" if o == "better" else "loss" if o == "worse" else "" for o in tests["outcome"]]
    pairs = int(tests.groupby("task").size().max())
    reach = (f"Identical differences on every seed (no variance between seeds) decide only from "
             f"{seeds_to_decide_without_variance(pairs)} seeds when a task has {pairs} pair(s) of arms.")
    return "".join([h.paragraph("Row arm against column arm: tasks won–tied–lost. " + reach + " "
                                + describe(task_metrics(runs.jobs))),
                    h.table(rows, ["arm \\ versus", *arms]),
                    h.heading(3, "Paired tests per task (A − B)"),
                    h.table(detail, ["task", "A", "B", "seeds", "dropped", "mean A − B", "95% t CI", "t", "p",
                                     "Holm p (task)", "seeds W/T/L", "outcome for A"],
                            numeric=range(3, 10), row_classes=classes)])


def power_section(runs: RunSet) -> str:
    frame = power_table(runs.jobs, DEFAULT_EFFECT)
    if frame.empty:
        return h.paragraph("no task has two arms with a scored seed: nothing to plan")
    rows = [[r["task"], r["best"], r["arm"], metric_cell(r["metric"]), r["n"], r["dropped"], r["mean_diff"],
             r["note"] or r["sd_diff"], r["alpha_level"], r["power"], seeds_text(r["seeds_needed"], r["note"]),
             r["min_detectable_diff"]]
            for _, r in frame.iterrows()]
    underpowered = ["low" if pd.notna(p) and p < DEFAULT_POWER else "" for p in frame["power"]]
    return "".join([h.paragraph(describe_power(DEFAULT_ALPHA, DEFAULT_POWER, DEFAULT_EFFECT)),
                    h.table(rows, ["task", "best", "runner-up", "metric", "seeds", "dropped", "mean best − arm",
                                   "sd of the differences", "level", "power", f"seeds for {DEFAULT_POWER:.0%}",
                                   "min. detectable difference"], numeric=range(4, 12), row_classes=underpowered)])
