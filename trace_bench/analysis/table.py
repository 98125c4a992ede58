"""The paper-style table: per task and arm, ``mean (standard error)`` over seeds, with n and cost.

This is the form results of LLM-optimizer papers take (e.g. "OptoPrime vs TextGrad, mean and standard
error of the last iterate over 5 seeds"), so a run can be pasted into one as Markdown, CSV or LaTeX.
The score is a held-out test score where the task has a test split (``--metric test_last``, the
default, or ``test_best``); a task without one is reported on its selection split (``best``), and the
table marks those rows optimistic.  Cost columns are per-job means of the trainer's own spend (what a
budget counts), never the harness's measurement calls; failed jobs are counted, not scored, and an
arm with failed or missing seeds is marked ``k/N`` and listed after the complete arms of its task.
"""

from __future__ import annotations

import io
import math
import sys
from dataclasses import dataclass

import pandas as pd

from trace_bench.analysis.frontier import FRONTIER_NOTE, frontier_lines, frontier_table
from trace_bench.analysis.integrity import describe_row, integrity_table
from trace_bench.analysis.load import RunDirError, RunSet, distinguish_runs, load_runs, ran_jobs
from trace_bench.analysis.protocol import METRICS, task_metrics
from trace_bench.analysis.stats import arm_planned
from trace_bench.store.models import arm_label
from trace_bench.store.ranking import arm_ranks

FORMATS = ("md", "csv", "latex")
DEFAULT_TABLE_METRIC = "test_last"
COLUMNS = ("task", "trainer", "params_label", "metric", "n", "failed", "planned", "complete", "mean", "se", "wall_s",
           "tokens", "usd", "leaked_test_items", "sandbox_denials", "integrity", "pct_of_best_known", "score_trust")
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
        text = (f"Mean (standard error) over {over} {noun} of the {METRICS[self.preferred].label}; wall time, "
                "trainer-phase tokens and USD are means per job over every job that ran, failed ones included.")
        if not self.rows["complete"].all():
            text += (" n = k/N: an incomplete arm, k of its N planned seeds scored (the others failed or are "
                     "missing); it is listed after the complete arms of its task.")
        if self.optimistic_tasks:
            text += (" * no test split: best score on the selection split, optimistic "
                     f"({', '.join(self.optimistic_tasks)}).")
        if self.with_best_known:
            text += (" % of best known: the best state's value against the best published value (100 = matched), "
                     "mean over seeds.")
        if self.candidate_reachable:
            text += (f" {REACHABLE_MARK} the candidate ran in the process that scored it (plain evaluate()): "
                     "candidate-reachable.")
        return text

    @property
    def with_best_known(self) -> bool:
        return bool(self.rows["pct_of_best_known"].notna().any())

    @property
    def candidate_reachable(self) -> bool:
        return any("candidate-reachable" in str(t) for t in self.rows["score_trust"])


