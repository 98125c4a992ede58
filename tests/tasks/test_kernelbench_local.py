"""KernelBench's local evaluator (``local_eval``) with a stand-in ``torch`` at its boundary.

No GPU and no torch here: ``tests/fixtures/fake_torch`` provides the few torch calls the evaluator
and the reference problems make, on numpy, with a deterministic CUDA clock (``relu`` costs 1 ms,
``clamp`` 0.5 ms).  What is checked is the evaluator's own logic: seeding, correctness checks,
error reporting, timing, the JSON protocol of its child process, timeouts, and a job that uses it.
The real thing on a GPU is ``test_kernelbench.py::test_local_cuda_evaluation`` (marked gpu).
"""

from __future__ import annotations

import csv
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES, only_run_dir, run_cli
from trace_bench.tasks.kernelbench import catalog

FAKE_TORCH = FIXTURES / "fake_torch"
RELU = catalog.problems()["level0/relu"].source()
BASE = catalog.initial_candidate(RELU)

# A reference with a random parameter: ModelNew matches it only when both are built from one seed.
WEIGHTED = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.randn(8)

    def forward(self, x):
        return torch.relu(x * self.weight)


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
'''


def _with_model_new(body: str) -> str:
    return RELU + "\n\nclass ModelNew(Model):\n" + body


@pytest.fixture
def local_eval(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The evaluator module with the stand-in torch importable in this process and in its children."""
    monkeypatch.syspath_prepend(str(FAKE_TORCH))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(FAKE_TORCH), os.environ.get("PYTHONPATH")) if p))
    from trace_bench.tasks.kernelbench import local_eval as module

    yield module
    for name in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
        del sys.modules[name]


def _evaluate(module: Any, custom: str, reference: str = RELU, trials: int = 5) -> dict[str, Any]:
    return module.evaluate({"ref_arch_src": reference, "custom_src": custom, "seed": 7, "trials": trials})


def test_a_correct_candidate_is_timed_against_the_reference(local_eval: Any) -> None:
    same = _evaluate(local_eval, BASE)
    assert same == {"compiled": True, "correct": True, "runtime_ms": 1.0, "ref_runtime_ms": 1.0, "error": None}
    faster = _evaluate(local_eval, _with_model_new("    def forward(self, x):\n        return torch.clamp(x, min=0)\n"))
    assert (faster["correct"], faster["runtime_ms"], faster["ref_runtime_ms"]) == (True, 0.5, 1.0)


def test_model_and_candidate_are_built_from_the_same_seed(local_eval: Any) -> None:
    result = _evaluate(local_eval, WEIGHTED + "\n\nclass ModelNew(Model):\n    pass\n", reference=WEIGHTED)
    assert result["correct"], result


@pytest.mark.parametrize(("body", "compiled", "message"), [
    ("    def forward(self, x):\n        return x * 2\n", True, "wrong result: max abs difference"),
    ("    def forward(self, x):\n        return x[:1]\n", True, "output shape (1, 16384) != expected (256, 16384)"),
    ("    def forward(self, x):\n        raise RuntimeError('illegal memory access')\n", True,
     "runtime error: RuntimeError: illegal memory access"),
    ("    def __init__(self):\n        raise ValueError('no such kernel')\n", False, "ValueError: no such kernel"),
    ("    def forward(self, x) return x\n", False, "SyntaxError"),
])
def test_a_bad_candidate_is_reported_with_its_reason(local_eval: Any, body: str, compiled: bool, message: str) -> None:
    result = _evaluate(local_eval, _with_model_new(body))
    assert (result["compiled"], result["correct"]) == (compiled, False) and message in result["error"], result


def test_the_child_process_speaks_json_and_is_killed_on_timeout(local_eval: Any) -> None:
    from trace_bench.tasks.kernelbench.evaluation import LocalEvaluator

    evaluator = LocalEvaluator(timeout_s=600, trials=3)
    result = evaluator.evaluate("level0/relu", RELU, BASE, seed=1)
    assert (result.compiled, result.correct, result.speedup) == (True, True, 1.0)
    broken = evaluator.evaluate("level0/relu", RELU, _with_model_new("    def forward(self, x):\n        return x + 1\n"), 1)
    assert not broken.correct and "wrong result" in broken.error
    crashed = evaluator.evaluate("level0/relu", RELU, "import os\nos._exit(3)\n", seed=1)
    assert not crashed.compiled and "exit 3" in crashed.error
    # a kernel that never returns: only the evaluator's timeout ends it
    hung = LocalEvaluator(timeout_s=5, trials=3).evaluate(
        "level0/relu", RELU, _with_model_new("    def forward(self, x):\n        while True:\n            pass\n"), 1)
    assert (hung.compiled, hung.correct) == (True, False) and hung.error.startswith("timeout"), hung


def test_a_kernelbench_job_evaluates_on_the_local_gpu(tmp_path: Path) -> None:
    """Through the CLI: no evaluation server, a (fake) NVIDIA driver and torch: the task is available,
    each candidate goes through local_eval in a child process, and the job scores speedups."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "nvidia-smi").write_text("#!/bin/sh\necho 'NVIDIA-SMI (test stand-in)'\n")
    (bin_dir / "nvidia-smi").chmod(0o755)
    log = tmp_path / "torch-imports.log"
    config = tmp_path / "c.yaml"
    config.write_text("tasks: [kernelbench:level0/relu]\ntrainers:\n  - id: PrioritySearch\n    ps_steps: 2\n")
    env: dict[str, str | None] = {
        "PYTHONPATH": os.pathsep.join(p for p in (str(FAKE_TORCH), os.environ.get("PYTHONPATH")) if p),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "FAKE_TORCH_LOG": str(log),
        "TRACE_BENCH_KERNELBENCH_URL": None,
    }
    proc = run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "runs"), "--quiet", env=env)
    assert proc.returncode == 0, proc.stderr
    run = only_run_dir(tmp_path / "runs")
    with open(run / "results.csv", encoding="utf-8") as handle:
        [row] = list(csv.DictReader(handle))
    assert row["status"] == "ok" and float(row["score_initial"]) == 1.0, row
    evaluations = [line for line in log.read_text().splitlines() if "local_eval" in line]
    assert evaluations, "candidates were evaluated by the local evaluator's child process"
    curve = (run / "jobs" / row["job_id"] / "artifacts" / "curve.csv").read_text().splitlines()
    assert len(curve) == 1 + 3 + 1  # header, initial and two steps, the final state at the job's spend
