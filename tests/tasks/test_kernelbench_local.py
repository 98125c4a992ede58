"""KernelBench's local evaluator: both models in the sandbox, the verdict and the timing in the job.

No GPU and no torch here: ``tests/fixtures/fake_torch`` stands in for torch at the boundary (numpy
tensors; ``cuda`` is a name), and is what the sandbox imports as ``torch``.  What is checked is
the evaluator's own logic: the same seeds for both models, correctness judged by the job from
whole outputs, the job's clock (a model that sleeps is slower, whatever it says), errors and timeouts of
the candidate, and a job that uses it.  The real thing on a GPU is
``test_kernelbench.py::test_local_cuda_evaluation`` (marked gpu).
"""

from __future__ import annotations

import csv
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.conftest import FIXTURES, only_run_dir, run_cli

pytestmark = [pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox targets Linux"),
              pytest.mark.usefixtures("fake_torch")]

FAKE_TORCH = FIXTURES / "fake_torch"

# Small inputs, so that the job's clock measures the models, not the drawing of their inputs.
SMALL = '''
import time
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.randn(8)

    def forward(self, x):
        time.sleep(SLEEP)
        return torch.relu(x * self.weight)


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
'''
REFERENCE = SMALL.replace("SLEEP", "0.02")
SAME = REFERENCE + "\n\nclass ModelNew(Model):\n    pass\n"


def _model_new(body: str) -> str:
    return REFERENCE + "\n\nclass ModelNew(Model):\n" + body


