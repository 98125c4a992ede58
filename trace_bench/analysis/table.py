"""The paper-style table: per task and arm, ``mean (standard error)`` over seeds, with n and cost.

This is the form results of LLM-optimizer papers take (e.g. "OptoPrime vs TextGrad, mean and standard
error of the last iterate over 5 seeds"), so a run can be pasted into one as Markdown, CSV or LaTeX.
The score is the verdict's metric: the held-out test score of the best state where the task has a
test split (``--metric test_best``, the default, as the leaderboard; ``test_last`` for the last
iterate); a task without one is reported on its selection split (``best``), and the table marks those
rows optimistic.  Ranks and the ``verdict`` column come from the verdict's paired test
(:mod:`trace_bench.store.paired`) on the same metric: arms it cannot separate from the best share its
rank and read ``tied`` with the p-value.  Cost columns are per-job means of the trainer's own spend
(what a budget counts), never the harness's measurement calls; in stub mode the caption says that
tokens are the stub's and USD is 0.  Failed jobs are counted, not scored, and an arm with failed or
missing seeds is marked ``k/N`` and listed after the complete arms of its task.
"""

from __future__ import annotations

import io
import math
import sys
from dataclasses import dataclass

import pandas as pd

from trace_bench.analysis.equal_spend import equal_spend_arms
from trace_bench.analysis.frontier import FRONTIER_NOTE, frontier_lines, frontier_table
from trace_bench.analysis.integrity import describe_row, integrity_table
from trace_bench.analysis.load import RunDirError, RunSet, distinguish_runs, load_runs, ran_jobs
from trace_bench.analysis.protocol import DEFAULT_METRIC, METRICS, task_metrics
from trace_bench.analysis.reach import REACH_NOTE, reach_columns, reach_table
from trace_bench.analysis.stats import arm_planned, leaderboard
from trace_bench.store.models import Spend, arm_label

FORMATS = ("md", "csv", "latex")
DEFAULT_TABLE_METRIC = DEFAULT_METRIC
COLUMNS = ("task", "rank", "trainer", "params_label", "metric", "vs_best", "p_vs_best", "n", "failed", "planned",
           "complete", "mean", "se", "wall_s", "tokens", Spend.COST, "mode", "leaked_test_items", "sandbox_denials",
           "integrity", "pct_of_best_known", "score_trust", "budget_used", "under_spent", "under_spent_reasons")
STUB_CAPTION = (" Stub mode: a deterministic stub answered every LLM call, so tokens count its answers and USD is "
                "0; these are not measurements of a real model.")
AUDIT_MARK = "†"
#: marks an arm whose scores a candidate could reach (a plain evaluate() task: it ran where it was scored)
REACHABLE_MARK = "‡"


