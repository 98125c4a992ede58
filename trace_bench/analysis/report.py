"""``report.html``: one self-contained page per run (or group of runs).

Inline CSS and SVG only, no scripts and no external resources, so the file opens anywhere, can be
mailed or archived with the run, and cannot run code injected through a task id or an error text.
Sections (stable ids, linked from the top): leaderboard, verdict, per-task, curves, frontier, reach,
win-matrix, power, integrity, cost, failures.  Every section that compares arms names the run's one
metric (the held-out test score of the best state, or the selection split's best, marked optimistic,
where a task has no test split); the verdict's sections are in :mod:`.report_verdict`.
``report_main`` is what ``trace-bench report`` calls: exit code 0, or 2 with a one-line message for
anything the user can fix (a wrong path, a damaged run, an unwritable output), never a traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from trace_bench.analysis import _html as h
from trace_bench.analysis.best_known import CANDIDATE_REACHABLE, best_known_summary
from trace_bench.analysis.chart import Panel, Series, curve_chart
from trace_bench.analysis.curves import AXES, arm_curves, best_so_far, generalization_gap, job_auc
from trace_bench.analysis.equal_spend import equal_spend_html
from trace_bench.analysis.frontier import frontier_lines, frontier_table
from trace_bench.analysis.frontier_chart import frontier_chart
from trace_bench.analysis.integrity import denial_events, describe_row, integrity_table, leak_findings
from trace_bench.analysis.load import ARM, RunDirError, RunSet, distinguish_runs, load_runs
from trace_bench.analysis.reach import REACH_NOTE, reach_html, reach_table
from trace_bench.analysis.report_verdict import (
    budget_spent_cell,
    interval_cell,
    leaderboard_section,
    metric_cell,
    power_section,
    seeds_cell,
    verdict_section,
    win_matrix_section,
)
from trace_bench.analysis.stats import arm_stats, leaderboard
from trace_bench.store.frontier import COST_AXES
from trace_bench.store.models import Spend, arm_label
from trace_bench.store.run_store import RunStore
from trace_bench.store.status import Status

SECTIONS = (("leaderboard", "Leaderboard"), ("verdict", "Verdict across tasks"), ("per-task", "Per-task results"),
            ("curves", "Anytime curves"), ("frontier", "Cost–quality frontier"), ("reach", "Cost to reach"),
            ("win-matrix", "Win / tie / loss"), ("power", "Power"), ("integrity", "Integrity"), ("cost", "Cost"),
            ("failures", "Failures"))
MAX_FAILURE_ROWS = 500


def _arm_cells(row: pd.Series) -> list[str]:
    return [row["trainer"], row["params_label"]]


def _full_precision(value: float) -> str:
    """A best known value as its record holds it (``repr`` of the float: 2.63598308, never rounded to 2.636,
    which would read a result between the two as beating it)."""
    return "" if pd.isna(value) else repr(float(value))


def _best_known(runs: RunSet) -> str:
    """Tasks with a best known value (discovery tasks): each arm's distance to it."""
    summary = best_known_summary(runs.jobs)
    if summary.empty:
        return ""
    rows = [[r["task"], *_arm_cells(r), _full_precision(r["best_known"]), r["n"], r["pct_mean"], r["pct_max"], r["pct_alphaevolve_mean"],
             "candidate-reachable" if CANDIDATE_REACHABLE in r["trust"] else r["trust"] or "-"]
            for _, r in summary.iterrows()]
    note = ("% of best known: the best state's value against the best value known today (100 = matched, above = "
            "beaten; the built-in discovery problems' registry names its source and date); % of AlphaEvolve: against "
            "AlphaEvolve's value (those problems' second yardstick). Candidate-reachable scores were computed in the process the candidate ran in (a plain "
            "evaluate() task): treat them as claims to re-check.")
    return "".join([h.heading(3, "Distance to the best known value and score trust"), h.paragraph(note),
                    h.table(rows, ["task", "trainer", "params", "best known", "seeds", "% of best known (mean)",
                                   "% of best known (best seed)", "% of AlphaEvolve (mean)", "score trust"],
                            numeric=range(3, 8))])


