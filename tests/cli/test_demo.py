"""The demo's leaderboard and its table report the same score: the leaderboard ranks code_param on
the held-out test score of the best state, so the table under it shows that score too.

Before, the demo printed the leaderboard on test_best and then a table of test_last without saying
that they differ."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO


def test_the_demo_table_reports_the_leaderboards_metric(tmp_path: Path) -> None:
    bin_dir = Path(sys.executable).parent
    proc = subprocess.run(["bash", str(REPO / "scripts" / "demo.sh"), str(tmp_path / "runs")], cwd=REPO,
                          capture_output=True, text=True, timeout=600,
                          env={"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path), "HF_HUB_OFFLINE": "1"})
    assert proc.returncode == 0, proc.stderr
    board = re.findall(r"internal:code_param\s+#\d\s+\S+ \([^)]*\)\s+(\w+)=", proc.stdout)
    assert board and set(board) == {"test_best"}
    caption = next(line for line in proc.stdout.splitlines() if line.startswith("Mean (standard error)"))
    assert "test score of the best state" in caption, caption
    leader = re.search(r"internal:code_param\s+#1\s+(\S+) \(([^)]*)\)\s+test_best=(\S+)", proc.stdout)
    assert leader is not None
    trainer, params, mean = leader.groups()
    row = next(line for line in proc.stdout.splitlines() if line.startswith("| internal:code_param |"))
    assert trainer in row and f"{float(mean):.3f}" in row, (row, mean)
