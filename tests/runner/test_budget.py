"""Per-job budgets: trainers stop at the next call, keep best-so-far, and spending survives resume."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from tests.conftest import only_run_dir, run_cli


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
        if field == "llm_calls":
            assert spent <= limit
        else:  # the call that crosses the limit completes; the next one is refused
            assert spent < limit + 2000
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
    assert int(row["llm_calls"]) <= 2, "only the remaining budget is spent"
    final = json.loads((job / "results.json").read_text())
    assert final["budget_spent"]["llm_calls"] <= 6