def _per_task(runs: RunSet) -> str:
    """Per task, each arm on the verdict's metric (the leaderboard's rows) beside the other scores, labelled."""
    board = leaderboard(runs.jobs)
    gaps = generalization_gap(runs.jobs).set_index(ARM)
    stats = arm_stats(runs.jobs).set_index(ARM)
    parts: list[str] = []
    for task, group in board.groupby("task", sort=True):
        rows = []
        for _, r in group.iterrows():
            key = (r["task"], r["trainer"], r["params_label"])
            gap = gaps.loc[key] if key in gaps.index else None
            budget = int(stats.loc[key, "budget_exhausted"]) if key in stats.index else 0
            rows.append([*_arm_cells(r), seeds_cell(int(r["count"]), int(r["planned"])), r["failed"], budget,
                         metric_cell(r["metric"]), r["mean"], interval_cell(r), r["std"], r["mean_best"],
                         r["mean_test"], r["mean_test_last"], r["mean_initial"],
                         h.mean_pm(gap["gap_mean"], gap["gap_ci_half"]) if gap is not None else "", budget_spent_cell(r)])
        classes = ["" if r["complete"] else "incomplete" for _, r in group.iterrows()]
        parts += [h.heading(3, task), h.table(rows, ["trainer", "params", "seeds", "failed", "budget exhausted",
                                                      "metric", "mean", "95% CI", "std",
                                                      "best, selection split (optimistic)", "test, best state",
                                                      "test, last iterate", "initial (selection split)", "best − test",
                                                      "budget spent"],
                                              numeric=[2, 3, 4, *range(6, 14)], row_classes=classes)]
    return "".join(parts) or h.paragraph("no jobs")


def _colours(runs: RunSet) -> dict[tuple[str, str], int]:
    arms = sorted({(t, p) for t, p in zip(runs.jobs["trainer"], runs.jobs["params_label"], strict=True)})
    return {arm: index for index, arm in enumerate(arms)}


def _curves(runs: RunSet) -> str:
    if runs.curves.empty:
        return h.paragraph("no curve.csv files (jobs failed before their first evaluation?)")
    colours = _colours(runs)
    prepared = best_so_far(runs.curves)
    empty = pd.DataFrame(columns=["trainer", "params_label", "x", "mean", "low", "high"])
    by_axis = {axis: dict(list(arm_curves(prepared, axis).groupby("task"))) for axis in AXES}
    stub = "mode" in runs.jobs and bool((runs.jobs["mode"] == "stub").all())
    steps: dict[str, pd.DataFrame] = {}

    def by_step(task: str) -> pd.DataFrame:
        if not steps:
            steps.update(dict(list(arm_curves(prepared, "step").groupby("task"))))
        return steps.get(task, empty)

    auc = arm_stats(job_auc(prepared, "llm_calls"), column="auc")
    auc_by_task = dict(list(auc.groupby("task"))) if not auc.empty else {}
    parts: list[str] = []
    for task in sorted(runs.curves["task"].dropna().unique()):
        panels = []
        for axis, name in AXES.items():
            frame = by_axis[axis].get(task, empty)
            title = f"best selection-split score vs {name}"
            if axis == Spend.COST and not frame.empty and float(frame["x"].max()) <= 0:
                # nothing spent in USD: the panel charts optimisation steps instead, and says why
                name, title = "step", f"best score vs step: {'stub mode' if stub else 'no price'}, USD is 0"
                frame = by_step(task)
            series = [Series(arm_label(trainer, label), g["x"].tolist(), g["mean"].tolist(), g["low"].tolist(),
                             g["high"].tolist(), colours.get((trainer, label), 0))
                      for (trainer, label), g in frame.groupby(["trainer", "params_label"], sort=True)]
            if frame.empty or float(frame["x"].max()) <= 0:
                series = []
            panels.append(Panel(title, name, series))
        chart = curve_chart(panels, y_label=CURVE_Y_LABEL, columns=2, panel_px=(500, 260))
        rows = [[*_arm_cells(r), r["count"], h.mean_pm(r["mean"], r["ci_half"])]
                for _, r in auc_by_task.get(task, empty).iterrows()]
        parts += [h.heading(3, task), h.Safe(f'<div class="charts">{chart}</div>'),
                  h.table(rows, ["trainer", "params", "seeds",
                                 "normalised AUC by LLM calls, selection split (mean ± 95% CI)"],
                          numeric=range(2, 4), empty="no scored curves")]
    return "".join(parts)