@dataclass(frozen=True)
class PaperTable:
    """The rows (keys of :data:`COLUMNS`; ``se`` is NaN for n < 2) and what they measure."""

    rows: pd.DataFrame
    preferred: str
    frontier: pd.DataFrame | None = None

    def with_frontier(self, frontier: pd.DataFrame) -> PaperTable:
        """The table with columns ``cost_axis``, ``cost`` (mean per job on that axis) and
        ``on_frontier`` from :func:`.frontier.frontier_table` of the same jobs and metric."""
        keys = ["task", "trainer", "params_label"]
        extra = frontier[[*keys, "cost_axis", "cost_mean", "on_frontier"]].rename(columns={"cost_mean": "cost"})
        rows = self.rows.merge(extra, on=keys, how="left", sort=False)
        rows["on_frontier"] = rows["on_frontier"].astype("boolean").fillna(False).astype(bool)
        return PaperTable(rows, self.preferred, frontier)

    def with_reach(self, reach: pd.DataFrame) -> PaperTable:
        """The table with a ``reach_<target>`` column per target of :func:`.reach.reach_table` (cost to
        reach that fraction of the best known value; arms without one get an empty cell)."""
        if reach.empty:
            return self
        keys = ["task", "trainer", "params_label"]
        rows = self.rows.merge(reach_columns(reach), on=keys, how="left", sort=False)
        return PaperTable(rows, self.preferred, self.frontier)

    def with_equal_spend(self, equal: pd.DataFrame) -> PaperTable:
        """The table with :func:`.equal_spend.equal_spend_arms`'s columns (``at_equal``,
        ``equal_spend``, ``auc``, ``at_<spend>`` per checkpoint); unchanged without curves."""
        if equal.empty:
            return self
        rows = self.rows.merge(equal, on=["task", "trainer", "params_label"], how="left", sort=False)
        return PaperTable(rows, self.preferred, self.frontier)

    @property
    def equal_spend_columns(self) -> list[str]:
        """The equal-spend columns the table shows: ``at_equal``, then each checkpoint, then ``auc``."""
        if "at_equal" not in self.rows:
            return []
        marks = sorted((c for c in self.rows.columns if c.startswith("at_") and c != "at_equal"),
                       key=lambda c: float(c[3:]))
        return ["at_equal", *marks, "auc"]

    @property
    def reach_columns(self) -> list[str]:
        return sorted((c for c in self.rows.columns if c.startswith("reach_")), key=lambda c: float(c[6:]))

    @property
    def audit_notes(self) -> list[str]:
        """One line per arm the integrity audit flagged (marked :data:`AUDIT_MARK` in the table)."""
        return [f"{AUDIT_MARK} {arm_label(str(r['trainer']), str(r['params_label']))} on {r['task']}: {r['_audit']}"
                for _, r in self.rows.iterrows() if r["integrity"]]

    @property
    def optimistic_tasks(self) -> list[str]:
        return sorted({t for t, m in zip(self.rows["task"], self.rows["metric"], strict=True) if m == "best"})

    def caption(self) -> str:
        seeds = sorted(set(int(n) for n in self.rows["n"] if n > 0))
        over = f"{seeds[0]}" if len(seeds) == 1 else f"{seeds[0]}-{seeds[-1]}" if seeds else "0"
        noun = "seed" if over == "1" else "seeds"
        text = (f"Mean (standard error) over {over} {noun} of the {METRICS[self.preferred].label}; rank and "
                "verdict: paired t-tests over seeds, Holm-corrected per task (alpha 0.05); arms not separated from "
                "the best share its rank (tied, p against the best); wall time, trainer-phase tokens and USD are "
                "means per job over every job that ran, failed ones included.")
        if not self.rows["complete"].all():
            text += (" n = k/N: an incomplete arm, k of its N planned seeds scored (the others failed or are "
                     "missing); it is listed after the complete arms of its task.")
        if self.optimistic_tasks:
            text += (" * no test split: best score on the selection split, optimistic "
                     f"({', '.join(self.optimistic_tasks)}).")
        if self.with_best_known:
            text += (" % of best known: the best state's value against the best value known today (100 = matched), "
                     "mean over seeds.")
        if self.candidate_reachable:
            text += (f" {REACHABLE_MARK} the candidate ran in the process that scored it (plain evaluate()): "
                     "candidate-reachable.")
        if self.budgeted:
            text += (" Budget spent: the mean share of its budget a job spent; k under: jobs that left over 10 % "
                     "unspent, with their reasons (results.csv under_spent_reason; docs/trainers.md).")
        if "stub" in set(self.rows["mode"]):
            text += STUB_CAPTION
        if self.reach_columns:
            text += " " + REACH_NOTE
        if self.equal_spend_columns:
            text += " " + EQUAL_NOTE
        return text

    @property
    def budgeted(self) -> bool:
        """Whether the jobs had a budget (then the table shows how fully each arm spent it)."""
        return bool(self.rows["budget_used"].notna().any())

    @property
    def with_best_known(self) -> bool:
        return bool(self.rows["pct_of_best_known"].notna().any())

    @property
    def candidate_reachable(self) -> bool:
        return any("candidate-reachable" in str(t) for t in self.rows["score_trust"])