def paper_table(runs: RunSet, metric: str = DEFAULT_TABLE_METRIC, frontier: bool = False) -> PaperTable:
    """Per task × arm, the mean and standard error of ``metric`` over the scored seeds and the cost per
    job (wall time, tokens, USD) over every job that ran; arms of a task
    ordered by mean, best first (ties and unscored arms as in every leaderboard).  ``frontier`` adds
    each arm's place on the task's cost–quality frontier on the same metric (:mod:`.frontier`)."""
    runs = distinguish_runs(runs)
    jobs = runs.jobs
    chosen = task_metrics(jobs, metric) if not jobs.empty else {}
    rows = []
    for (task, trainer, label), group in jobs.groupby(["task", "trainer", "params_label"], sort=True):
        used = chosen[str(task)]
        scored, ran = group[group["scored"]], ran_jobs(group)
        values = scored[used.column].astype(float).dropna()
        n = len(values)
        planned = arm_planned(group)
        rows.append({"task": task, "trainer": trainer, "params_label": label, "metric": used.name, "n": n,
                     "failed": len(group) - len(scored), "planned": planned, "complete": n == planned > 0,
                     "mean": values.mean() if n else math.nan,
                     "se": values.std(ddof=1) / math.sqrt(n) if n > 1 else math.nan,
                     "wall_s": ran["time_seconds"].mean(), "tokens": ran["total_tokens"].mean(),
                     "usd": ran["cost_usd"].mean(), "pct_of_best_known": scored["pct_of_best_known"].mean(),
                     "score_trust": ",".join(sorted({str(t) for t in group["score_trust"] if t}))})
    audit = integrity_table(jobs).set_index(["task", "trainer", "params_label"])
    for row in rows:
        found = audit.loc[(row["task"], row["trainer"], row["params_label"])]
        row.update({"leaked_test_items": int(found["leaked_test_items"]), "sandbox_denials": int(found["sandbox_denials"]),
                    "integrity": str(found["flags"]), "_audit": describe_row(found)})
    frame = pd.DataFrame(rows, columns=[*COLUMNS, "_audit"])
    ordered = []
    for _, group in frame.groupby("task", sort=True):
        ranks = arm_ranks([None if math.isnan(m) else float(m) for m in group["mean"]], list(group["complete"]))
        ordered.append(group.assign(_rank=[math.inf if r is None else r for r in ranks])
                       .sort_values(["_rank", "trainer", "params_label"]).drop(columns="_rank"))
    frame = pd.concat(ordered, ignore_index=True) if ordered else frame
    table = PaperTable(frame, metric)
    return table.with_frontier(frontier_table(jobs, metric)) if frontier else table


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
    cell = mean if math.isnan(row["se"]) else f"{mean} ({_num(row['se'], digits)})"
    return cell + (" *" if row["metric"] == "best" and mean != "-" else "")


def _display_rows(table: PaperTable) -> list[list[str]]:
    frontier = table.frontier is not None
    rows = []
    for _, r in table.rows.iterrows():
        arm = arm_label(str(r["trainer"]), str(r["params_label"]))
        arm += f" {AUDIT_MARK}" if r["integrity"] else ""
        arm += f" {REACHABLE_MARK}" if "candidate-reachable" in str(r["score_trust"]) else ""
        row = [str(r["task"]), arm, _score_cell(r)]
        if table.with_best_known:
            row.append(_num(r["pct_of_best_known"], 2))
        seeds = str(r["n"]) if r["complete"] else f"{r['n']}/{r['planned']}"
        rows.append(row + [seeds, str(r["failed"]), _num(r["wall_s"], 1),
                           "-" if math.isnan(r["tokens"]) else f"{r['tokens']:,.0f}", _num(r["usd"], 4),
                           *([_frontier_cell(r)] if frontier else [])])
    return rows


def _frontier_cell(row: pd.Series) -> str:
    """``yes`` on the frontier; ``no: k/N seeds`` for an incomplete arm, which never is."""
    if row["on_frontier"]:
        return "yes"
    return "" if row["complete"] else f"no: {row['n']}/{row['planned']} seeds"


HEADER = ["task", "arm", "score: mean (SE)", "n", "failed", "wall s", "tokens", "USD"]
BEST_KNOWN_HEADER = "% of best known"


def _header(table: PaperTable) -> list[str]:
    header = [*HEADER[:3], BEST_KNOWN_HEADER, *HEADER[3:]] if table.with_best_known else list(HEADER)
    return [*header, "frontier"] if table.frontier is not None else header


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
    numeric = len(header) - 2 - (table.frontier is not None)
    align = ["---", "---"] + ["---:"] * numeric + ([":---:"] if table.frontier is not None else [])
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
    spec = "ll" + "r" * (len(header) - 2 - (table.frontier is not None)) + ("c" if table.frontier is not None else "")
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
               frontier: bool = False) -> int:
    """Print the paper table of one or more runs (with ``frontier``, each arm's place on its task's
    cost–quality frontier); 2 on a user error (bad run, metric or format)."""
    try:
        if fmt not in RENDERERS:
            raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
        if metric not in METRICS:
            raise ValueError(f"unknown metric {metric!r}; choose one of {', '.join(METRICS)}")
        table = paper_table(load_runs(run_paths), metric, frontier)
    except (RunDirError, ValueError) as exc:
        print(f"trace-bench: error: {exc}", file=sys.stderr)
        return 2
    if table.rows.empty:
        print("trace-bench: error: no jobs in the given run(s) yet", file=sys.stderr)
        return 2
    sys.stdout.write(RENDERERS[fmt](table))
    return 0
