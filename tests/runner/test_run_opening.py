"""How a run starts: signal handlers first, then the run directory with its lock, snapshot and
manifest, and only then anything slow (matrix expansion, the job template).  A run interrupted
at that point is completed by --resume; a config error found while expanding leaves nothing."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest

from trace_bench._util.errors import ConfigError
from trace_bench.config.defaults import REAL_MODE_JOB_TIMEOUT_S, effective_job_timeout
from trace_bench.config.loader import parse_config
from trace_bench.runner import run as run_module
from trace_bench.runner.options import RunOptions
from trace_bench.store.run_store import RunLocked, RunStore

CONFIG = {"run_id": "opening", "tasks": ["internal:numeric_param"], "trainers": ["NoOpTrainer"], "seeds": [1, 2]}


class Killed(Exception):
    """Stands for the driver dying at this instant."""


def test_the_run_exists_locked_before_the_matrix_is_expanded_and_resume_finishes_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}
    expand = run_module.expand_matrix

    def dying_expansion(*args: Any, **kwargs: Any) -> Any:
        run = RunStore(tmp_path / "opening")
        seen["snapshot"] = run.read_snapshot()
        seen["manifest"] = run.read_manifest()
        seen["sigint"] = signal.getsignal(signal.SIGINT)
        with pytest.raises(RunLocked):
            run.lock()
        raise Killed

    monkeypatch.setattr(run_module, "expand_matrix", dying_expansion)
    found = signal.getsignal(signal.SIGINT)  # whatever the test inherited (SIG_IGN in a background job)
    with pytest.raises(Killed):
        run_module.execute_run(parse_config(CONFIG), RunOptions(runs_dir=str(tmp_path), quiet=True))
    assert seen["snapshot"]["run_id"] == "opening" and seen["manifest"].config_hash
    assert getattr(seen["sigint"], "__self__", None).__class__.__name__ == "InterruptHandler"
    assert signal.getsignal(signal.SIGINT) is found, "the handler found at the start is restored"

    monkeypatch.setattr(run_module, "expand_matrix", expand)
    resumed = run_module.execute_run(parse_config(RunStore(tmp_path / "opening").read_snapshot() or {}),
                                     RunOptions(runs_dir=str(tmp_path), resume_run="opening", quiet=True))
    assert resumed.exit_code == 0 and sorted(r.seed for r in resumed.records) == [1, 2]


def test_a_config_error_found_while_expanding_leaves_no_run(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown logger"):
        run_module.execute_run(parse_config({**CONFIG, "run_id": None}),
                               RunOptions(runs_dir=str(tmp_path), logger="Consolelogerr", quiet=True))
    assert list(tmp_path.iterdir()) == []


def test_the_real_mode_default_timeout_reaches_python_api_users(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import trace_bench

    given: list[float | None] = []

    def record_timeout(config: Any, options: Any, jobs: Any, store: Any, opened: Any, resume: Any,
                       job_timeout: float | None, interrupts: Any) -> Any:
        given.append(job_timeout)
        raise Killed

    monkeypatch.setattr(run_module, "drive", record_timeout)
    monkeypatch.setattr(run_module, "_preflight", lambda config, options: [])  # no request to api.openai.com
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")  # real mode checks credentials first
    for mode, override, expected in (("real", None, REAL_MODE_JOB_TIMEOUT_S), ("real", 0.0, None),
                                     ("stub", None, None), ("real", 30.0, 30.0)):
        runner = trace_bench.BenchRunner({**CONFIG, "run_id": f"t-{mode}-{override}", "mode": mode},
                                         runs_dir=str(tmp_path), job_timeout=override)
        with pytest.raises(Killed):
            runner.run()
        assert given[-1] == expected, (mode, override)
    assert effective_job_timeout(parse_config({**CONFIG, "mode": "real", "job_timeout": 45})) == 45