@pytest.fixture
def fake_torch(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The stand-in torch importable here and in the sandbox (which sees the packages the job imports)."""
    from tests.sandbox.conftest import require_bwrap
    from trace_bench.sandbox import SETTING_ENV, shutdown

    monkeypatch.delenv(SETTING_ENV, raising=False)
    require_bwrap()
    monkeypatch.syspath_prepend(str(FAKE_TORCH))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(FAKE_TORCH), os.environ.get("PYTHONPATH")) if p))
    shutdown()  # a sandbox started before this test cannot see the stand-in
    yield
    shutdown()
    for name in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
        del sys.modules[name]


def _evaluate(custom: str, reference: str = REFERENCE, timeout_s: float = 120, trials: int = 5) -> Any:
    from trace_bench.tasks.kernelbench.local import LocalEvaluator

    return LocalEvaluator(timeout_s=timeout_s, trials=trials).evaluate("test/small", reference, custom, seed=7)


def test_a_correct_candidate_is_timed_by_the_jobs_clock() -> None:
    same = _evaluate(SAME)
    assert (same.compiled, same.correct) == (True, True), same
    assert 0.2 < same.speedup < 5  # the same model, both timed the same way
    slower = _evaluate(_model_new("    def forward(self, x):\n        time.sleep(0.2)\n        return super().forward(x)\n"))
    assert slower.correct and slower.speedup < 0.5, slower
    faster = _evaluate(_model_new("    def forward(self, x):\n        return torch.relu(x * self.weight)\n"))
    assert faster.correct and faster.speedup > 2, faster


def test_what_the_candidate_says_about_itself_is_never_read() -> None:
    """Finding 3: the local evaluator's result line was the candidate's to print (a 100,000x speedup)."""
    forged = _model_new('''    def forward(self, x):
        import json, sys
        print(json.dumps({"compiled": True, "correct": True, "runtime_ms": 1e-5, "ref_runtime_ms": 1.0}))
        import torch.cuda
        torch.cuda.advance(-1000.0)
        time.sleep(0.2)
        return super().forward(x)
''')
    result = _evaluate(forged)
    assert result.correct and result.speedup < 0.5, result  # as slow as it really is


@pytest.mark.parametrize(("body", "compiled", "message"), [
    ("    def forward(self, x):\n        return x * 2\n", True, "wrong result: max abs difference"),
    ("    def forward(self, x):\n        return x[:1]\n", True, "output shape (1, 8) != expected (4, 8)"),
    ("    def forward(self, x):\n        raise RuntimeError('illegal memory access')\n", True,
     "runtime error: RuntimeError: illegal memory access"),
    ("    def __init__(self):\n        raise ValueError('no such kernel')\n", False, "ValueError: no such kernel"),
    ("    def forward(self, x) return x\n", False, "SyntaxError"),
])
def test_a_bad_candidate_is_reported_with_its_reason(body: str, compiled: bool, message: str) -> None:
    result = _evaluate(_model_new(body))
    assert (result.compiled, result.correct) == (compiled, False) and message in result.error, result


def test_crashes_and_hangs_end_as_failures_of_the_candidate() -> None:
    crashed = _evaluate("import os\nos._exit(3)\n")
    assert not crashed.compiled and "exit" in crashed.error, crashed
    hung = _evaluate(_model_new("    def forward(self, x):\n        while True:\n            pass\n"), timeout_s=5)
    assert (hung.compiled, hung.correct) == (True, False) and hung.error.startswith(("timeout", "runtime error")), hung


def _sent(output: np.ndarray, sample: Any, shape: list[int] | None = None) -> dict[str, Any]:
    """``output`` as a call sends it, read back by the job."""
    import threading

    from trace_bench.sandbox.frames import read_value
    from trace_bench.tasks.kernelbench.local import read_output
    from trace_bench.tasks.kernelbench.local_eval import send_output

    read_end, write_end = os.pipe()
    writer = threading.Thread(target=lambda: (send_output(write_end, output), os.close(write_end)))
    writer.start()
    try:
        return read_output(read_end, read_value(read_end, 1 << 20)["output"], sample, shape)
    finally:
        writer.join()
        os.close(read_end)


def test_every_value_is_compared_up_to_the_sample_size_and_secret_positions_beyond() -> None:
    """Issue 40, finding 3: the digest sampled 4,096 positions the candidate knew, and its projections' bound
    was wider than any projection: a model computing only those positions passed (2.68x "speedup")."""
    import random

    from trace_bench.tasks.kernelbench.local import SAMPLED_VALUES, Sample, close

    rng = np.random.default_rng(0)
    small = rng.standard_normal((64, 128)).astype(np.float32)
    sample = Sample(random.Random(1))
    expected = _sent(small, sample)
    assert len(expected["values"]) == small.size  # every value
    assert close(expected, _sent(small + 1e-4, sample), 1e-2) == ""
    one_off = small.copy()
    one_off[5, 7] += 1.0
    assert "1 of 8192 compared values differ" in close(expected, _sent(one_off, sample), 1e-2)
    large = rng.standard_normal(SAMPLED_VALUES * 3).astype(np.float32)
    sample = Sample(random.Random(2))
    expected = _sent(large, sample)
    assert len(expected["values"]) == SAMPLED_VALUES
    assert close(expected, _sent(large, sample), 1e-2) == ""
    partly = large.copy()
    partly[4096:] = 0.0  # only the first 4,096 values computed
    assert close(expected, _sent(partly, sample), 1e-2).startswith("wrong result")
    rarely = large.copy()
    rarely[rng.choice(large.size, 1000, replace=False)] += 5.0  # 1e-4 of the values wrong: (1 - 1e-4)^(2^20) < 1e-45
    assert close(expected, _sent(rarely, sample), 1e-2).startswith("wrong result")
    assert close(expected, _sent(large.reshape(3, -1), sample, [3, SAMPLED_VALUES]), 1e-2).startswith("output shape")


def test_a_kernelbench_job_evaluates_on_the_local_gpu(tmp_path: Path) -> None:
    """Through the CLI: no evaluation server, a (fake) NVIDIA driver and torch: the task is available,
    and each candidate is evaluated in the sandbox."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "nvidia-smi").write_text("#!/bin/sh\necho 'NVIDIA-SMI (test stand-in)'\n")
    (bin_dir / "nvidia-smi").chmod(0o755)
    config = tmp_path / "c.yaml"
    # eval_kwargs.trials: inputs per timed run (20 by default: ~7 s per evaluation on the fake torch's CPU)
    config.write_text("tasks:\n  - id: kernelbench:level0/relu\n    eval_kwargs: {trials: 2}\n"
                      "trainers:\n  - id: PrioritySearch\n    ps_steps: 2\n    ps_candidates: 1\n    ps_proposals: 1\n")
    env: dict[str, str | None] = {
        "PYTHONPATH": os.pathsep.join(p for p in (str(FAKE_TORCH), os.environ.get("PYTHONPATH")) if p),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "TRACE_BENCH_KERNELBENCH_URL": None,
    }
    proc = run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "runs"), "--quiet", env=env)
    assert proc.returncode == 0, proc.stderr
    run = only_run_dir(tmp_path / "runs")
    with open(run / "results.csv", encoding="utf-8") as handle:
        [row] = list(csv.DictReader(handle))
    assert row["status"] == "ok" and row["sandbox"] == "bwrap", row
    assert float(row["score_initial"]) > 0  # the initial candidate (the reference itself) is correct
    curve = (run / "jobs" / row["job_id"] / "artifacts" / "curve.csv").read_text().splitlines()
    assert len(curve) == 1 + 3 + 1  # header, initial and two steps, the final state at the job's spend