def paper_table(runs: RunSet, metric: str = DEFAULT_TABLE_METRIC, frontier: bool = False,
                cost_axis: str | None = None) -> PaperTable:
    """Per task × arm, the mean and standard error of ``metric`` over the scored seeds and the cost per
    job (wall time, tokens, USD) over every job that ran; arms of a task
    ordered by mean, best first (ties and unscored arms as in every leaderboard).  ``frontier`` adds
    each arm's place on the task's cost–quality frontier on the same metric (:mod:`.frontier`; on
    ``cost_axis`` when given, e.g. ``evaluations`` to put non-LLM baselines beside LLM arms); tasks with a
    best known value get the cost to reach it (:mod:`.reach`)."""
    runs = distinguish_runs(runs)
    jobs = runs.jobs
    chosen = task_metrics(jobs, metric) if not jobs.empty else {}
    board = leaderboard(jobs, metric).set_index(["task", "trainer", "params_label"]) if not jobs.empty else None
    rows = []
    for (task, trainer, label), group in jobs.groupby(["task", "trainer", "params_label"], sort=True):
        used = chosen[str(task)]
        scored, ran = group[group["scored"]], ran_jobs(group)
        values = scored[used.column].astype(float).dropna()
        n = len(values)
        planned = arm_planned(group)
        verdict = board.loc[(task, trainer, label)] if board is not None else None
        rows.append({"task": task, "rank": None if verdict is None or pd.isna(verdict["rank"]) else int(verdict["rank"]),
                     "trainer": trainer, "params_label": label, "metric": used.name,
                     "vs_best": "" if verdict is None else str(verdict["vs_best"]),
                     "p_vs_best": math.nan if verdict is None or verdict["p_vs_best"] is None else verdict["p_vs_best"],
                     "n": n, "failed": len(group) - len(scored), "planned": planned, "complete": n == planned > 0,
                     "mean": values.mean() if n else math.nan,
                     "se": values.std(ddof=1) / math.sqrt(n) if n > 1 else math.nan,
                     "wall_s": ran["time_seconds"].mean(), "tokens": ran["total_tokens"].mean(),
                     Spend.COST: ran["cost_usd"].mean(), "mode": str(group["mode"].iloc[0]) if "mode" in group else "",
                     "pct_of_best_known": scored["pct_of_best_known"].mean(),
                     "score_trust": ",".join(sorted({str(t) for t in group["score_trust"] if t})),
                     **_spend_cells(verdict)})
    audit = integrity_table(jobs).set_index(["task", "trainer", "params_label"])
    for row in rows:
        found = audit.loc[(row["task"], row["trainer"], row["params_label"])]
        row.update({"leaked_test_items": int(found["leaked_test_items"]), "sandbox_denials": int(found["sandbox_denials"]),
                    "integrity": str(found["flags"]), "_audit": describe_row(found)})
    frame = pd.DataFrame(rows, columns=[*COLUMNS, "_audit"])
    if not frame.empty:
        frame = frame.assign(_rank=frame["rank"].fillna(math.inf), _mean=-frame["mean"].fillna(-math.inf)) \
            .sort_values(["task", "_rank", "_mean", "trainer", "params_label"]).drop(columns=["_rank", "_mean"]) \
            .reset_index(drop=True)
        frame["rank"] = frame["rank"].astype("Int64")
    table = PaperTable(frame, metric).with_reach(reach_table(jobs, runs.curves)).with_equal_spend(equal_spend_arms(runs))
    return table.with_frontier(frontier_table(jobs, metric, cost_axis)) if frontier else table


EQUAL_HEADERS = {"at_equal": "at equal spend", "auc": "AUC"}
EQUAL_NOTE = ("At equal spend: the best-so-far score on the selection split (optimistic) once every scored job of the "
              "task had spent the least any of them spent (@ that spend, in the budget's unit); at N: once N was "
              "spent; AUC: the mean best-so-far score over the budget; means over seeds.")


def _equal_cells(row: pd.Series, columns: list[str]) -> list[str]:
    cells = []
    for column in columns:
        value = _num(row[column])
        if column == "at_equal" and value != "-":
            value += f" @{row['equal_spend']:g}"
        cells.append(value)
    return cells


