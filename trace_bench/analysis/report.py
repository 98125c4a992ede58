"""``report.html``: one self-contained page per run (or group of runs).

Inline CSS and SVG only, no scripts and no external resources, so the file opens anywhere, can be
mailed or archived with the run, and cannot run code injected through a task id or an error text.
Sections (stable ids, linked from the top): leaderboard, per-task, curves, frontier, win-matrix, power,
integrity, cost, failures.
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
from trace_bench.analysis.frontier import frontier_lines, frontier_table
from trace_bench.analysis.frontier_chart import frontier_chart
from trace_bench.analysis.integrity import denial_events, describe_row, integrity_table, leak_findings
from trace_bench.analysis.load import ARM, RunDirError, RunSet, distinguish_runs, load_runs
from trace_bench.analysis.power import DEFAULT_ALPHA, DEFAULT_POWER, power_table, seeds_text
from trace_bench.analysis.power import describe as describe_power
from trace_bench.analysis.protocol import RANK_SCORE, describe, task_metrics, with_rank_score
from trace_bench.analysis.stats import (
    arm_stats,
    incomplete_note,
    leaderboard,
    pairwise_tests,
    win_matrix,
)
from trace_bench.store.frontier import COST_AXES
from trace_bench.store.models import arm_label
from trace_bench.store.run_store import RunStore
from trace_bench.store.status import Status

SECTIONS = (("leaderboard", "Leaderboard"), ("per-task", "Per-task results"), ("curves", "Anytime curves"),
            ("frontier", "Cost–quality frontier"), ("win-matrix", "Win / tie / loss"), ("power", "Power"), ("integrity", "Integrity"), ("cost", "Cost"),
            ("failures", "Failures"))
MAX_FAILURE_ROWS = 500


def _arm_cells(row: pd.Series) -> list[str]:
    return [row["trainer"], row["params_label"]]


def _leaderboard(runs: RunSet) -> str:
    board = leaderboard(runs.jobs)
    rows = [[r["task"], r["rank"] if pd.notna(r["rank"]) else "-", *_arm_cells(r), _metric_cell(r["metric"]),
             _seeds_cell(r), r["failed"], r["budget_exhausted"], r["mean"], r["std"],
             h.interval(r["ci_low"], r["ci_high"])]
            for _, r in board.iterrows()]
    classes = ["" if r["complete"] else "incomplete" for _, r in board.iterrows()]
    table = h.table(rows, ["task", "rank", "trainer", "params", "ranked on", "seeds", "failed", "budget exhausted",
                           "mean", "std", "95% CI"], numeric=range(5, 10), empty="no jobs", row_classes=classes)
    return "".join([h.paragraph(describe(task_metrics(runs.jobs))), table, _best_known(runs)])


def _best_known(runs: RunSet) -> str:
    """Tasks with a best known value (discovery tasks): each arm's distance to it."""
    summary = best_known_summary(runs.jobs)
    if summary.empty:
        return ""
    rows = [[r["task"], *_arm_cells(r), r["best_known"], r["n"], r["pct_mean"], r["pct_max"],
             "candidate-reachable" if CANDIDATE_REACHABLE in r["trust"] else r["trust"] or "-"]
            for _, r in summary.iterrows()]
    note = ("% of best known: the best state's value against the best published value of the task (100 = matched, "
            "above = beaten). Candidate-reachable scores were computed in the process the candidate ran in (a plain "
            "evaluate() task): treat them as claims to re-check.")
    return "".join([h.heading(3, "Distance to the best known value and score trust"), h.paragraph(note),
                    h.table(rows, ["task", "trainer", "params", "best known", "seeds", "% of best known (mean)",
                                   "% of best known (best seed)", "score trust"], numeric=range(3, 7))])


def _seeds_cell(row: pd.Series) -> str:
    """Scored seeds; ``k/N seeds, incomplete`` for an arm with failed or missing seeds."""
    note = incomplete_note(int(row["count"]), int(row["planned"]))
    return str(row["count"]) if not note else f"{row['count']}/{row['planned']} (incomplete)"