def _frontier(runs: RunSet) -> str:
    frame = frontier_table(runs.jobs)
    if frame.empty:
        return h.paragraph("no jobs")
    colours = _colours(runs)
    parts: list[str] = []
    for (task, group), line in zip(frame.groupby("task", sort=True), frontier_lines(frame), strict=True):
        axis = str(group["cost_axis"].iloc[0])
        chart = frontier_chart(group, title=f"{task}: score vs {COST_AXES[axis]} per job", styles=colours)
        rows = [[*_arm_cells(r), _frontier_seeds(r), r["cost_mean"], h.interval(r["cost_low"], r["cost_high"]),
                 r["score_mean"], h.interval(r["score_low"], r["score_high"]), metric_cell(r["metric"]),
                 "yes" if r["on_frontier"] else "" if r["complete"] else "no: incomplete"]
                for _, r in group.iterrows()]
        parts += [h.heading(3, task), h.paragraph("Frontier " + line.split("]: ", 1)[-1], "plain"),
                  h.Safe(f'<div class="charts">{chart}</div>'),
                  h.table(rows, ["trainer", "params", "seeds", f"{COST_AXES[axis]} per job (mean)", "95% CI",
                                 "score (mean)", "95% CI", "metric", "on frontier"], numeric=range(2, 7),
                          row_classes=["win" if r["on_frontier"] else "" if r["complete"] else "incomplete"
                                       for _, r in group.iterrows()])]
    return "".join(parts)


def _integrity_seeds(row: pd.Series) -> str:
    """An integrity row's scored seeds: ``k/N (incomplete)`` for an arm with failed or missing seeds."""
    return str(row["scored"]) if row["complete"] else f"{row['scored']}/{row['planned']} (incomplete)"


def _frontier_seeds(row: pd.Series) -> str:
    """A frontier row's seeds: ``k/N (incomplete)`` for an arm with failed or missing seeds."""
    return str(row["n"]) if row["complete"] else f"{row['n']}/{row['planned']} (incomplete)"


def _integrity(runs: RunSet) -> str:
    table = integrity_table(runs.jobs)
    if table.empty:
        return h.paragraph("no jobs")
    flagged = table[table["flags"] != ""]
    summary = ("No arm flagged: no held-out item in any audited state, no sandbox denial, no unusual "
               "selection-vs-test gap." if flagged.empty else
               f"{len(flagged)} arm(s) flagged: " + "; ".join(f"{arm_label(r['trainer'], r['params_label'])} on "
                                                            f"{r['task']}: {describe_row(r)}"
                                                            for _, r in flagged.iterrows()) + ".")
    rows = [[r["task"], *_arm_cells(r), _integrity_seeds(r), f"{r['audited']} / {r['jobs']}", r["leaked_jobs"],
             r["leaked_test_items"], r["leaked_validation_items"], r["sandbox_denials"], r["denial_kinds"],
             "no variance between seeds" if r["gap_no_variance"] else h.mean_pm(r["gap_mean"], r["gap_ci_half"]),
             r["gap_n"], r["others_gap_mean"], r["gap_p"], r["flags"]]
            for _, r in table.iterrows()]
    classes = [" ".join(c for c in ("loss" if r["flags"] else "", "" if r["complete"] else "incomplete") if c)
               for _, r in table.iterrows()]
    parts = [h.paragraph(summary, "plain"),
             h.table(rows, ["task", "trainer", "params", "seeds scored", "audited / jobs", "jobs with test leaks",
                            "test items leaked", "validation items leaked", "sandbox denials", "denials by kind",
                            "selection − test gap (mean ± 95% CI)", "gap seeds", "other arms' gap",
                            "gap above others: Holm p", "flags"], numeric=range(4, 14), row_classes=classes)]
    findings = leak_findings(runs)
    if not findings.empty:
        rows = [[r["job_id"], r["task"], *_arm_cells(r), r["seed"], r["split"], r["item"], r["kind"], r["state"],
                 r["parameter"], r["excerpt"], "task (initial state)" if r["in_initial"] else "optimization"]
                for _, r in findings.iterrows()]
        parts += [h.heading(3, "Leaks found (excerpts masked to their first words)"),
                  h.table(rows, ["job", "task", "trainer", "params", "seed", "split", "item", "found by", "state",
                                 "parameter", "excerpt", "put there by"], numeric=[4, 6], preformatted=[10])]
    events = denial_events(runs)
    if not events.empty:
        rows = [[r["job_id"], r["task"], *_arm_cells(r), r["seed"], r["kind"], r["target"], r["status"],
                 "yes" if r["caught"] else "", r["detail"]] for _, r in events.iterrows()]
        parts += [h.heading(3, f"Sandbox denials (first {len(events)})"),
                  h.table(rows, ["job", "task", "trainer", "params", "seed", "kind", "target", "status",
                                 "caught by the code", "detail"], numeric=[4], preformatted=[9])]
    return "".join(parts)


