"""Atomic writes, secret masking by value, tolerant event reading, statistics."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from trace_bench._util.masking import MASK, mask_secrets, register_secret
from trace_bench.store import atomic
from trace_bench.store.events import EventLog, read_job_events
from trace_bench.store.stats import summarize, t_quantile, t_quantile_fallback


def test_failed_write_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "results.json"
    atomic.write_json(target, {"v": 1})

    def boom(fd: int) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(atomic.os, "fsync", boom)
    with pytest.raises(OSError, match="disk full"):
        atomic.write_json(target, {"v": 2})
    assert json.loads(target.read_text()) == {"v": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"], "no temp file left behind"


def test_masking_is_by_value_not_by_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-abcdefghijklmnopqrstuvwxyz123456")
    monkeypatch.setenv("MY_DB_PASSWORD", "hunter2hunter2")
    monkeypatch.setenv("TRACE_LITELLM_MODEL", "gpt-4o-mini")
    text = json.dumps({"max_tokens": 512, "token_totals": {"prompt": 10}, "api_key_env": "OPENAI_API_KEY",
                       "leak": "sk-abcdefghijklmnopqrstuvwxyz123456", "pw": "x hunter2hunter2 y",
                       "model": "gpt-4o-mini"})
    masked = json.loads(mask_secrets(text))
    assert masked["max_tokens"] == 512 and masked["token_totals"] == {"prompt": 10}
    assert masked["api_key_env"] == "OPENAI_API_KEY" and masked["model"] == "gpt-4o-mini"
    assert masked["leak"] == MASK and masked["pw"] == f"x {MASK} y"
    assert mask_secrets("Authorization: Bearer abcdefghijklmnopqrstuvwx") == f"Authorization: Bearer {MASK}"
    register_secret("per-run-gateway-token-123")
    assert "per-run-gateway-token-123" not in mask_secrets("token per-run-gateway-token-123 used")


def test_a_short_registered_key_is_masked_as_a_whole_token() -> None:
    """A key under 8 characters was never masked: a provider that echoed it left it in the run."""
    register_secret("q7Zt2")
    assert mask_secrets('{"error": "invalid key q7Zt2", "seen": "key=q7Zt2,"}') == \
        f'{{"error": "invalid key {MASK}", "seen": "key={MASK},"}}'
    assert mask_secrets("xq7Zt2y q7Zt2_best a-q7Zt2") == "xq7Zt2y q7Zt2_best a-q7Zt2"  # inside other tokens
    for value in ("true", "null", "ab1"):  # what files are made of, and 3 characters or less
        register_secret(value)
        assert mask_secrets(f'{{"ok": {value}}} {value}') == f'{{"ok": {value}}} {value}'


def test_written_files_are_masked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-v1-" + "q" * 40)
    atomic.write_json(tmp_path / "a.json", {"error": "auth failed for " + os.environ["OPENROUTER_API_KEY"]})
    log = EventLog(tmp_path / "events.jsonl")
    log.write({"type": "x", "detail": os.environ["OPENROUTER_API_KEY"]})
    log.close()
    for path in tmp_path.iterdir():
        assert "q" * 40 not in path.read_text()


def test_read_events_skips_a_torn_last_line(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text('{"ts": "t", "type": "a"}\n{"ts": "t", "type": "b"}\n{"ts": "t", "ty')
    assert [e.type for e in read_job_events(path)] == ["a", "b"]


def test_t_quantiles_match_scipy() -> None:
    """The table and Hill's approximation (used without scipy, and by the driver) agree with scipy."""
    stats = pytest.importorskip("scipy.stats")
    for df in (*range(1, 40), 50, 100, 1000):
        exact = float(stats.t.ppf(0.975, df))
        assert abs(t_quantile_fallback(0.975, df) - exact) < 1e-5, df
        assert abs(t_quantile(0.975, df) - exact) < 1e-5, df
    assert abs(t_quantile(0.95, 7) - float(stats.t.ppf(0.95, 7))) < 1e-9


def test_a_large_run_summarizes_without_importing_scipy() -> None:
    """Importing scipy costs the driver seconds; past the table, Hill's approximation is used."""
    import subprocess
    import sys

    code = ("import sys; from trace_bench.store.stats import summarize; summarize([float(i) for i in range(5000)]);"
            "print('scipy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_summarize_hand_computed() -> None:
    n, mean, std, low, high = summarize([1.0, 2.0, 3.0])
    assert (n, mean, std) == (3, 2.0, 1.0)
    assert low == pytest.approx(2 - 2.4843, abs=1e-3) and high == pytest.approx(2 + 2.4843, abs=1e-3)
    assert summarize([]) == (0, None, None, None, None)
    assert summarize([5.0])[:2] == (1, 5.0)


def test_masking_follows_environment_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Secret values are cached between calls; a changed, added or removed variable must show."""
    from trace_bench._util.masking import mask_secrets

    monkeypatch.setenv("SOME_SERVICE_TOKEN", "first-value-123456")
    assert mask_secrets("a first-value-123456 b") == "a *** b"
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "second-value-123456")
    assert mask_secrets("first-value-123456 second-value-123456") == "first-value-123456 ***"
    monkeypatch.delenv("SOME_SERVICE_TOKEN")
    assert mask_secrets("second-value-123456") == "second-value-123456"
