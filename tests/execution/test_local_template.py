"""The local executor's job template under a long temporary directory."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import only_run_dir, run_cli


def test_a_run_starts_its_jobs_when_tmpdir_is_too_long_for_a_unix_socket(tmp_path: Path) -> None:
    """multiprocessing puts the forkserver's socket under ``$TMPDIR``; a path past the 107 bytes a
    Unix socket address holds crashed ``trace-bench run`` (``OSError: AF_UNIX path too long``) on
    Python < 3.12 before any job ran."""
    long_tmp = tmp_path / ("t" * 60) / ("m" * 60)
    long_tmp.mkdir(parents=True)
    config = tmp_path / "c.yaml"
    config.write_text("tasks: [internal:numeric_param]\ntrainers: [NoOpTrainer]\nseeds: [1]\n")
    proc = run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "runs"), "--quiet",
                   env={"TMPDIR": str(long_tmp)})
    assert proc.returncode == 0, proc.stderr
    assert "AF_UNIX" not in proc.stderr
    assert (only_run_dir(tmp_path / "runs") / "results.csv").read_text().count("\n") == 2
