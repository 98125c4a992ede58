"""kernelbench:level<N>/<problem>: write ``ModelNew``, a faster kernel for the reference ``Model``.

The trainable parameter is the candidate's Python source (``kernel_src``), which must define
``class ModelNew(nn.Module)`` with the reference's constructor and ``forward`` signature (custom
CUDA through ``torch.utils.cpp_extension.load_inline``, Triton, or plain PyTorch).  Score: 0 when
it does not compile or gives a wrong result, else the speedup ``ref_runtime_ms / runtime_ms``
(1.0 = as fast as PyTorch).  Evaluation (see :mod:`.evaluation`): the server at
``eval_kwargs.eval_server_url`` / env ``TRACE_BENCH_KERNELBENCH_URL`` when given (bearer token
from the env variable named by ``eval_server_token_env``, default
``TRACE_BENCH_KERNELBENCH_TOKEN``), else the local GPU, in the sandbox (:mod:`.local`).  Results are cached per candidate within
a job, so re-scoring a state does not re-run the GPU.
"""

from __future__ import annotations

import hashlib
import os
import threading
from typing import Any

from trace_bench.tasks.guide import Guide
from trace_bench.tasks.kernelbench.catalog import initial_candidate, problems
from trace_bench.tasks.kernelbench.evaluation import KernelResult, RemoteEvaluator, cuda_available
from trace_bench.tasks.kernelbench.local import TRIALS, LocalEvaluator

URL_ENV = "TRACE_BENCH_KERNELBENCH_URL"
TOKEN_ENV = "TRACE_BENCH_KERNELBENCH_TOKEN"


class KernelGuide(Guide):
    def __init__(self, evaluator: RemoteEvaluator | LocalEvaluator, seed: int = 0) -> None:
        self.evaluator = evaluator
        self.seed = seed
        self._cache: dict[str, KernelResult] = {}
        self._lock = threading.Lock()

    def result(self, candidate: str, info: dict[str, Any]) -> KernelResult:
        key = hashlib.sha256(f"{info['problem_id']}\0{candidate}".encode()).hexdigest()
        with self._lock:
            cached = self._cache.get(key)
        if cached is None:
            cached = self.evaluator.evaluate(info["problem_id"], info["ref_arch_src"], candidate, self.seed)
            with self._lock:
                self._cache[key] = cached
        return cached

    def get_score_dict(self, query: Any, response: Any, reference: Any = None, **kwargs: Any) -> dict[str, float]:
        result = self.result(str(response), reference)
        return {"speedup": result.speedup, "correct": float(result.compiled and result.correct)}

    def get_feedback(self, query: Any, response: Any, reference: Any = None, **kwargs: Any) -> tuple[float, str]:
        result = self.result(str(response), reference)
        if not result.compiled:
            return 0.0, f"ModelNew did not compile or load: {result.error or 'unknown error'}"
        if not result.correct:
            return 0.0, f"ModelNew is incorrect: {result.error or 'outputs differ from Model'}"
        speedup = result.speedup
        verdict = "faster than" if speedup > 1 else "not faster than"
        return speedup, (f"Correct. ModelNew takes {result.runtime_ms:.4g} ms vs {result.ref_runtime_ms:.4g} ms for "
                         f"Model: speedup {speedup:.3f}x ({verdict} PyTorch). Fuse operations or write a custom "
                         "kernel to go faster.")


def make_evaluator(eval_server_url: str | None, token_env: str, timeout_s: float,
                   trials: int = TRIALS) -> RemoteEvaluator | LocalEvaluator:
    """``trials``: inputs per timed run on this machine (a server decides its own, ``--trials``)."""
    url = eval_server_url or os.environ.get(URL_ENV)
    if url:
        return RemoteEvaluator(url, token=os.environ.get(token_env), timeout_s=timeout_s)
    if cuda_available():
        evaluator = LocalEvaluator(timeout_s=timeout_s, trials=trials)
        evaluator.prepare()  # candidates run in the sandbox: a job that cannot have one fails now, saying why
        return evaluator
    raise RuntimeError(f"no CUDA and no eval_server_url: set eval_kwargs.eval_server_url or {URL_ENV}")


def build_trace_problem(problem: str = "level0/elementwise_add", eval_server_url: str | None = None,
                        eval_server_token_env: str = TOKEN_ENV, timeout_s: float = 300.0, seed: int = 0,
                        kernelbench_root: str | None = None, trials: int = TRIALS, **_: Any) -> dict[str, Any]:
    from opto import trace

    catalog = problems(kernelbench_root)
    if problem not in catalog:
        raise ValueError(f"unknown KernelBench problem {problem!r}; known: {', '.join(sorted(catalog)) or 'none'}")
    entry = catalog[problem]
    reference = entry.source()
    evaluator = make_evaluator(eval_server_url, eval_server_token_env, float(timeout_s), int(trials))
    source = trace.node(initial_candidate(reference), name="kernel_src", trainable=True,
                        description="Python source defining class ModelNew(nn.Module): same constructor and forward "
                                    "as Model, computed with faster custom kernels.")
    query = (f"Write ModelNew, a faster drop-in replacement for this PyTorch Model ({entry.summary()}):\n\n"
             f"{reference}")
    return {
        "param": source,
        "guide": KernelGuide(evaluator, seed=int(seed)),
        "train_dataset": {"inputs": [query], "infos": [{"problem_id": problem, "ref_arch_src": reference}]},
        "optimizer_kwargs": {"objective": "Make ModelNew correct and as fast as possible (score = speedup over "
                                          "PyTorch; 0 if wrong).", "memory_size": 5},
        "metadata": {"benchmark": "kernelbench", "problem": problem, "level": entry.level,
                     "evaluation": "remote" if isinstance(evaluator, RemoteEvaluator) else "local-cuda",
                     "optimizes": "ModelNew source (trainable node 'kernel_src')",
                     "scoring": "0 if not compiled or incorrect, else ref_runtime / runtime"},
        "score_range": [0.0, None],
        "stub_candidates": [
            {"kernel_src": reference.rstrip("\n") + "\n\n\nclass ModelNew(Model):\n    pass\n"},
            {"kernel_src": reference.rstrip("\n") + "\n\n\nclass ModelNew(Model):\n    def forward(self, *args):\n"
                           "        return super().forward(*args)\n"},
        ],
    }