def _metric_cell(name: object) -> str:
    """The leaderboard's name of a ranking metric; the selection split is marked optimistic."""
    return {"test_best": "test (best state)", "test_last": "test (last iterate)"}.get(str(name),
                                                                                     "selection (optimistic)")


def _per_task(runs: RunSet) -> str:
    arms = arm_stats(runs.jobs)
    gaps = generalization_gap(runs.jobs).set_index(ARM)
    parts: list[str] = []
    for task, group in arms.groupby("task", sort=True):
        rows = []
        for _, r in group.iterrows():
            key = (r["task"], r["trainer"], r["params_label"])
            gap = gaps.loc[key] if key in gaps.index else None
            rows.append([*_arm_cells(r), _seeds_cell(r), r["failed"], r["budget_exhausted"],
                         h.mean_pm(r["mean"], r["ci_half"]), h.interval(r["ci_low"], r["ci_high"]), r["std"],
                         h.mean_pm(r.get("test_mean"), r.get("test_ci_half")),
                         h.mean_pm(r.get("test_last_mean"), r.get("test_last_ci_half")), r.get("initial_mean"),
                         h.mean_pm(gap["gap_mean"], gap["gap_ci_half"]) if gap is not None else ""])
        classes = ["" if r["complete"] else "incomplete" for _, r in group.iterrows()]
        parts += [h.heading(3, task), h.table(rows, ["trainer", "params", "seeds", "failed", "budget exhausted",
                                                      "best, selection split (mean ± 95% CI)", "95% CI", "std",
                                                      "test, best state", "test, last iterate", "initial",
                                                      "best − test"], numeric=range(2, 12), row_classes=classes)]
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
    auc = arm_stats(job_auc(prepared, "llm_calls"), column="auc")
    auc_by_task = dict(list(auc.groupby("task"))) if not auc.empty else {}
    parts: list[str] = []
    for task in sorted(runs.curves["task"].dropna().unique()):
        panels = []
        for axis, name in AXES.items():
            frame = by_axis[axis].get(task, empty)
            series = [Series(arm_label(trainer, label), g["x"].tolist(), g["mean"].tolist(), g["low"].tolist(),
                             g["high"].tolist(), colours.get((trainer, label), 0))
                      for (trainer, label), g in frame.groupby(["trainer", "params_label"], sort=True)]
            title = f"best score vs {name}"
            if frame.empty or float(frame["x"].max()) <= 0:
                if axis == "usd" and not frame.empty:  # say why the panel is empty
                    title += ": every job cost 0 (stub mode, or the model's price is unknown)"
                series = []
            panels.append(Panel(title, name, series))
        chart = curve_chart(panels, y_label="best score so far", columns=2, panel_px=(500, 260))
        rows = [[*_arm_cells(r), r["count"], h.mean_pm(r["mean"], r["ci_half"])]
                for _, r in auc_by_task.get(task, empty).iterrows()]
        parts += [h.heading(3, task), h.Safe(f'<div class="charts">{chart}</div>'),
                  h.table(rows, ["trainer", "params", "seeds", "normalised AUC by LLM calls (mean ± 95% CI)"],
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
        rows = [[*_arm_cells(r), _frontier_seeds(r), h.mean_pm(r["cost_mean"], _half(r["cost_low"], r["cost_high"])),
                 h.mean_pm(r["score_mean"], _half(r["score_low"], r["score_high"])), _metric_cell(r["metric"]),
                 "yes" if r["on_frontier"] else "" if r["complete"] else "no: incomplete"]
                for _, r in group.iterrows()]
        parts += [h.heading(3, task), h.paragraph("Frontier " + line.split("]: ", 1)[-1], "plain"),
                  h.Safe(f'<div class="charts">{chart}</div>'),
                  h.table(rows, ["trainer", "params", "seeds", f"{COST_AXES[axis]} per job (mean ± 95% CI)",
                                 "score (mean ± 95% CI)", "score", "on frontier"], numeric=range(2, 5),
                          row_classes=["win" if r["on_frontier"] else "" if r["complete"] else "incomplete"
                                       for _, r in group.iterrows()])]
    return "".join(parts)


def _integrity_seeds(row: pd.Series) -> str:
    """An integrity row's scored seeds: ``k/N (incomplete)`` for an arm with failed or missing seeds."""
    return str(row["scored"]) if row["complete"] else f"{row['scored']}/{row['planned']} (incomplete)"


def _frontier_seeds(row: pd.Series) -> str:
    """A frontier row's seeds: ``k/N (incomplete)`` for an arm with failed or missing seeds."""
    return str(row["n"]) if row["complete"] else f"{row['n']}/{row['planned']} (incomplete)"


def _half(low: float, high: float) -> float:
    return (high - low) / 2


def _win_matrix(runs: RunSet) -> str:
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
               h.interval(r["ci_low"], r["ci_high"]),
               r["p_value"], r["p_holm"], h.interval(r["boot_low"], r["boot_high"]),
               f"{r['wins']}/{r['ties']}/{r['losses']}", r["outcome"]] for _, r in tests.iterrows()]
    classes = ["win" if o == "win" else "loss" if o == "loss" else "" for o in tests["outcome"]]
    fewest = int(tests["n"].min())
    reach = (f"With {fewest} paired seeds the smallest two-sided Wilcoxon p is 2/2^{fewest} = "
             f"{h.number(2 / 2 ** fewest, 3)}, before Holm multiplies it by up to the {len(tests)} comparisons; "
             "use more seeds if that cannot fall below 0.05.")
    return "".join([h.paragraph("Row arm against column arm: tasks won–tied–lost. " + reach + " "
                                + describe(task_metrics(runs.jobs))),
                    h.table(rows, ["arm \\ versus", *arms]),
                    h.heading(3, "Paired tests per task (A − B)"),
                    h.table(detail, ["task", "A", "B", "seeds", "dropped", "mean A − B", "95% t CI", "Wilcoxon p",
                                     "Holm p", "bootstrap 95% CI", "seeds W/T/L", "outcome for A"],
                            numeric=range(3, 10), row_classes=classes)])


