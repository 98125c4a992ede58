"""Per-job budgets: trainers stop at the next call, keep best-so-far, and spending survives resume."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import yaml

from tests.conftest import USER_TASKS, only_run_dir, run_cli
from trace_bench.llm.fake_server import FakeLLMServer


def _rows(run: Path) -> list[dict[str, str]]:
    with open(run / "results.csv", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.parametrize(("budget", "field", "limit"), [("llm_calls: 5", "llm_calls", 5), ("tokens: 3000", "total_tokens", 3000)])
def test_budget_stops_trainer(tmp_path: Path, budget: str, field: str, limit: int) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("tasks: [internal:numeric_param, internal:multi_param]\n"
                      "trainers:\n  - id: PrioritySearch\n    ps_steps: 50\nseeds: [1, 2]\n"
                      f"budget:\n  {budget}\nmax_workers: 2\n")
    proc = run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "r"), "--quiet")
    assert proc.returncode == 0, proc.stderr
    run = only_run_dir(tmp_path / "r")
    for row in _rows(run):
        assert row["status"] == "budget_exhausted"
        spent = int(row[field])
        assert spent <= limit  # a stub run's session knows each call's usage before charging it
        assert float(row["score_best"]) >= float(row["score_initial"])
        assert int(row["n_steps"]) < 50
        job = run / "jobs" / row["job_id"]
        events = [json.loads(line) for line in (job / "events.jsonl").read_text().splitlines()]
        assert any(e["type"] == "budget_exhausted" for e in events)
        assert (job / "artifacts" / "best_state.yaml").exists()


def test_budget_spent_survives_resume(tmp_path: Path) -> None:
    """A job whose earlier attempt spent 4 calls gets only the rest of its 6-call budget."""
    config = tmp_path / "c.yaml"
    config.write_text("run_id: budget-run\ntasks: [internal:numeric_param]\n"
                      "trainers:\n  - id: PrioritySearch\n    ps_steps: 50\nbudget:\n  llm_calls: 6\n")
    runs = tmp_path / "r"
    run_cli("run", "--config", str(config), "--runs-dir", str(runs), "--quiet", check=True)
    run = runs / "budget-run"
    job_id = _rows(run)[0]["job_id"]
    job = run / "jobs" / job_id
    # simulate an attempt that was killed after spending 4 calls: results gone, events and journal kept
    results = json.loads((job / "results.json").read_text())
    results["status"] = "failed"
    (job / "results.json").write_text(json.dumps(results))
    lines = [line for line in (job / "events.jsonl").read_text().splitlines() if '"llm_call"' in line][:4]
    (job / "events.jsonl").write_text("\n".join(lines) + "\n")
    journal = [line for line in (job / "llm_spend.jsonl").read_text().splitlines() if json.loads(line)["call"] <= 4]
    (job / "llm_spend.jsonl").write_text("\n".join(journal) + "\n")
    run_cli("run", "--config", str(config), "--runs-dir", str(runs), "--quiet", check=True)
    row = _rows(run)[0]
    ledger = json.loads((job / "attempts.json").read_text())
    assert ledger["attempts"] == 2 and ledger["carried"]["llm_calls"] == 4
    assert int(row["carried_llm_calls"]) == 4
    assert int(row["llm_calls"]) - 4 <= 2, "only the remaining budget is spent"
    final = json.loads((job / "results.json").read_text())
    assert final["budget_spent"]["llm_calls"] == final["llm_calls"] <= 6, "the cost columns include attempt 1"


def _assert_stopped_by(run: Path, resource: str) -> list[dict]:
    """Every job ended budget_exhausted by ``resource``, with its spend and best-so-far state kept."""
    records = []
    for row in _rows(run):
        job = run / "jobs" / row["job_id"]
        record = json.loads((job / "results.json").read_text())
        assert record["status"] == "budget_exhausted", record["error"]
        events = [json.loads(line) for line in (job / "events.jsonl").read_text().splitlines()]
        [stop] = [e for e in events if e["type"] == "budget_exhausted"]
        # the limit reached, or the next call's worst case would cross it
        assert stop["resource"] == resource and stop["spent"] + stop["needed"] >= stop["limit"]
        best = yaml.safe_load((job / "artifacts" / "best_state.yaml").read_text())
        assert best["score"] == record["score_best"] >= record["score_initial"], "the best-so-far state is kept"
        curve = (job / "artifacts" / "curve.csv").read_text().splitlines()
        # initial, the steps, and a last row at the stop with the job's whole trainer-phase spend
        assert len(curve) >= 3 and int(row["n_steps"]) == len(curve) - 3 < 1000
        last = dict(zip(curve[0].split(","), curve[-1].split(","), strict=True))
        assert last["kind"] == "harness_final" and int(last["llm_calls"]) == int(row["llm_calls"])
        records.append({**record, "events": events})
    return records


def test_usd_budget_end_to_end(tmp_path: Path) -> None:
    """Real mode against the fake server, priced at $1000 per million tokens: a $20 budget lasts a
    few calls and is never crossed: the last call is refused because its worst case (its prompt
    bound and its 100-token limit, at that price) could cross it; the spend recorded is the sum of
    the training-phase calls' costs."""
    with FakeLLMServer() as server:
        config = tmp_path / "c.yaml"
        config.write_text(f"""
mode: real
tasks: [internal:numeric_param]
trainers:
  - id: PrioritySearch
    ps_steps: 1000
seeds: [1, 2]
max_workers: 2
budget: {{usd: 20.0}}
llm:
  base_url: {server.url}
  model: fake-model
  max_tokens: 100
  prices: {{fake-model: {{input_per_mtok: 1000, output_per_mtok: 1000}}}}
""")
        proc = run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "r"), "--quiet")
    assert proc.returncode == 0, proc.stderr
    for record in _assert_stopped_by(only_run_dir(tmp_path / "r"), "usd"):
        costs = [e["cost_usd"] for e in record["events"] if e["type"] == "llm_call" and e["phase"] == "train"]
        train_cost = sum(costs)
        assert record["budget_spent"]["usd"] == pytest.approx(train_cost) and 0 < train_cost <= 20.0
        assert "(the next call's worst case) > 20" in record["error"], record["error"]
        assert record["cost_usd"] >= train_cost > 0, "results carry every call's cost, measurements included"


