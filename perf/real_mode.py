"""Real mode against the fake provider: what a job pays beyond its LLM time.

Starts ``trace-bench fake-llm`` on loopback with a fixed latency per chat completion (50 ms by
default), runs one small matrix in real mode against it and the same matrix in stub mode, and
prints per job:

- the first LLM call's latency (``latency_s`` of the job's first ``llm_call`` event), which used to
  include importing the provider library (target: every job's < 0.5 s at 50 ms provider latency);
- the overhead beyond LLM time: the job's ``time_seconds`` minus the time inside its LLM calls
  (their ``latency_s``), except that a first call's excess over the job's median later call is
  overhead, since that is where an import lands (target: the real run's median within 50 ms of
  the stub run's);
- what a real call costs beyond the provider's latency (HTTP, the client, the fake server's own
  work), the median over every later call;
- the run's wall time and the preflight's (real mode checks the key and endpoint first);
- a wrong key: the exit code, how long until it, and how many jobs ran (target: exit 2 before any
  job, < 15 s).  The fake server lists its models to anyone (``--public-models``, as llama.cpp
  does), so the preflight must prove the key with a one-token completion.

Usage: ``python perf/real_mode.py [--latency 0.05] [--seeds 4] [--rounds 1]``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _util import BIN, REPO, report

CONFIG = """
mode: {mode}
tasks: [internal:numeric_param, internal:multi_param]
trainers:
  - id: MinibatchAlgorithm
    params_variants: [{{num_steps: 3}}]
  - id: BasicSearchAlgorithm
    params_variants: [{{num_steps: 2, num_proposals: 2}}]
seeds: {seeds}
max_workers: 2
llm:
  base_url: {url}
  model: fake-model
  api_key_env: PERF_FAKE_KEY
  timeout_s: 60
"""


def start_fake(latency: float) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([str(BIN / "trace-bench"), "fake-llm", "--port", "0", "--latency", str(latency),
                             "--api-key", "perf-key", "--public-models"], stdout=subprocess.PIPE, text=True,
                            cwd=REPO)
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    if not url.startswith("http://127.0.0.1:"):
        proc.kill()
        sys.exit(f"fake-llm did not start: {url!r}")
    return proc, url


def run(mode: str, url: str, seeds: int, runs: Path, key: str = "perf-key",
        expect: int = 0) -> tuple[float, Path | None, str]:
    config = runs.with_suffix(f".{mode}.yaml")
    config.write_text(CONFIG.format(mode=mode, url=url, seeds=list(range(1, seeds + 1))))
    env = {**os.environ, "PERF_FAKE_KEY": key}
    start = time.perf_counter()
    proc = subprocess.run([str(BIN / "trace-bench"), "run", "--config", str(config), "--runs-dir", str(runs)],
                          cwd=REPO, capture_output=True, text=True, check=False, env=env)
    wall = time.perf_counter() - start
    if expect != 0:
        runs_made = [d for d in runs.iterdir() if d.is_dir()] if runs.exists() else []
        return wall, runs_made[0] if runs_made else None, f"{proc.returncode}"
    if proc.returncode != 0:
        sys.exit(f"{mode} run failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return wall, next(d for d in runs.iterdir() if d.is_dir()), proc.stdout


def per_job(run_dir: Path) -> list[dict[str, Any]]:
    """First-call latency, LLM seconds and overhead of each job."""
    with open(run_dir / "results.csv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    jobs = []
    for row in rows:
        events = run_dir / "jobs" / row["job_id"] / "events.jsonl"
        calls = [e for e in map(json.loads, events.read_text().splitlines()) if e.get("type") == "llm_call"]
        latencies = [float(e.get("latency_s") or 0) for e in calls]
        llm_s = sum(latencies)
        if len(latencies) > 1:  # the first call's excess over a typical call is overhead
            llm_s -= max(0.0, latencies[0] - statistics.median(latencies[1:]))
        jobs.append({"first": float(calls[0]["latency_s"]) if calls else float("nan"), "calls": len(calls),
                     "later": latencies[1:], "time": float(row["time_seconds"]),
                     "overhead": float(row["time_seconds"]) - llm_s})
    return jobs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=1, help="stub/real pairs, alternating")
    args = parser.parse_args()
    print(f"load average: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    server, url = start_fake(args.latency)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for index in range(args.rounds):
                stub_wall, stub_dir, _ = run("stub", url, args.seeds, Path(tmp) / f"stub{index}")
                real_wall, real_dir, _ = run("real", url, args.seeds, Path(tmp) / f"real{index}")
                assert stub_dir is not None and real_dir is not None
                stub, real = per_job(stub_dir), per_job(real_dir)
                firsts = [j["first"] for j in real]
                stub_overhead = statistics.median(j["overhead"] for j in stub)
                real_overhead = statistics.median(j["overhead"] for j in real)
                print(f"-- round {index + 1}: {len(real)} jobs, {sum(j['calls'] for j in real)} real calls "
                      f"at {args.latency * 1000:.0f} ms")
                report("real: first LLM call, worst job", max(firsts), "s", "< 0.5 s")
                report("real: first LLM call, median job", statistics.median(firsts), "s")
                later = [latency for j in real for latency in j["later"]]
                report("real: later calls, median latency", statistics.median(later), "s")
                report("real: a call beyond the provider's latency, median",
                       (statistics.median(later) - args.latency) * 1000, "ms")
                report("stub: per-job overhead beyond LLM time, median", stub_overhead * 1000, "ms")
                report("real: per-job overhead beyond LLM time, median", real_overhead * 1000, "ms")
                report("real - stub overhead, median", (real_overhead - stub_overhead) * 1000, "ms", "<= 50 ms")
                report("stub run wall", stub_wall, "s")
                report("real run wall", real_wall, "s")
            wall, run_dir, code = run("real", url, args.seeds, Path(tmp) / "wrong", key="wrong-key", expect=2)
            jobs = len(list(run_dir.glob("jobs/*/results.json"))) if run_dir else 0
            print(f"-- wrong key: exit {code} after {wall:.2f} s, {jobs} job(s) ran (target: exit 2, no job, < 15 s)")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