def _cost(runs: RunSet) -> str:
    jobs = runs.jobs
    rows = []
    for key, g in jobs.groupby(ARM, sort=True):
        rows.append([*key, len(g), g["llm_calls"].mean(), g["cache_hits"].mean(), g["total_tokens"].mean(),
                     g["cost_usd"].mean(), g["time_seconds"].mean(), g["llm_calls"].sum(), g["total_tokens"].sum(),
                     g["cost_usd"].sum(), g["time_seconds"].sum(), "yes" if g["tokens_estimated"].any() else ""])
    calls = runs.llm_calls
    by_role = []
    if not calls.empty:
        for (trainer, label, role), g in calls.groupby(["trainer", "params_label", "role"], sort=True, dropna=False):
            by_role.append([trainer, label, role, len(g), int(g["cached"].sum()), int((g["error"] != "").sum()),
                            g["retries"].sum(), g["prompt_tokens"].sum() + g["completion_tokens"].sum(),
                            g["cost_usd"].sum(), g["latency_s"].mean()])
    totals = (f"Run totals: {h.number(jobs['llm_calls'].sum())} LLM calls, {h.number(jobs['total_tokens'].sum())} "
              f"tokens, {h.number(jobs['cost_usd'].sum())} USD, {h.number(jobs['time_seconds'].sum())} s of job time.")
    if "mode" in jobs and (jobs["mode"] == "stub").any():
        totals += " " + STUB_NOTE
    return "".join([h.paragraph(totals, "plain"),
                    h.table(rows, ["task", "trainer", "params", "jobs", "calls / job", "cache hits / job",
                                   "tokens / job", "USD / job", "seconds / job", "calls", "tokens", "USD",
                                   "seconds", "tokens estimated"], numeric=range(3, 13), empty="no jobs"),
                    h.heading(3, "LLM calls by role (from events.jsonl, all tasks)"),
                    h.table(by_role, ["trainer", "params", "role", "calls", "cached", "failed", "retries", "tokens",
                                      "USD", "mean latency (s)"], numeric=range(3, 10), empty="no llm_call events")])


def _failures(runs: RunSet) -> str:
    jobs = runs.jobs
    failed = jobs[~jobs["scored"]]
    flagged = jobs[jobs["scored"] & (jobs["status"] != Status.OK.value)]
    parts: list[str] = []
    for frame, title in ((failed, "Excluded from statistics"), (flagged, "Included, flagged (budget exhausted)")):
        shown = frame.head(MAX_FAILURE_ROWS)
        rows = [[r["run_id"], r["job_id"], r["task"], *_arm_cells(r), r["seed"], r["status"],
                 _short(r["error"]) or ("no score recorded" if r["status"] == Status.OK else "")]
                for _, r in shown.iterrows()]
        parts += [h.heading(3, f"{title}: {len(frame)}"),
                  h.table(rows, ["run", "job", "task", "trainer", "params", "seed", "status", "error"],
                          numeric=[5], preformatted=[7], empty="none")]
        if len(frame) > len(shown):
            parts.append(h.paragraph(f"{len(frame) - len(shown)} more; see results.csv"))
    return "".join(parts)


