"""Chaos: ``kill -9`` of the driver mid-job takes every process of the run down, and the LLM spend
the killed attempt caused (calls in flight included) is carried by ``--resume``.

The job's guide starts a process in a session of its own and a sandboxed program that sleep for
ten minutes, then evaluates slowly; the fake provider answers slowly.  The test collects every
descendant of the driver from /proc just before the kill and polls until none is left (the issue
asked for 2 s; the test waits up to its patience, as a loaded machine can take longer to schedule
the template's exit, and says how long it took).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.llm.servers import preflight_requests
from tests.waiting import PATIENCE_S, read_events
from trace_bench.llm.fake_server import FakeLLMServer
from trace_bench.store.spend import cut_off_calls

pytestmark = [pytest.mark.chaos, pytest.mark.slow,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")]

KEY = "sk-orphan" + "Z1x2C3v4B5n6M7q8W9e0"
BUDGET = 9  # real mode: about 1 s per call
CAP = 64  # llm.max_tokens: what a call cut off in flight is charged for its completion
STUB_BUDGET = 24  # stub calls are instant: a larger budget keeps the job running to the kill (~0.3 s per evaluation)
TASK = '''
import subprocess, sys, threading, time
from pathlib import Path

from opto import trace

from trace_bench.tasks.guide import Guide


def _sandboxed_sleep():
    from trace_bench.sandbox import SandboxLimits, run_sandboxed

    run_sandboxed("tests.sandbox.targets:run_code", {"code": "import time\\ntime.sleep(600)"},
                  SandboxLimits(wall_s=600))


class SpawningGuide(Guide):
    def __init__(self, marker, delay):
        self.marker, self.delay, self.evaluations = Path(marker), delay, 0

    def get_feedback(self, query, response, reference=None, **kwargs):
        if self.evaluations == 0:
            subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
            threading.Thread(target=_sandboxed_sleep, daemon=True).start()
        self.evaluations += 1
        self.marker.write_text(str(self.evaluations))
        time.sleep(self.delay)
        return -abs(float(response) - 3.0), "off by %g" % abs(float(response) - 3.0)


def build_trace_problem(**eval_kwargs):
    return {
        "param": trace.node(0.0, name="x", trainable=True),
        "guide": SpawningGuide(eval_kwargs["marker"], float(eval_kwargs.get("delay", 0.2))),
        "train_dataset": {"inputs": [0], "infos": [3.0]},
        "stub_candidates": [1.0, 2.0, 3.0],
    }
'''


def _config(tmp_path: Path, mode: str, url: str = "", budget: int = BUDGET) -> Path:
    llm = (f"llm:\n  base_url: {url}\n  model: fake-model\n  api_key_env: FAKE_LLM_KEY\n  timeout_s: 30\n"
           f"  max_tokens: {CAP}\n  prices: {{fake-model: {{input_per_mtok: 0.5, output_per_mtok: 1.5}}}}\n") if url else ""
    config = tmp_path / "c.yaml"
    config.write_text(f"""
run_id: orphans
mode: {mode}
sandbox: weak
tasks:
  - id: orphan_maker
    eval_kwargs: {{marker: {tmp_path / 'evaluations'}, delay: 0.3}}
trainers:
  - id: PrioritySearch
    ps_steps: 50
seeds: [1]
budget:
  llm_calls: {budget}
{llm}""")
    (tmp_path / "tasks").mkdir(exist_ok=True)
    (tmp_path / "tasks" / "orphan_maker.py").write_text(TASK)
    return config


def _cli(tmp_path: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "trace_bench", *args, "--root", str(tmp_path / "tasks"),
            "--runs-dir", str(tmp_path / "runs"), "--quiet"]


def _env() -> dict[str, str]:
    return {**os.environ, "FAKE_LLM_KEY": KEY}


def _start_time(pid: int) -> str | None:
    """The process's start time (tells a pid from its reuse); None when it is gone or a zombie."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return None if fields[0] == "Z" else fields[19]


def _descendants(root: int) -> dict[int, str]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    found: dict[int, str] = {}
    pending = [root]
    while pending:
        for child in children.get(pending.pop(), []):
            start = _start_time(child)
            if start is not None:
                found[child] = start
                pending.append(child)
    return found


def _cmdlines(pids: dict[int, str]) -> list[str]:
    lines = []
    for pid in pids:
        try:
            lines.append(Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " ")[:120])
        except OSError:
            pass
    return lines