def _power(runs: RunSet) -> str:
    frame = power_table(runs.jobs)
    if frame.empty:
        return h.paragraph("fewer than two arms share seeds on any task: nothing to pair")
    rows = [[r["task"], r["arm_a"], r["arm_b"], _metric_cell(r["metric"]), r["n"], r["dropped"], r["mean_diff"],
             r["sd_diff"], r["power"], seeds_text(r["seeds_needed"], r["effect_size"]), r["min_detectable_diff"]]
            for _, r in frame.iterrows()]
    underpowered = ["low" if pd.notna(p) and p < DEFAULT_POWER else "" for p in frame["power"]]
    return "".join([h.paragraph(describe_power(DEFAULT_ALPHA, DEFAULT_POWER)),
                    h.table(rows, ["task", "A", "B", "ranked on", "seeds", "dropped", "mean A − B", "sd of A − B",
                                   "power", f"seeds for {DEFAULT_POWER:.0%}", "min. detectable difference"],
                            numeric=range(4, 11), row_classes=underpowered)])


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
             h.mean_pm(r["gap_mean"], r["gap_ci_half"]), r["gap_n"], r["others_gap_mean"], r["flags"]]
            for _, r in table.iterrows()]
    classes = [" ".join(c for c in ("loss" if r["flags"] else "", "" if r["complete"] else "incomplete") if c)
               for _, r in table.iterrows()]
    parts = [h.paragraph(summary, "plain"),
             h.table(rows, ["task", "trainer", "params", "seeds scored", "audited / jobs", "jobs with test leaks",
                            "test items leaked", "validation items leaked", "sandbox denials", "denials by kind",
                            "selection − test gap (mean ± 95% CI)", "gap seeds", "other arms' gap", "flags"],
                     numeric=range(4, 13), row_classes=classes)]
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
        weak = int(jobs["sandbox"].astype(str).str.contains("weak").sum()) if "sandbox" in jobs else 0
        if weak:
            lines.append(f"WARNING: in run {run_id}, {weak} job(s) ran LLM-written code in the WEAK sandbox "
                         "(no bubblewrap): their candidates were not isolated from the machine (column sandbox).")
    stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
    lines.append(f"Scores: higher is better. Statistics use jobs that ended ok or budget_exhausted; the others are "
                 f"counted under failures. Generated {stamp}.")
    return lines


