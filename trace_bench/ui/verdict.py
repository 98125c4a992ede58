"""The Browse tab's verdict panel: what the selected run concludes, per task and across tasks.

It is report.html's ``verdict`` section (:func:`trace_bench.analysis.report_verdict.verdict_section`):
per task, the leaderboard's verdict (ties as ties); across tasks, normalized scores with
stratified-bootstrap intervals and the probability of improvement (rliable), average ranks
(autorank) and a Bayesian signed-rank test (baycomp).  Computed on request: those libraries take
seconds to import.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from trace_bench.ui.readers import with_analysis


def verdict_html(run_dir: Path) -> str:
    """The verdict of a run as HTML, or a short message when the run cannot be read yet or the
    analysis extra is missing."""
    return with_analysis(run_dir, _verdict,
                         needs_extra=lambda why: f'<p class="tb-verdict-note">the verdict needs the analysis extra: '
                                                 f"{html.escape(why)}</p>",
                         unreadable=lambda why: f'<p class="tb-verdict-note">no verdict: {html.escape(why)}</p>')


def _verdict(jobs: Any) -> str:
    from trace_bench.analysis.report_verdict import verdict_section

    return f'<div class="tb-verdict">{verdict_section(jobs)}</div>'
