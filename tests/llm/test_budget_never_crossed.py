"""No budget is ever crossed by the provider's own count, whichever trainer spends it.

One real-mode job per (budget unit, trainer family) against the fake provider, which counts what
it served: the harness's own optimizer calls (OptoPrime in Minibatch), a library through the
gateway (TextGrad), and DSPy (its proposer through the gateway).  Each call reserves its worst case
(prompt bound + ``max_tokens``, their USD) before it is sent, so the job stops at the call that
could cross the limit: the server's calls, tokens and USD stay within it, and the run's charges
equal the server's counts exactly.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.trainers.external_jobs import run_jobs
from trace_bench.llm.fake_server import FakeLLMServer

FAMILIES = {
    "opto": {"id": "MinibatchAlgorithm", "num_steps": 40, "optimizer": "OptoPrime"},
    "textgrad": {"id": "TextGradTrainer", "num_steps": 40},
    "dspy": {"id": "DSPyTrainer", "dspy_optimizer": "COPRO", "breadth": 6, "depth": 6},
}
LIMITS = {"llm_calls": 4, "tokens": 12_000, "usd": 0.012}
PRICE = {"input_per_mtok": 1.0, "output_per_mtok": 1.0}  # one micro-dollar a token


@pytest.mark.parametrize("unit", sorted(LIMITS))
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_providers_count_stays_within_every_limit(family: str, unit: str, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    if family != "opto":
        pytest.importorskip("dspy" if family == "dspy" else "textgrad")
    with FakeLLMServer() as server:
        config = {"mode": "real", "tasks": ["internal:multi_param"], "seeds": [1], "trainers": [FAMILIES[family]],
                  "budget": {unit: LIMITS[unit]},
                  "llm": {"base_url": server.url, "model": "fake-model", "max_retries": 0, "max_tokens": 150,
                          "prices": {"fake-model": PRICE}}}
        [(result, _)] = run_jobs(config, tmp_path, monkeypatch)
        stats = server.stats()
    assert result.status == "budget_exhausted", (result.error, result.traceback)
    served = {"llm_calls": stats["ok"], "tokens": stats["total_tokens"], "usd": stats["total_tokens"] / 1e6}
    assert 0 < served[unit] <= LIMITS[unit]
    # every call was answered with its usage: the run charged exactly what the provider served
    assert (result.llm_calls, result.total_tokens) == (stats["ok"], stats["total_tokens"])
    assert result.cost_usd == pytest.approx(served["usd"]) and not result.tokens_estimated
    assert result.budget_spent[unit] == pytest.approx(served[unit])