def test_wall_clock_budget_end_to_end(tmp_path: Path) -> None:
    """A guide that sleeps 0.3 s per call and 1000 steps: only the 3 s wall budget can end the job."""
    config = tmp_path / "c.yaml"
    config.write_text("tasks:\n  - id: slow_numeric\n    eval_kwargs: {delay: 0.3}\n"
                      "trainers:\n  - id: PrioritySearch\n    ps_steps: 1000\nbudget: {wall_s: 3}\n")
    proc = run_cli("run", "--config", str(config), "--root", str(USER_TASKS), "--runs-dir", str(tmp_path / "r"),
                   "--quiet")
    assert proc.returncode == 0, proc.stderr
    [record] = _assert_stopped_by(only_run_dir(tmp_path / "r"), "wall_s")
    assert record["budget_spent"]["wall_s"] >= 3


def test_budgets_bind_and_an_arm_that_stops_early_says_why(tmp_path: Path) -> None:
    """Under a budget the iteration knob a config leaves unset is freed, so the arm spends all of it;
    an arm bounded by its own knob (or a baseline that calls no LLM) is marked under_spent with the
    reason in results.csv, leaderboard.csv and `table`."""
    config = tmp_path / "c.yaml"
    config.write_text("tasks: [internal:numeric_param]\nseeds: [1]\nbudget:\n  llm_calls: 6\nmax_workers: 2\n"
                      "trainers:\n  - id: PrioritySearch\n    params_variants: [{}, {ps_steps: 1, ps_candidates: 1}]\n  - NoOpTrainer\n")
    proc = run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "r"), "--quiet")
    assert proc.returncode == 0, proc.stderr
    run = only_run_dir(tmp_path / "r")
    rows = {(r["trainer"], r["params_label"]): r for r in _rows(run)}
    freed = rows[("PrioritySearch", "default")]
    assert freed["status"] == "budget_exhausted" and int(freed["llm_calls"]) == 6
    assert float(freed["budget_used"]) == 1.0 and freed["under_spent"] == "false" and not freed["under_spent_reason"]
    meta = json.loads((run / "jobs" / freed["job_id"] / "job_meta.json").read_text())
    assert meta["trainer_kwargs"]["num_steps"] == 100_000
    bounded = rows[("PrioritySearch", "ps_candidates=1,ps_steps=1")]
    assert bounded["status"] == "ok" and int(bounded["llm_calls"]) < 6
    assert bounded["under_spent"] == "true" and bounded["under_spent_reason"].startswith("knob: ")
    baseline = rows[("NoOpTrainer", "default")]
    assert float(baseline["budget_used"]) == 0.0 and baseline["under_spent_reason"].startswith("knob: ")
    with open(run / "leaderboard.csv", encoding="utf-8") as handle:
        board = {(r["trainer"], r["params_label"]): r for r in csv.DictReader(handle)}
    assert board[("PrioritySearch", "default")]["under_spent"] == "0"
    assert board[("PrioritySearch", "ps_candidates=1,ps_steps=1")]["under_spent"] == "1"
    assert board[("PrioritySearch", "ps_candidates=1,ps_steps=1")]["under_spent_reasons"] == "knob"
    table = run_cli("table", str(run), check=True).stdout
    assert "budget spent" in table and "(1 under: knob)" in table and "| 100% |" in table
