"""TextGradTrainer: textgrad's TGD through the gateway, in stub and real mode, within budgets."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.trainers.external_jobs import (
    assert_no_leaks,
    assert_ok_with_curve,
    run_jobs,
    run_real_against_fake_server,
)

TGD = {"id": "TextGradTrainer", "num_steps": 3}


def test_stub_runs_improve_and_leave_nothing_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # textgrad would create ./logs on import
    env_before = dict(os.environ)
    config = {"tasks": ["trace_examples:greeting_stub", "internal:numeric_param"], "trainers": [TGD], "seeds": [1, 2]}
    done = run_jobs(config, tmp_path, monkeypatch)
    for result, job in done:
        assert_ok_with_curve(result, job, min_steps=3)
        assert result.usage_by_role["optimizer"].llm_calls == result.llm_calls
    assert sum(r.score_best > r.score_initial for r, _ in done) >= 3
    assert not (tmp_path / "logs").exists()
    assert_no_leaks(env_before)


def test_real_mode_counts_exactly_what_the_server_returned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_real_against_fake_server("trace_examples:greeting_stub", TGD, tmp_path, monkeypatch)


def test_a_budget_stop_ends_the_trainer_cleanly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = {"tasks": ["internal:numeric_param"], "trainers": [{"id": "TextGradTrainer", "num_steps": 20}],
              "seeds": [1], "budget": {"llm_calls": 7}}
    [(result, job)] = run_jobs(config, tmp_path, monkeypatch)
    assert result.status == "budget_exhausted", (result.error, result.traceback)
    assert result.llm_calls <= 7 and 1 <= result.n_steps < 20
    assert (job / "artifacts" / "best_state.yaml").is_file()


def test_importing_textgrad_leaves_no_log_behind(tmp_path: Path) -> None:
    """textgrad opens a JSON log of every call at import (about 3.6 MB per job): its directory was
    a fresh temporary one per job process, never removed, so runs filled the temporary directory."""
    scratch = tmp_path / "t"
    scratch.mkdir()
    code = ("from trace_bench.trainers.external.textgrad_trainer import import_textgrad\n"
            "tg = import_textgrad()\n"
            "tg.logger.info('a call', extra={'text': 'x' * 1000})\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "TMPDIR": str(scratch)})
    assert proc.returncode == 0, proc.stderr
    assert list(scratch.iterdir()) == [] and not (tmp_path / "logs").exists()
    assert "a call" not in proc.stderr  # nor are its records printed instead
