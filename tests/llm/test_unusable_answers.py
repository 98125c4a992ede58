"""A provider's answer that the client cannot use is still a call the provider received and bills.

End to end against the fake provider: ``usage`` fields that are no counts are treated as absent
(the answer is used, the call estimated); a 200 without choices or with a truncated body is charged
like a call cut off in flight (its prompt and a completion up to its limit, flagged estimated), for
every attempt, in results.json and in the job's spend journal alike.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import only_run_dir, run_cli
from tests.llm.servers import UnusableServer, preflight_requests
from trace_bench.store.spend import read_spend


def _run(tmp_path: Path, server: UnusableServer, max_tokens: int = 64, calls: int = 3) -> tuple[dict[str, Any], Path, int]:
    """One PrioritySearch job on numeric_param; ``(results.json, job dir, chat completions the
    provider received from the job)``."""
    config = tmp_path / "c.yaml"
    config.write_text(f"""
mode: real
tasks: [internal:numeric_param]
trainers: [{{id: PrioritySearch, ps_steps: 3, ps_batches: 1}}]
seeds: [1]
max_workers: 1
budget: {{llm_calls: {calls}}}
llm: {{base_url: "{server.url}", model: fake-model, max_retries: 2, max_tokens: {max_tokens},
      prices: {{fake-model: {{input_per_mtok: 0.5, output_per_mtok: 1.5}}}}}}
""", encoding="utf-8")
    proc = run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "r"), "--quiet")
    assert "Traceback" not in proc.stderr, proc.stderr
    run = only_run_dir(tmp_path / "r")
    [job] = list((run / "jobs").iterdir())
    stats = server.stats()
    _, preflight_completions = preflight_requests(run)
    completions = sum(stats["max_tokens"].values()) - preflight_completions
    return json.loads((job / "results.json").read_text(encoding="utf-8")), job, completions


def test_usage_that_is_no_count_is_estimated_and_the_answer_used(tmp_path: Path) -> None:
    with UnusableServer("bad_usage") as server:
        result, job, completions = _run(tmp_path, server)
    assert result["status"] == "budget_exhausted", result["error"]
    assert result["llm_calls"] == completions == 3
    assert result["llm_errors"] == 0
    assert result["tokens_estimated"] is True
    assert result["prompt_tokens"] > 0 and result["total_tokens"] >= result["prompt_tokens"]


@pytest.mark.parametrize("kind", ["no_choices", "truncated"])
def test_every_unusable_answer_is_charged_like_a_call_cut_off(tmp_path: Path, kind: str) -> None:
    with UnusableServer(kind) as server:
        result, job, completions = _run(tmp_path, server)
    # the unusable attempts count against the budget too: the first call's three spend it
    assert result["status"] == "budget_exhausted", result["error"]
    assert result["llm_errors"] >= 1 and completions == 3 * result["llm_errors"]  # each call: 3 attempts
    assert result["llm_calls"] == completions
    assert result["llm_retries"] == 2 * result["llm_errors"]
    assert result["tokens_estimated"] is True
    # each attempt: its prompt as sent and a completion up to the request's limit (the 64-token cap)
    assert result["completion_tokens"] == completions * 64 and result["prompt_tokens"] > 0
    journal = read_spend(job / "llm_spend.jsonl")
    assert journal == {"llm_calls": result["llm_calls"], "tokens": result["total_tokens"], "usd": result["cost_usd"]}


@pytest.mark.parametrize("kind", ["no_choices", "truncated"])
def test_a_call_that_succeeds_after_unusable_answers_counts_each_attempt(tmp_path: Path, kind: str) -> None:
    with UnusableServer(kind, every=2) as server:  # every other answer unusable: each call's retry works
        result, job, completions = _run(tmp_path, server, calls=6)
    assert result["status"] == "budget_exhausted", result["error"]
    assert result["llm_calls"] == completions >= 6
    assert result["llm_errors"] == 0 and result["llm_retries"] > 0
    assert result["tokens_estimated"] is True
    journal = read_spend(job / "llm_spend.jsonl")
    assert journal == {"llm_calls": result["llm_calls"], "tokens": result["total_tokens"], "usd": result["cost_usd"]}