def _short(error: object, limit: int = 400) -> str:
    message = str(error or "").strip()
    return message if len(message) <= limit else message[:limit] + " …"


def _intro(runs: RunSet) -> list[str]:
    lines = []
    for run_id in runs.run_ids:
        manifest = runs.manifests[run_id]
        jobs = runs.jobs[runs.jobs["run_id"] == run_id]
        counts = ", ".join(f"{status} {count}" for status, count in sorted(jobs["status"].value_counts().items()))
        planned = len(manifest.get("jobs") or []) or len(jobs)
        model = ", ".join(sorted({m for m in jobs["llm_model"] if m})) or "-"
        lines.append(f"Run {run_id} ({manifest.get('mode') or '-'} mode, LLM {model}, created "
                     f"{manifest.get('created_at') or '-'}): {len(jobs)} of {planned} planned jobs have results"
                     f" ({counts or 'none'}).")
        if manifest.get("mode") == "stub":
            lines.append(f"Run {run_id}: {STUB_NOTE}")
        weak = int(jobs["sandbox"].astype(str).str.contains("weak").sum()) if "sandbox" in jobs else 0
        if weak:
            lines.append(f"WARNING: in run {run_id}, {weak} job(s) ran LLM-written code in the WEAK sandbox "
                         "(no bubblewrap): their candidates were not isolated from the machine (column sandbox).")
    stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
    lines.append(f"Scores: higher is better. Statistics use jobs that ended ok or budget_exhausted; the others are "
                 f"counted under failures. Generated {stamp}.")
    return lines


CURVE_Y_LABEL = "best score so far, selection split (optimistic)"
STUB_NOTE = ("Stub mode: a deterministic stub answered every LLM call, so tokens count its answers and USD is 0; the "
             "numbers show the harness at work, not a real model's quality or cost.")
