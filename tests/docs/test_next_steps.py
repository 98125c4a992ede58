"""The next step the demo prints works when pasted: `make ui` (with the demo's runs directory)
installs what the UI needs, keeping the rest of .venv, and serves the UI over those runs."""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import socket
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.waiting import PATIENCE_S, LineReader


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_the_demos_next_step_starts_the_ui_over_its_runs(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    env = {**os.environ, "PATH": f"{REPO / '.venv' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"}
    demo = subprocess.run(["bash", "scripts/demo.sh", str(runs)], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=PATIENCE_S)
    assert demo.returncode == 0, demo.stderr
    last = demo.stdout.strip().splitlines()[-1]
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
