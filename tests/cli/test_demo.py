"""The demo, run once for the module as a new user runs it (a bare environment, its own HOME):

- its leaderboard and its table report the same score: the leaderboard ranks code_param on the
  held-out test score of the best state, so the table under it shows that score too (before, the
  demo printed the leaderboard on test_best and then a table of test_last without saying so);
- the next step it prints works when pasted: `make ui` (with the demo's runs directory) installs
  what the UI needs when it is missing, keeping the rest of .venv, and serves the UI over those runs.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.waiting import PATIENCE_S, LineReader

# both tests read one demo run: keep them on one test worker
pytestmark = pytest.mark.xdist_group("demo")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """(the runs directory, the demo's stdout)."""
    home = tmp_path_factory.mktemp("demo")
    runs = home / "runs"
    bin_dir = Path(sys.executable).parent
    proc = subprocess.run(["bash", str(REPO / "scripts" / "demo.sh"), str(runs)], cwd=REPO,
                          capture_output=True, text=True, timeout=600,
                          env={"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(home), "HF_HUB_OFFLINE": "1"})
    assert proc.returncode == 0, proc.stderr
    return runs, proc.stdout


def test_the_demo_table_reports_the_leaderboards_metric(demo: tuple[Path, str]) -> None:
    _, stdout = demo
    board = re.findall(r"internal:code_param\s+#\d\s+\S+ \([^)]*\)\s+(\w+)=", stdout)
    assert board and set(board) == {"test_best"}
    caption = next(line for line in stdout.splitlines() if line.startswith("Mean (standard error)"))
    assert "test score of the best state" in caption, caption
    leader = re.search(r"internal:code_param\s+#1\s+(\S+) \(([^)]*)\)\s+test_best=(\S+)", stdout)
    assert leader is not None
    trainer, params, mean = leader.groups()
    row = next(line for line in stdout.splitlines() if line.startswith("| internal:code_param |"))
    assert trainer in row and f"{float(mean):.3f}" in row, (row, mean)


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_the_demos_next_step_starts_the_ui_over_its_runs(demo: tuple[Path, str]) -> None:
    runs, stdout = demo
    last = stdout.strip().splitlines()[-1]
    assert last.startswith("Next: make ui"), last
    command = shlex.split(last.removeprefix("Next: ").split("   (", 1)[0])
    assert command == ["make", "ui", f"RUNS={runs}"]
    port = _free_port()  # the pasted command as printed; the port comes from the environment
    proc = subprocess.Popen(command, cwd=REPO, env={**os.environ, "UI_ARGS": f"--port {port}"},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        assert proc.stdout is not None
        line = LineReader(proc.stdout).wait_for("trace-bench ui: open http://127.0.0.1:", process=proc)
        assert f":{port}/" in line
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(PATIENCE_S)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
