"""What the Compare tab shows, as plain functions: two runs paired cell by cell, two arms of one run
paired by seed (decided as the leaderboard decides), and any number of runs overlaid (curves per arm
and run, and each run's leaderboard).  Each returns a message that explains a refusal instead of
raising; the analysis layer is imported on first use (``analysis`` extra)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from trace_bench.store.models import arm_label
from trace_bench.ui.readers import markdown_text, masked, read_leaderboard_rows

NEEDS_EXTRA = "Compare needs the analysis extra (pandas, scipy, rliable, autorank, baycomp): {}"
COLUMNS = ["task", "trainer", "params_label", "metric", "seeds", "dropped", "mean_a", "mean_b", "mean_a_minus_b",
           "ci_low", "ci_high", "p_value", "p_holm", "significant", "wins", "ties", "losses"]
ARM_COLUMNS = ["task", "metric", "seeds", "dropped", "mean_a", "mean_b", "mean_a_minus_b", "ci_low", "ci_high",
               "p_value", "p_holm", "significant", "no_variance"]
OVERLAY_COLUMNS = ["run", "task", "rank", "trainer", "params_label", "metric", "vs_best", "p_vs_best", "count",
                   "mean", "ci95_low", "ci95_high", "no_variance", "mode"]


def _number(value: Any) -> Any:
    """Floats to 4 significant digits for the table (NaN shown empty); other values as they are."""
    if isinstance(value, float):
        return None if math.isnan(value) else float(f"{value:.4g}")
    return value


def compare_table(run_a: str, run_b: str) -> tuple[str, list[dict[str, Any]], str]:
    """Two runs: (message, rows, text table)."""
    if not run_a or not run_b:
        return "Pick two runs.", [], ""
    if Path(run_a).resolve() == Path(run_b).resolve():
        return "Pick two different runs.", [], ""
    try:
        from trace_bench.analysis import CompareError, RunDirError, compare_runs, format_compare
    except ImportError as exc:
        return NEEDS_EXTRA.format(exc), [], ""
    try:
        result = compare_runs(run_a, run_b)
    except (CompareError, RunDirError) as exc:
        return f"**Not comparable:** {markdown_text(str(exc))}", [], ""
    rows = [{k: _number(v) for k, v in row.items()} for row in result.rows]
    axis = f"; the runs differ in **{result.differing_axes[0]}**" if result.differing_axes else \
        "; the runs have the same matrix"
    significant = sum(1 for r in rows if r.get("significant"))
    notes = " ".join(markdown_text(str(n)) for n in result.notes)
    message = (f"A = `{masked(result.run_a)}`, B = `{masked(result.run_b)}`{axis}. {len(rows)} arm(s) paired over "
               f"shared seeds with the verdict's paired t-test, {significant} significant after Holm correction "
               f"(alpha {result.alpha:g}), the others tied. mean_a_minus_b > 0 means A scored higher. {notes}").strip()
    return message, rows, masked(format_compare(result))


def arm_choices(run_dir: str | None) -> list[str]:
    """The arm labels of a run (``Trainer [params]``), from its leaderboard.csv."""
    if not run_dir:
        return []
    rows, _ = read_leaderboard_rows(Path(run_dir))
    return sorted({arm_label(str(r.get("trainer", "")), str(r.get("params_label", ""))) for r in rows})


def compare_arms_table(run_dir: str, arm_a: str, arm_b: str) -> tuple[str, list[dict[str, Any]], str]:
    """Two arms of one run: (message, rows per task, text table)."""
    if not run_dir or not arm_a or not arm_b:
        return "Pick a run and two of its arms.", [], ""
    if arm_a == arm_b:
        return "Pick two different arms.", [], ""
    try:
        from trace_bench.analysis import CompareError, RunDirError, compare_arms, format_compare
    except ImportError as exc:
        return NEEDS_EXTRA.format(exc), [], ""
    try:
        result = compare_arms(run_dir, arm_a, arm_b)
    except (CompareError, RunDirError) as exc:
        return f"**Not comparable:** {markdown_text(str(exc))}", [], ""
    rows = [{k: _number(v) for k, v in row.items() if k in ARM_COLUMNS} for row in result.rows]
    significant = sum(1 for r in rows if r.get("significant"))
    message = (f"A = **{markdown_text(arm_a)}**, B = **{markdown_text(arm_b)}**: {len(rows)} task(s), paired by "
               f"seed with the verdict's paired t-test, Holm-corrected over each task's pairs of arms (as the "
               f"leaderboard ranks): {significant} decided, {len(rows) - significant} tied. "
               + " ".join(markdown_text(str(n)) for n in result.notes))
    return message.strip(), rows, masked(format_compare(result))


def overlay(run_dirs: list[str], axis: str = "llm_calls") -> tuple[str, Any, list[dict[str, Any]]]:
    """Any number of runs overlaid: (message, per-task curve frame with series ``arm @ run``, the runs'
    leaderboard rows with a ``run`` column)."""
    if not run_dirs:
        return "Pick one or more runs.", None, []
    try:
        import pandas as pd

        from trace_bench.ui.plots import run_curve_frame
    except ImportError as exc:
        return NEEDS_EXTRA.format(exc), None, []
    frames, rows, problems = [], [], []
    for run_dir in run_dirs:
        name = Path(run_dir).name
        frame = run_curve_frame(Path(run_dir), axis, "trainer")
        if len(frame):
            frames.append(frame.assign(series=frame["series"].astype(str) + f" @ {name}"))
        board, problem = read_leaderboard_rows(Path(run_dir))
        if problem:
            problems.append(f"{name}: {problem}")
        rows += [{"run": name, **{k: _number(row.get(k)) for k in OVERLAY_COLUMNS if k != "run"}} for row in board]
    curves = pd.concat(frames, ignore_index=True) if frames else None
    message = (f"{len(run_dirs)} run(s) overlaid: each arm's mean curve per run (`arm @ run`), and each run's "
               "leaderboard (ranks from the verdict's paired test within that run).")
    if problems:
        message += " " + markdown_text("; ".join(problems))
    return message, curves, rows