def build_report(runs: RunSet) -> str:
    """The report's HTML for loaded runs."""
    runs = distinguish_runs(runs)
    notes = {"leaderboard": "Per task (one task under one set of eval_kwargs, named by its label), arms ranked by "
                            "the mean over seeds of a held-out test score (of the best state) where the task has a "
                            "test split, else of the best score on the selection split, which is optimistic: that "
                            "split chose the state (rank 1 = best; equal means share a rank). An arm with failed or "
                            "missing seeds is marked k/N (incomplete) and ranked after every complete arm of its "
                            "task: its surviving seeds may be its lucky ones. 95% CI: Student t over seeds.",
             "per-task": "Mean ± half-width of the 95% Student-t interval over seeds; best: on the selection split "
                         "(validation, else train; optimistic); test: held-out score of the best state and of the "
                         "last iterate; best − test: generalization gap.",
             "curves": "Best score so far, mean over seeds with 95% band, against cumulative spend up to each job's "
                       "total trainer-phase spend; a finished job keeps its best, and the harness's measurement of "
                       "what a stopped trainer left is never counted. AUC: area under the best-so-far curve divided "
                       "by the task's largest budget.",
             "frontier": "Which arm buys the most score per unit of cost: per task, each arm's mean trainer-phase "
                         "cost per job over every job that ran, failed ones included (USD, or tokens, or LLM calls where "
                         "USD is unknown) against its mean score "
                         "(the leaderboard's), with 95% intervals on both; the frontier (filled markers, shaded rows) "
                         "holds the arms that no other arm beats on both, and its dashed staircase is the best mean "
                         "score available for at most a given cost. An arm with failed or missing seeds (k/N, "
                         "incomplete: hollow grey marker, italic row) is never on the frontier and pushes no "
                         "complete arm off it: its surviving seeds may be its lucky ones.",
             "win-matrix": "Arms paired by seed on each task, on the leaderboard's metric, over the seeds both "
                           "arms completed (dropped: seeds either arm ran that are not paired): Wilcoxon signed-rank "
                           "test, Holm–Bonferroni corrected over every comparison in the matrix (all tasks, all "
                           "pairs), alpha 0.05; not significant counts as a tie.",
             "power": "Are there enough seeds? Per task and pair of arms, over the seeds both arms completed "
                      "(dropped: seeds either arm ran that are not paired), the power of a two-sided paired t-test "
                      "at those seeds, the seeds needed for 80% power at the observed effect, and the smallest "
                      "difference the current seeds detect with 80% power; rows below 80% power are shaded.",
             "integrity": "Did the optimizer cheat? Per arm: held-out test items (validation apart) whose input or "
                          "reference answer its best or final states hold, boundaries its sandboxed candidates ran into "
                          "(refused syscalls, writes, network, processes, forged results, timeouts), and its "
                          "selection-vs-test gap, flagged where it exceeds the task's other arms' by more than its 95% "
                          "CI. Jobs killed before they ended are not audited for leaks; an arm with failed or missing "
                          "seeds is marked k/N (incomplete, italic): its gap is over its surviving seeds only "
                          "(gap seeds).",
             "cost": "Spend per arm over all its jobs, failed ones included (they spent too).",
             "failures": "Jobs that did not end ok, with status and error."}
    builders = {"leaderboard": _leaderboard, "per-task": _per_task, "curves": _curves, "frontier": _frontier,
                "win-matrix": _win_matrix,
                "power": _power, "integrity": _integrity, "cost": _cost, "failures": _failures}
    body = [h.section(sid, name, notes[sid], h.Safe(builders[sid](runs))) for sid, name in SECTIONS]
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
