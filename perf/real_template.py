"""CPU of a small real run, all its processes, with and without LiteLLM in its job template.

A real run whose every role calls an OpenAI-compatible ``base_url`` and whose every model is priced
in ``llm.prices`` forks its jobs from a template that imports ``openai`` only; any other real run's
template imports LiteLLM too (see ``trace_bench/runner/warm.py``).  This script runs the same
2-job matrix against the fake provider (in this process, on loopback) twice per round: once with
``fake-model`` priced in the config (the template without LiteLLM) and once without (LiteLLM
prices it, so the template loads it), and prints the median CPU of every process of each run (the
driver, the template and the jobs: see ``run_cpu.py``) and the wall time.

Usage: ``python perf/real_template.py [--rounds 5]`` (Linux).
"""

from __future__ import annotations

import argparse
import ctypes
import os
import statistics
import sys
import tempfile
from pathlib import Path

from _util import report
from run_cpu import PR_SET_CHILD_SUBREAPER, run_cpu

from trace_bench.llm.fake_server import FakeLLMServer

CONFIG = """mode: real
tasks: [internal:numeric_param]
trainers: [{{id: MinibatchAlgorithm, num_steps: 2}}]
seeds: [1, 2]
max_workers: 2
llm:
  base_url: {url}
  model: fake-model
  api_key_env: PERF_FAKE_KEY
{prices}"""
PRICES = "  prices: {fake-model: {input_per_mtok: 0.5, output_per_mtok: 1.5}}\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if not sys.platform.startswith("linux"):
        sys.exit("real_template.py needs Linux (prctl PR_SET_CHILD_SUBREAPER)")
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit("prctl(PR_SET_CHILD_SUBREAPER) failed")
    os.environ["PERF_FAKE_KEY"] = "perf-key"
    samples: dict[str, list[tuple[float, float]]] = {"priced": [], "unpriced": []}
    with FakeLLMServer(api_key="perf-key") as server, tempfile.TemporaryDirectory() as tmp:
        for name, prices in (("priced", PRICES), ("unpriced", "")):
            config = Path(tmp) / f"{name}.yaml"
            config.write_text(CONFIG.format(url=server.url, prices=prices), encoding="utf-8")
        run_cpu(Path(tmp) / "priced.yaml", Path(tmp) / "warm-up")
        for index in range(args.rounds):  # alternated, so a change of the machine's speed hits both
            for name in samples:
                samples[name].append(run_cpu(Path(tmp) / f"{name}.yaml", Path(tmp) / f"{name}-{index}"))
    for name, label in (("priced", "priced in llm.prices (template: openai only)"),
                        ("unpriced", "priced by LiteLLM (template: openai + litellm)")):
        report(f"real run, 2 jobs, {label}: CPU", statistics.median(s[0] for s in samples[name]), "core-s")
        report("  wall", statistics.median(s[1] for s in samples[name]), "s")
    saved = statistics.median(u[0] - p[0] for p, u in zip(samples["priced"], samples["unpriced"], strict=True))
    report("CPU saved per run (median of the paired rounds)", saved, "core-s")


if __name__ == "__main__":
    main()
