"""``trace-bench run --replay RUN``: a recorded real-mode run re-run offline from its cache, as a new run."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import yaml

from tests.conftest import run_cli
from trace_bench.llm.fake_server import FakeLLMServer

KEY = "sk-replay-test-" + "k" * 24
SCORES = ("status", "score_initial", "score_final", "score_best", "n_steps", "n_evals")


def _rows(run: Path) -> dict[str, dict[str, str]]:
    with open(run / "results.csv", encoding="utf-8") as handle:
        return {row["job_id"]: row for row in csv.DictReader(handle)}


def test_replay_reproduces_a_recorded_run_with_the_provider_gone(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    with FakeLLMServer(api_key=KEY, seed=5) as server:
        config = tmp_path / "record.yaml"
        config.write_text(f"""run_id: recorded
mode: real
tasks: [internal:numeric_param]
trainers:
  - id: PrioritySearch
    params_variants: [{{ps_steps: 2, ps_candidates: 1, ps_proposals: 1}}]
seeds: [1, 2]
llm:
  base_url: {server.url}
  model: fake-model
  api_key_env: FAKE_LLM_KEY
  cache: read_write
  prices: {{fake-model: {{input_per_mtok: 0.5, output_per_mtok: 1.5}}}}
""")
        recorded = run_cli("run", "--config", str(config), "--runs-dir", str(runs), "--quiet",
                           env={"FAKE_LLM_KEY": KEY}, timeout=300)
        calls = server.stats()["requests"]
    assert recorded.returncode == 0, recorded.stderr
    assert calls > 0

    # the server is stopped and no key is given: every answer must come from the record
    replayed = run_cli("run", "--replay", "recorded", "--runs-dir", str(runs), "--quiet",
                       env={"FAKE_LLM_KEY": ""}, timeout=300)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    new = [d for d in runs.iterdir() if d.is_dir() and d.name != "recorded"]
    assert len(new) == 1, "the replay is a new run; the recorded one is untouched"
    original, replay = _rows(runs / "recorded"), _rows(new[0])
    assert set(original) == set(replay)  # same job ids
    for job_id, row in original.items():
        assert {k: row[k] for k in SCORES} == {k: replay[job_id][k] for k in SCORES}, job_id
        assert int(row["llm_calls"]) > 0 and replay[job_id]["cache_hits"] == row["llm_calls"]
        # a replayed answer is charged like the recorded call (budgets and cost axes replay exactly);
        # that nothing reached a provider is shown by the server being gone and no key given
        assert replay[job_id]["llm_calls"] == row["llm_calls"]
        assert replay[job_id]["cost_usd"] == row["cost_usd"] and float(row["cost_usd"]) > 0
    snapshot = yaml.safe_load((new[0] / "meta" / "config.snapshot.yaml").read_text())
    assert snapshot["llm"]["cache"] == "replay"
    assert snapshot["llm"]["cache_path"] == str((runs / "recorded" / "llm_cache.sqlite").resolve())
    assert snapshot["run_id"] is None
    events = [json.loads(line) for path in new[0].glob("jobs/*/events.jsonl")
              for line in path.read_text().splitlines()]
    llm_calls = [e for e in events if e["type"] == "llm_call"]
    assert llm_calls and all(e["cached"] for e in llm_calls), llm_calls[:2]


def test_replay_refuses_runs_it_cannot_replay(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    config = tmp_path / "stub.yaml"
    config.write_text("run_id: stubbed\ntasks: [internal:numeric_param]\ntrainers: [NoOpTrainer]\n")
    run_cli("run", "--config", str(config), "--runs-dir", str(runs), "--quiet", check=True)
    proc = run_cli("run", "--replay", "stubbed", "--runs-dir", str(runs))
    assert proc.returncode == 2 and proc.stderr.startswith("trace-bench: error: --replay: run stubbed ran in stub mode")
    proc = run_cli("run", "--replay", "stubbed", "--config", str(config), "--runs-dir", str(runs))
    assert proc.returncode == 2 and "do not combine it with --config" in proc.stderr
    assert sorted(p.name for p in runs.iterdir()) == ["stubbed"]