def _spend_cells(verdict: pd.Series | None) -> dict[str, object]:
    """The arm's mean share of its budget spent, its under-spent jobs and their reasons' codes."""
    if verdict is None or verdict.get("mean_budget_used") is None or pd.isna(verdict.get("mean_budget_used")):
        return {"budget_used": math.nan, "under_spent": 0, "under_spent_reasons": ""}
    return {"budget_used": float(verdict["mean_budget_used"]), "under_spent": int(verdict["under_spent"] or 0),
            "under_spent_reasons": str(verdict["under_spent_reasons"] or "")}


def _spend_cell(row: pd.Series) -> str:
    """``100%``, or ``83% (2 under: trainer_rule)`` for an arm some of whose jobs left over 10 % unspent."""
    cell = f"{row['budget_used']:.0%}"
    return cell + (f" ({row['under_spent']} under: {row['under_spent_reasons']})" if row["under_spent"] else "")


def _num(value: float, digits: int = 3) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def _decimals(se: float) -> int:
    """Decimals that show the standard error to two significant digits (3 to 6)."""
    if math.isnan(se) or se <= 0:
        return 3
    return max(3, min(6, 1 - math.floor(math.log10(se))))


def _score_cell(row: pd.Series) -> str:
    digits = _decimals(row["se"])
    mean = _num(row["mean"], digits)
    if math.isnan(row["se"]):
        cell = mean
    elif row["se"] <= 1e-12:
        cell = f"{mean} (no variance between seeds)"
    else:
        cell = f"{mean} ({_num(row['se'], digits)})"
    return cell + (" *" if row["metric"] == "best" and mean != "-" else "")


def verdict_cell(vs_best: str, p_value: float | None) -> str:
    """How the table says what the verdict found against the task's best arm."""
    at = "" if p_value is None or (isinstance(p_value, float) and math.isnan(p_value)) else f" (p={p_value:.2g})"
    return {"best": "best", "tied": f"tied{at}", "below": f"below{at}", "above": f"above{at}"}.get(vs_best, "-")


def _display_rows(table: PaperTable) -> list[list[str]]:
    frontier = table.frontier is not None
    rows = []
    for _, r in table.rows.iterrows():
        arm = arm_label(str(r["trainer"]), str(r["params_label"]))
        arm += f" {AUDIT_MARK}" if r["integrity"] else ""
        arm += f" {REACHABLE_MARK}" if "candidate-reachable" in str(r["score_trust"]) else ""
        row = [str(r["task"]), "-" if pd.isna(r["rank"]) else str(int(r["rank"])), arm, _score_cell(r),
               verdict_cell(str(r["vs_best"]), r["p_vs_best"])]
        if table.with_best_known:
            row.append(_num(r["pct_of_best_known"], 2))
        seeds = str(r["n"]) if r["complete"] else f"{r['n']}/{r['planned']}"
        rows.append(row + [seeds, str(r["failed"]), _num(r["wall_s"], 1),
                           "-" if math.isnan(r["tokens"]) else f"{r['tokens']:,.0f}", _num(r[Spend.COST], 4),
                           *(str(r[c]) if isinstance(r[c], str) else "-" for c in table.reach_columns),
                           *([_spend_cell(r)] if table.budgeted else []), *_equal_cells(r, table.equal_spend_columns),
                           *([_frontier_cell(r)] if frontier else [])])
    return rows


def _frontier_cell(row: pd.Series) -> str:
    """``yes`` on the frontier; ``no: k/N seeds`` for an incomplete arm, which never is."""
    if row["on_frontier"]:
        return "yes"
    return "" if row["complete"] else f"no: {row['n']}/{row['planned']} seeds"


HEADER = ["task", "rank", "arm", "score: mean (SE)", "verdict", "n", "failed", "wall s", "tokens", "USD"]
BEST_KNOWN_HEADER = "% of best known"
TEXT_COLUMNS = {"task", "arm", "verdict"}


