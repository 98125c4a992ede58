"""The Browse tab's integrity panel: the arms of a run that the integrity audit flagged, and why.

It shows what report.html's ``integrity`` section summarises (:mod:`trace_bench.analysis.integrity`):
held-out items found in an arm's states, its sandbox denials, a selection-vs-test gap above its
task's other arms.  Text from the run passes through :func:`.readers.markdown_text` (masked, literal).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trace_bench.ui.readers import markdown_text, with_analysis

NO_FLAG = "**Integrity audit:** no arm flagged (no held-out item in any audited state, no sandbox denial, no unusual gap)."


def integrity_markdown(run_dir: Path) -> str:
    """Markdown listing the flagged arms of a run (one line each), or that none is; a short message
    when the run cannot be read yet or the analysis extra is missing."""
    return with_analysis(run_dir, _flagged_arms,
                         needs_extra=lambda why: f"Integrity audit needs the analysis extra: {markdown_text(why)}",
                         unreadable=lambda why: f"Integrity audit: {markdown_text(why)}")


def _flagged_arms(jobs: Any) -> str:
    from trace_bench.analysis.integrity import describe_row, integrity_table

    table = integrity_table(jobs)
    flagged = table[table["flags"] != ""]
    if flagged.empty:
        return NO_FLAG
    lines = [f"**Integrity audit: {len(flagged)} arm(s) flagged** (details in report.html, section Integrity)"]
    for _, row in flagged.iterrows():
        arm = row["trainer"] if row["params_label"] in ("", "default") else f"{row['trainer']} [{row['params_label']}]"
        lines.append(f"- ⚠ **{markdown_text(arm)}** on {markdown_text(row['task'])} ({markdown_text(row['flags'])}): "
                     f"{markdown_text(describe_row(row))}")
    return "\n".join(lines)
