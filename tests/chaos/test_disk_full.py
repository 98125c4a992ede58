"""A full disk: a clear error, and nothing already written is corrupted."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.chaos


@pytest.fixture
def small_disk(tmp_path: Path):  # type: ignore[no-untyped-def]
    mount = tmp_path / "small"
    mount.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=400k", "tmpfs", str(mount)], capture_output=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {proc.stderr.decode().strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_disk_full_gives_clear_error_and_intact_files(tmp_path: Path, small_disk: Path) -> None:
    config = tmp_path / "c.yaml"
    seeds = ", ".join(str(i) for i in range(1, 41))
    config.write_text(f"tasks: [internal:numeric_param]\ntrainers:\n  - id: PrioritySearch\n    ps_steps: 3\n"
                      f"seeds: [{seeds}]\nmax_workers: 2\n")
    proc = run_cli("run", "--config", str(config), "--runs-dir", str(small_disk / "runs"), "--quiet", timeout=300)
    assert proc.returncode == 1
    assert "No space left on device" in proc.stderr and "--resume" in proc.stderr
    assert "Traceback" not in proc.stderr
    for path in (small_disk / "runs").rglob("*.json"):
        if path.stat().st_size:
            json.loads(path.read_text())