NOTES = {
    "leaderboard": "Per task (one task under one set of eval_kwargs, named by its label), one metric: the held-out "
                   "test score of the best state where the task has a test split, else the best score on the "
                   "selection split, which is optimistic (that split chose the state). Ranks come from the verdict's "
                   "paired t-test over seeds, Holm-corrected over the task's pairs of arms at alpha 0.05: every arm "
                   "the test cannot separate from the best shares rank 1 (verdict: tied, with the Holm p-value "
                   "against the best); an arm it separates is ranked 1 + the number of arms found better. An arm "
                   "with failed or missing seeds is marked k/N (incomplete) and ranked after every complete arm of "
                   "its task: its surviving seeds may be its lucky ones. 95% CI: Student t over seeds, inside the "
                   "task's declared score range; seeds that all scored alike say 'no variance between seeds'.",
    "verdict": "Across tasks: each task's scores normalized between its initial (or lowest observed) and its best "
               "observed score; interquartile mean and mean over seeds and tasks with 95% stratified-bootstrap "
               "intervals and the probability of improvement of each arm over each other (rliable, Agarwal et al. "
               "2021); average ranks with Friedman's test and Nemenyi's critical difference where there are at least "
               "five tasks (autorank, Demšar 2006); a Bayesian signed-rank test with a region of practical "
               "equivalence (baycomp, Benavoli et al. 2017).",
    "per-task": "The verdict's metric per arm (mean, its 95% interval inside the score's range, std), then the other "
                "scores, labelled: best on the selection split (validation, else train; optimistic), the held-out "
                "test score of the best state and of the last iterate, the initial score, and the generalization "
                "gap (best − test).",
    "curves": "Best score so far on the selection split (the only score measured at every step; optimistic, and "
              "not the verdict's held-out metric), mean over seeds with 95% band, against cumulative spend up to "
              "each job's total trainer-phase spend; a finished job keeps its best, and the harness's measurement "
              "of what a stopped trainer left is never counted. AUC: area under the best-so-far curve divided by "
              "the task's largest budget.",
    "frontier": "Which arm buys the most score per unit of cost: per task, each arm's mean trainer-phase cost per "
                "job over every job that ran, failed ones included (USD, or tokens, or LLM calls where USD is "
                "unknown) against its mean score on the verdict's metric, with 95% intervals on both; the frontier "
                "(filled markers, shaded rows) holds the arms that no other arm beats on both, and its dashed "
                "staircase is the best mean score available for at most a given cost. An arm with failed or missing "
                "seeds (k/N, incomplete: hollow grey marker, italic row) is never on the frontier and pushes no "
                "complete arm off it: its surviving seeds may be its lucky ones.",
    "reach": REACH_NOTE + " Targets: 90, 99 and 100 % of the best value known today (the built-in discovery "
             "problems' registry; % of AlphaEvolve in the leaderboard section).",
    "win-matrix": "Arms paired by seed on each task, on the verdict's metric, over the seeds both arms completed "
                  "(dropped: seeds either arm ran that are not paired): the verdict's paired t-test, Holm-corrected "
                  "over the task's pairs of arms (the leaderboard's decisions), alpha 0.05; undecided counts as a "
                  "tie. Where every seed gave the same difference (no variance between seeds) the p-value is the "
                  "exact sign-flip 2/2^n.",
    "power": "How many seeds would separate each task's best arm from each runner-up, if they truly differed by "
             "0.05 in the score's units (trace-bench power --effect sets it): the verdict's test at its Holm level, "
             "with the sd of the paired differences from this run; rows below 80% power are shaded. No variance "
             "between seeds is said as such, never as power.",
    "integrity": "Did the optimizer cheat? Per arm: held-out test items (validation apart) whose input or reference "
                 "answer its best or final states hold, boundaries its sandboxed candidates ran into (refused "
                 "syscalls, writes, network, processes, forged results, timeouts), and its selection-vs-test gap, "
                 "flagged where the verdict's paired test finds it above the task's other arms' gaps, seed by seed "
                 "(Holm over the task's arms): a gap without variance between seeds alone never flags. Jobs killed "
                 "before they ended are not audited for leaks; an arm with failed or missing seeds is marked k/N "
                 "(incomplete, italic): its gap is over its surviving seeds only (gap seeds).",
    "cost": "Spend per arm over all its jobs, failed ones included (they spent too).",
    "failures": "Jobs that did not end ok, with status and error.",
}


def build_report(runs: RunSet) -> str:
    """The report's HTML for loaded runs."""
    runs = distinguish_runs(runs)
    builders = {"leaderboard": lambda r: leaderboard_section(r) + _best_known(r), "verdict": lambda r: verdict_section(r.jobs),
                "per-task": _per_task, "curves": lambda r: _curves(r) + equal_spend_html(r), "frontier": _frontier,
                "reach": lambda r: reach_html(reach_table(r.jobs, r.curves)), "win-matrix": win_matrix_section,
                "power": power_section, "integrity": _integrity, "cost": _cost, "failures": _failures}
    body = [h.section(sid, name, NOTES[sid], h.Safe(builders[sid](runs))) for sid, name in SECTIONS]
    title = "trace-bench report: " + ", ".join(runs.run_ids)
    return h.page(title, _intro(runs), SECTIONS, body)


def write_report(run_dirs: str | Path | Sequence[str | Path], out_path: str | Path | None = None) -> Path:
    """Load runs and write their report atomically; by default into the run directory for one run, else
    ``report.html`` in the working directory.  Returns the path written."""
    items = [run_dirs] if isinstance(run_dirs, (str, Path)) else list(run_dirs)
    runs = load_runs(items)
    if out_path is None:
        out_path = Path(items[0]) / "report.html" if len(items) == 1 else Path("report.html")
    return RunStore(items[0]).write_report(build_report(runs), out_path)


def report_main(run_paths: list[str], out: str | None = None) -> int:
    """Write report.html for one or more runs and print where it went; 2 on a user error."""
    if not run_paths:
        print("trace-bench: error: report needs at least one run directory", file=sys.stderr)
        return 2
    try:
        path = write_report(run_paths, out)
    except RunDirError as exc:
        print(f"trace-bench: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"trace-bench: error: cannot write the report: {exc}", file=sys.stderr)
        return 2
    print(f"report written: {path}")
    return 0
