"""KernelBench: the evaluation-server protocol against a fake server, scores, availability, jobs.

The fake server (127.0.0.1, random port) reads markers in the candidate: FAKE_COMPILE_ERROR,
FAKE_WRONG, FAKE_HANG (never answers while the test runs), FAKE_MALFORMED (not JSON); otherwise the
candidate is correct, 1.25x faster when it overrides ``forward``.  It checks the bearer token.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.trainers.external_jobs import assert_ok_with_curve, expand, run_jobs
from tests.waiting import PATIENCE_S
from trace_bench.registry.tasks import TaskCatalog
from trace_bench.tasks.kernelbench import catalog
from trace_bench.tasks.kernelbench.evaluation import EvalServerError, KernelResult, RemoteEvaluator
from trace_bench.tasks.kernelbench.problem import KernelGuide

TOKEN = "kb-test-token"


class FakeEvalServer:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.released = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (the hang case)
                    pass

            def do_GET(self) -> None:  # noqa: N802
                self._send(200, b'{"status": "ok"}')

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                    self._send(401, b'{"error": "bad token"}')
                    return
                owner.requests.append(body)
                src = body["custom_src"]
                if "FAKE_HANG" in src:
                    owner.released.wait()
                if "FAKE_MALFORMED" in src:
                    self._send(200, b"<html>oops")
                    return
                result: dict[str, Any] = {"compiled": True, "correct": True, "runtime_ms": 1.0,
                                          "ref_runtime_ms": 1.0, "error": None}
                if "FAKE_COMPILE_ERROR" in src:
                    result = {"compiled": False, "correct": False, "error": "nvcc: syntax error at line 3"}
                elif "FAKE_WRONG" in src:
                    result = {"compiled": True, "correct": False, "error": "max abs difference 0.5"}
                elif "def forward" in src.split("class ModelNew", 1)[-1]:
                    result["runtime_ms"] = 0.8
                self._send(200, json.dumps(result).encode())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        self.released.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeEvalServer]:
    server = FakeEvalServer()
    monkeypatch.setenv("TRACE_BENCH_KERNELBENCH_URL", server.url)
    monkeypatch.setenv("TRACE_BENCH_KERNELBENCH_TOKEN", TOKEN)
    yield server
    server.stop()


def _info(problem: str = "level0/relu") -> dict[str, str]:
    return {"problem_id": problem, "ref_arch_src": catalog.problems()[problem].source()}


def test_protocol_outcomes(fake_server: FakeEvalServer) -> None:
    guide = KernelGuide(RemoteEvaluator(fake_server.url, token=TOKEN, timeout_s=PATIENCE_S), seed=3)
    base = catalog.initial_candidate(_info()["ref_arch_src"])
    assert guide.get_feedback("q", base, _info())[0] == 1.0
    fast = base + "    def forward(self, x):\n        return super().forward(x)\n"
    score, feedback = guide.get_feedback("q", fast, _info())
    assert score == pytest.approx(1.25) and "speedup 1.250x" in feedback
    assert guide.get_feedback("q", base + "# FAKE_COMPILE_ERROR", _info()) == (
        0.0, "ModelNew did not compile or load: nvcc: syntax error at line 3")
    score, feedback = guide.get_feedback("q", base + "# FAKE_WRONG", _info())
    assert score == 0.0 and "incorrect" in feedback and "0.5" in feedback
    request = fake_server.requests[0]
    assert set(request) == {"problem_id", "ref_arch_src", "custom_src", "timeout", "seed"} and request["seed"] == 3
    impatient = KernelGuide(RemoteEvaluator(fake_server.url, token=TOKEN, timeout_s=1.0, slack_s=0.5), seed=3)
    for judge, marker, message in ((guide, "FAKE_MALFORMED", "invalid JSON"), (impatient, "FAKE_HANG", "timed out")):
        with pytest.raises(EvalServerError, match=message) as caught:
            judge.get_feedback("q", base + f"# {marker}", _info())
        assert caught.value.job_status == "infra_error"
    n = len(fake_server.requests)
    guide.get_feedback("q", base, _info())
    assert len(fake_server.requests) == n, "a candidate is evaluated once per job"
    with pytest.raises(EvalServerError, match="answered 401"):
        RemoteEvaluator(fake_server.url, token="wrong").evaluate("level0/relu", "x", "y", 0)
    with pytest.raises(EvalServerError, match="malformed"):
        KernelResult.from_json({"compiled": "yes", "correct": True})
    assert RemoteEvaluator(fake_server.url).health() == {"status": "ok"}


def test_shipped_problems_and_a_local_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shipped = catalog.problems()
    assert set(shipped) >= {"level0/elementwise_add", "level0/relu", "level0/matmul_bias", "level0/softmax"}
    for problem in shipped.values():
        source = problem.source()
        assert "class Model(nn.Module)" in source and "def get_inputs" in source and "def get_init_inputs" in source
    level = tmp_path / "KernelBench" / "level1"
    level.mkdir(parents=True)
    (level / "19_ReLU.py").write_text('"""ReLU."""\n')
    monkeypatch.setenv("TRACE_BENCH_KERNELBENCH_ROOT", str(tmp_path))
    assert catalog.problems()["level1/19_ReLU"].level == 1


def test_stub_jobs_through_the_server_and_infra_failure(fake_server: FakeEvalServer, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    assert "kernelbench:level0/softmax" in [s.id for s in TaskCatalog.create().list(["kernelbench"])]
    config = {"tasks": ["kernelbench:level0/relu"], "trainers": [{"id": "PrioritySearch", "ps_steps": 2}],
              "seeds": [1]}
    [(result, job)] = run_jobs(config, tmp_path / "ok", monkeypatch)
    assert_ok_with_curve(result, job)
    assert result.score_initial == 1.0 and result.score_best == pytest.approx(1.25)
    monkeypatch.setenv("TRACE_BENCH_KERNELBENCH_URL", "http://127.0.0.1:9")  # nothing listens on port 9
    [(down, _)] = run_jobs(config, tmp_path / "down", monkeypatch)
    assert down.status == "infra_error" and "unreachable" in down.error


def test_unavailable_without_cuda_or_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRACE_BENCH_KERNELBENCH_URL", raising=False)
    monkeypatch.setattr("trace_bench.tasks.kernelbench.missing_packages", lambda *names: list(names))
    spec = TaskCatalog.create().get("kernelbench:level0/relu")
    assert spec.unavailable_reason() == "no CUDA and no eval_server_url"
    [job] = expand({"tasks": ["kernelbench:level0/relu"], "trainers": ["NoOpTrainer"]})
    assert job.skip_reason == "task unavailable: no CUDA and no eval_server_url"
    own_server = {"id": "kernelbench:level0/relu", "eval_kwargs": {"eval_server_url": "http://127.0.0.1:9"}}
    [job] = expand({"tasks": [own_server], "trainers": ["NoOpTrainer"]})
    assert job.skip_reason is None



def test_trials_per_timed_run_reach_the_local_evaluator(monkeypatch: pytest.MonkeyPatch) -> None:
    """eval_kwargs.trials sets how many inputs each timed run takes on this machine's GPU."""
    from trace_bench.tasks.kernelbench import problem as kernel_problem
    from trace_bench.tasks.kernelbench.local import LocalEvaluator

    monkeypatch.delenv("TRACE_BENCH_KERNELBENCH_URL", raising=False)
    monkeypatch.setattr(kernel_problem, "cuda_available", lambda: True)
    monkeypatch.setattr(LocalEvaluator, "prepare", lambda self: None)
    default = kernel_problem.build_trace_problem("level0/relu")["guide"].evaluator
    chosen = kernel_problem.build_trace_problem("level0/relu", trials=3)["guide"].evaluator
    assert isinstance(chosen, LocalEvaluator) and (default.trials, chosen.trials) == (20, 3)

@pytest.mark.gpu
def test_local_cuda_evaluation() -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    from trace_bench.tasks.kernelbench.local import LocalEvaluator

    info = _info("level0/elementwise_add")
    result = LocalEvaluator(timeout_s=300, trials=5).evaluate(info["problem_id"], info["ref_arch_src"],
                                                              catalog.initial_candidate(info["ref_arch_src"]), 0)
    assert result.compiled and result.correct and result.speedup > 0
    wrong = info["ref_arch_src"] + "\nclass ModelNew(Model):\n    def forward(self, a, b):\n        return a - b\n"
    assert not LocalEvaluator(timeout_s=300, trials=5).evaluate(info["problem_id"], info["ref_arch_src"], wrong, 0).correct
