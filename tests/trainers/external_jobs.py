"""Run matrix jobs in this process (the real job body) and read what they persisted.

External-trainer tests need many small jobs; the job body is the same one every executor calls,
so running it in-process checks the same artifacts at a fraction of the start-up cost.  Process
globals the job body sets (env context, the current session, opto's LLM factory) are restored.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from trace_bench.config.loader import parse_config
from trace_bench.matrix.expand import JobSpec, expand_matrix
from trace_bench.registry.tasks import TaskCatalog
from trace_bench.runner.job.body import run_job
from trace_bench.store.job_store import JobStore
from trace_bench.store.models import JobResult

# what the job body itself sets for the job's process (its context and the run's sandbox setting)
JOB_ENV = ("TRACE_BENCH_MODE", "TRACE_BENCH_JOB_DIR", "TRACE_BENCH_RUN_ID", "TRACE_BENCH_JOB_ID", "TRACE_BENCH_SANDBOX")


def expand(config: dict[str, Any], root: Path | None = None) -> list[JobSpec]:
    return expand_matrix(parse_config(config), TaskCatalog.create(root))


def run_jobs(config: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
             root: Path | None = None) -> list[tuple[JobResult, Path]]:
    import opto.utils.llm as opto_llm

    import trace_bench.llm.current as current

    for name in JOB_ENV:
        monkeypatch.setenv(name, "")
    monkeypatch.setattr(opto_llm, "LLM", opto_llm.LLM)
    monkeypatch.setattr(current, "_SESSION", current._SESSION)
    done = []
    for spec in expand(config, root):
        job = JobStore(tmp_path / "run" / "jobs" / spec.job_id)
        done.append((run_job(spec, job, run_id="test-run"), job.root))
    return done


def curve_rows(job_dir: Path) -> list[dict[str, str]]:
    with open(job_dir / "artifacts" / "curve.csv", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def events(job_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (job_dir / "events.jsonl").read_text().splitlines()]


def assert_ok_with_curve(result: JobResult, job_dir: Path, min_steps: int = 1) -> None:
    assert result.status == "ok", (result.error, result.traceback)
    rows = curve_rows(job_dir)
    assert len(rows) >= 1 + min_steps, rows
    assert result.n_steps >= min_steps
    assert result.llm_calls > 0 and result.prompt_tokens > 0
    calls = [e for e in events(job_dir) if e["type"] == "llm_call"]
    assert calls and all(not e.get("error") for e in calls)


def assert_no_leaks(env_before: dict[str, str]) -> None:
    """The job left no library settings behind: no global DSPy LM, no new env variables (other than
    the harness's own telemetry-off defaults and job context)."""
    import os
    import sys

    from trace_bench._util.runtime import DEFAULTS

    if "dspy" in sys.modules:
        assert sys.modules["dspy"].settings.lm is None
    added = set(os.environ) - set(env_before) - set(JOB_ENV) - set(DEFAULTS)
    assert not added, added


def run_real_against_fake_server(task: str, trainer: dict[str, Any], tmp_path: Path,
                                 monkeypatch: pytest.MonkeyPatch) -> tuple[JobResult, Path, dict[str, Any]]:
    """One real-mode job against the fake server; asserts the metered totals equal what the server
    returned, exactly, and returns (result, job dir, server stats) for further checks."""
    from trace_bench.llm.fake_server import FakeLLMServer

    with FakeLLMServer() as server:
        config = {"mode": "real", "tasks": [task], "trainers": [trainer], "seeds": [1],
                  "llm": {"base_url": server.url, "model": "fake-model", "max_retries": 0}}
        [(result, job)] = run_jobs(config, tmp_path, monkeypatch)
        stats = server.stats()
    assert_ok_with_curve(result, job)
    assert result.llm_calls == stats["requests"] == stats["ok"] > 0
    assert (result.prompt_tokens, result.completion_tokens) == (stats["prompt_tokens"], stats["completion_tokens"])
    return result, job, stats
