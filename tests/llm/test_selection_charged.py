"""Nothing uncounted moves a score (issue 37, point 2): the harness's scoring of reported states on
the selection split (what picks the best state) is charged to the job's budget and cost, apart in
``selection_*``; only the test split's scoring stays outside the budget (``measure_*``).  A run of the
paper config's LLM-agent task, by the CLI against the fake provider: the provider's own request count
equals what the run's persisted results charge."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import yaml

from tests.conftest import only_run_dir, run_cli
from trace_bench.llm.fake_server import FakeLLMServer

REPO = Path(__file__).resolve().parents[2]
KEY = "sk-selection-" + "k" * 24
TASK = "reasoning_gym:gsm_symbolic"  # its agent answers every rollout with an LLM call: selection costs calls
BUDGET = 9


def paper_arms(url: str) -> dict[str, object]:
    """configs/paper_optoprime_vs_textgrad.yaml's reasoning_gym task with both its arms, one seed,
    in real mode against ``url`` under a budget of :data:`BUDGET` calls."""
    config = yaml.safe_load((REPO / "configs" / "paper_optoprime_vs_textgrad.yaml").read_text(encoding="utf-8"))
    tasks = [task for task in config["tasks"] if task["id"] == TASK]
    assert tasks and len(config["trainers"]) == 2, "the paper config changed: update this test"
    return {**config, "tasks": tasks, "seeds": config["seeds"][:1], "mode": "real", "max_workers": 2,
            "budget": {"llm_calls": BUDGET},
            "llm": {"base_url": url, "model": "fake-model", "api_key_env": "FAKE_LLM_KEY", "max_retries": 0}}


def test_the_provider_count_equals_the_charged_calls_and_the_budget_counts_selection(tmp_path: Path) -> None:
    with FakeLLMServer(api_key=KEY, seed=5) as server:
        (tmp_path / "c.yaml").write_text(yaml.safe_dump(paper_arms(server.url)), encoding="utf-8")
        proc = run_cli("run", "--config", str(tmp_path / "c.yaml"), "--runs-dir", str(tmp_path / "runs"),
                       "--quiet", "--no-preflight", env={"FAKE_LLM_KEY": KEY}, cwd=REPO)
        served = server.stats()["requests"]
    assert proc.returncode == 0, proc.stderr
    run = only_run_dir(tmp_path / "runs")
    with open(run / "results.csv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert sorted(r["optimizer"] for r in rows) == ["OptoPrime", "TextGrad"], rows
    assert served == sum(int(r["llm_calls"]) + int(r["measure_llm_calls"]) for r in rows) > 0
    for row in rows:
        assert row["status"] in ("ok", "budget_exhausted"), row["error"]
        selection = int(row["selection_llm_calls"])
        assert 0 < selection and int(row["llm_calls"]) <= BUDGET, "selection is charged to the budget"
        record = json.loads((run / "jobs" / row["job_id"] / "results.json").read_text(encoding="utf-8"))
        assert record["llm_errors"] == 0 and record["budget_spent"]["llm_calls"] == int(row["llm_calls"])
        optimizer_calls = record["usage_by_role"]["optimizer"]["llm_calls"]  # the trainer's own: never selection
        assert 0 < optimizer_calls and selection <= int(row["llm_calls"]) - optimizer_calls