def _header(table: PaperTable) -> list[str]:
    header = [*HEADER[:5], BEST_KNOWN_HEADER, *HEADER[5:]] if table.with_best_known else list(HEADER)
    if "stub" in set(table.rows["mode"]):
        header = [("tokens (stub)" if h == "tokens" else "USD (stub: 0)" if h == "USD" else h) for h in header]
    header += [f"to {column[6:]} %" for column in table.reach_columns]
    header += ["budget spent"] if table.budgeted else []
    header += [EQUAL_HEADERS.get(c, f"at {c[3:]}") for c in table.equal_spend_columns]
    return [*header, "frontier"] if table.frontier is not None else header


def _align(name: str, latex: bool) -> str:
    if name == "frontier":
        return "c" if latex else ":---:"
    if name in TEXT_COLUMNS:
        return "l" if latex else "---"
    return "r" if latex else "---:"


def audit_text(table: PaperTable) -> list[str]:
    """The lines under a table that the integrity audit flagged arms of (none when it flagged none)."""
    notes = table.audit_notes
    return ["", f"{AUDIT_MARK} integrity audit (see report.html#integrity):", *notes] if notes else []


def frontier_text(table: PaperTable) -> list[str]:
    """The lines under a table with ``--frontier``: what the frontier is, then one line per task."""
    if table.frontier is None:
        return []
    return ["", FRONTIER_NOTE, *(f"- {line}" for line in frontier_lines(table.frontier))]


def to_markdown(table: PaperTable) -> str:
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"
    header = _header(table)
    align = [_align(name, latex=False) for name in header]
    return "\n".join([line(header), "|" + "|".join(align) + "|", *(line(r) for r in _display_rows(table)), "",
                      table.caption(), *audit_text(table), *frontier_text(table)]) + "\n"


def to_csv(table: PaperTable) -> str:
    buffer = io.StringIO()
    table.rows.drop(columns="_audit").to_csv(buffer, index=False, lineterminator="\n", float_format="%.10g")
    return buffer.getvalue()


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                  AUDIT_MARK: r"\textdagger{}"}


def _latex(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


def to_latex(table: PaperTable) -> str:
    header = _header(table)
    spec = "".join(_align(name, latex=True) for name in header)
    lines = [r"\begin{table}[t]", r"\centering", rf"\begin{{tabular}}{{{spec}}}", r"\toprule",
             " & ".join(_latex(h) for h in header) + r" \\", r"\midrule"]
    previous = None
    for row in _display_rows(table):
        if previous is not None and row[0] != previous:
            lines.append(r"\midrule")
        previous = row[0]
        lines.append(" & ".join(_latex(c) for c in row) + r" \\")
    caption = table.caption() + "".join(f" {note}" for note in table.audit_notes) \
        + (" " + FRONTIER_NOTE if table.frontier is not None else "")
    lines += [r"\bottomrule", r"\end{tabular}", rf"\caption{{{_latex(caption)}}}", r"\end{table}"]
    return "\n".join(lines) + "\n"


RENDERERS = {"md": to_markdown, "csv": to_csv, "latex": to_latex}


def table_main(run_paths: list[str], metric: str = DEFAULT_TABLE_METRIC, fmt: str = "md",
               frontier: bool = False, cost_axis: str | None = None) -> int:
    """Print the paper table of one or more runs (with ``frontier``, each arm's place on its task's
    cost–quality frontier); 2 on a user error (bad run, metric or format)."""
    try:
        if fmt not in RENDERERS:
            raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
        if metric not in METRICS:
            raise ValueError(f"unknown metric {metric!r}; choose one of {', '.join(METRICS)}")
        table = paper_table(load_runs(run_paths), metric, frontier or cost_axis is not None, cost_axis)
    except (RunDirError, ValueError) as exc:
        print(f"trace-bench: error: {exc}", file=sys.stderr)
        return 2
    if table.rows.empty:
        print("trace-bench: error: no jobs in the given run(s) yet", file=sys.stderr)
        return 2
    sys.stdout.write(RENDERERS[fmt](table))
    return 0