def _wait_for(condition: Callable[[], bool], proc: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + 240  # bounds a broken test only
    while not condition():
        assert proc.poll() is None, f"the run ended before {what}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def _kill_and_check_tree(proc: subprocess.Popen[bytes]) -> dict[int, str]:
    """SIGKILL the driver; every process it had below it must go."""
    tree = _descendants(proc.pid)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    _assert_gone(tree, "the driver's kill")
    return tree


def _assert_gone(tree: dict[int, str], after: str) -> None:
    since = time.monotonic()
    survivors = tree
    while survivors and time.monotonic() - since < PATIENCE_S:
        survivors = {pid: start for pid, start in survivors.items() if _start_time(pid) == start}
        time.sleep(0.01)
    for pid in survivors:  # leave nothing behind for the next test
        with _suppress():
            os.kill(pid, signal.SIGKILL)
    waited = time.monotonic() - since
    assert not survivors, f"alive {waited:.1f} s after {after}: {_cmdlines(survivors)}"


class _suppress:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return True


def _has_sandbox_and_sleeper(proc: subprocess.Popen[bytes]) -> bool:
    lines = _cmdlines(_descendants(proc.pid))
    return any("time.sleep(600)" in line for line in lines) and any("trace_bench.sandbox" in line or
                                                                   "bwrap" in line for line in lines)


def _job_dir(tmp_path: Path) -> Path:
    jobs = [d for d in (tmp_path / "runs" / "orphans" / "jobs").iterdir() if d.is_dir()]
    assert len(jobs) == 1
    return jobs[0]


def _train_calls(job: Path) -> int:
    events = [e for e in read_events(job / "events.jsonl") if e.get("type") == "llm_call"]  # a torn last line skipped
    return sum(1 for e in events if e.get("phase", "train") == "train" and not e.get("error"))


def test_kill_mid_request_takes_the_tree_down_and_resume_carries_what_the_provider_saw(tmp_path: Path) -> None:
    with FakeLLMServer(api_key=KEY, latency=0.6) as server:
        config = _config(tmp_path, "real", server.url)
        proc = subprocess.Popen(_cli(tmp_path, "run", "--config", str(config)), cwd=REPO, env=_env(),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        _wait_for(lambda: _has_sandbox_and_sleeper(proc), proc, "the job started its processes")
        _wait_for(lambda: server.stats()["requests"] >= 3 and server.stats()["in_flight"] >= 1, proc,
                  "a request in flight after 3 were sent")
        tree = _kill_and_check_tree(proc)
        assert len(tree) >= 5, _cmdlines(tree)  # template, watchdog, body, sleeper, sandbox
        sent = server.stats()["requests"]
        deadline = time.monotonic() + 60
        while server.stats()["in_flight"] and time.monotonic() < deadline:  # the cut request completes
            time.sleep(0.02)
        at_kill = server.stats()
        assert at_kill["requests"] == sent < BUDGET, "nothing called the provider after the kill"
        cut = len(cut_off_calls(_job_dir(tmp_path) / "llm_spend.jsonl"))
        assert cut >= 1
        checks_first, _ = preflight_requests(tmp_path / "runs" / "orphans")  # the run's own, not the job's
        sent -= checks_first

        resumed = subprocess.run(_cli(tmp_path, "run", "--resume", str(tmp_path / "runs" / "orphans")), cwd=REPO,
                                 env=_env(), capture_output=True, text=True, timeout=600)
        total = server.stats()
    assert resumed.returncode == 0, resumed.stderr
    checks, completions = preflight_requests(tmp_path / "runs" / "orphans")
    assert completions == 0, "the model is listed: the preflight made no completion"
    total["requests"] -= checks
    job = _job_dir(tmp_path)
    ledger = json.loads((job / "attempts.json").read_text())
    assert ledger["attempts"] == 2
    assert ledger["carried"]["llm_calls"] == sent, "every request the provider received is carried"
    # the completion of a call cut in flight is unknown to the harness: its prompt's bound and a
    # completion of the max_tokens cap are charged, never below what the provider counted for it
    assert at_kill["total_tokens"] <= ledger["carried"]["tokens"]
    record = json.loads((job / "results.json").read_text())
    assert record["budget_spent"]["llm_calls"] == total["requests"] <= BUDGET
    # the cost columns are the job's whole spend; the part of the killed attempt is carried_*
    assert record["llm_calls"] == total["requests"] and record["carried_llm_calls"] == sent
    assert record["carried_tokens"] == ledger["carried"]["tokens"]
    assert record["total_tokens"] - record["carried_tokens"] == total["total_tokens"] - at_kill["total_tokens"]


def test_kill_in_stub_mode_takes_the_tree_down_and_resume_carries_the_calls(tmp_path: Path) -> None:
    config = _config(tmp_path, "stub", budget=STUB_BUDGET)
    proc = subprocess.Popen(_cli(tmp_path, "run", "--config", str(config)), cwd=REPO, env=_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    _wait_for(lambda: _has_sandbox_and_sleeper(proc), proc, "the job started its processes")
    job = _job_dir(tmp_path)
    _wait_for(lambda: _train_calls(job) >= 3, proc, "3 LLM calls")
    evaluations = (tmp_path / "evaluations").read_text()
    _wait_for(lambda: (tmp_path / "evaluations").read_text() != evaluations, proc, "the next evaluation")
    _kill_and_check_tree(proc)
    made = _train_calls(job)
    assert 3 <= made < STUB_BUDGET

    resumed = subprocess.run(_cli(tmp_path, "run", "--resume", str(tmp_path / "runs" / "orphans")), cwd=REPO,
                             env=_env(), capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    ledger = json.loads((job / "attempts.json").read_text())
    assert ledger["carried"]["llm_calls"] == made
    record = json.loads((job / "results.json").read_text())
    assert record["budget_spent"]["llm_calls"] == made + _train_calls(job) <= STUB_BUDGET


def test_a_finished_job_leaves_no_process_behind(tmp_path: Path) -> None:
    """What a job started in another session is killed when the job ends, not only on a kill."""
    config = _config(tmp_path, "stub")
    proc = subprocess.Popen(_cli(tmp_path, "run", "--config", str(config)), cwd=REPO, env=_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    _wait_for(lambda: _has_sandbox_and_sleeper(proc), proc, "the job started its processes")
    tree = _descendants(proc.pid)
    assert proc.wait(timeout=600) == 0
    _assert_gone(tree, "the run ended")
