"""configs/discovery_arena.yaml and what a stub run of it must show.

Notebook 08 runs exactly this config; ``tests/test_notebooks.py`` checks that notebook's run with
:func:`check_arena_run`, so the suite runs the arena's 27 jobs once, not once per test."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import yaml

from tests.conftest import REPO

ARENA = REPO / "configs" / "discovery_arena.yaml"
BASELINES = ("RandomSearch", "OptunaSearch", "SLSQPMultistart")


def check_arena_run(run: Path) -> None:
    """Every arm ran all its seeds within the one budget, trusted; the stub improves most LLM jobs, the
    baselines call no LLM and SLSQP beats every LLM arm of the stub; the table shows the baselines, their
    cost to reach, and the frontier on evaluations puts them beside the LLM arms."""
    budget = yaml.safe_load(ARENA.read_text(encoding="utf-8"))["budget"]
    with open(run / "results.csv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 27
    per_arm: dict[tuple[str, str], int] = {}
    for row in rows:
        assert row["status"] in ("ok", "budget_exhausted"), row
        assert int(row["llm_calls"]) <= budget["llm_calls"] and float(row["cost_usd"]) <= budget["usd"]
        assert int(row["n_evals"]) <= budget["evaluations"], row
        assert 0 < float(row["pct_of_best_known"]) < 100 and row["score_trust"] == "trusted"
        assert float(row["pct_of_alphaevolve"]) > float(row["pct_of_best_known"])  # today's record is higher
        assert float(row["score_best"]) >= float(row["score_initial"])
        # budgets bind: no arm sets its iteration knob, so each spends >= 90 % of its budget or says why
        assert float(row["budget_used"]) >= 0.9 or row["under_spent_reason"], row
        assert (row["under_spent"] == "true") == bool(row["under_spent_reason"])
        per_arm[(row["trainer"], row["params_label"])] = per_arm.get((row["trainer"], row["params_label"]), 0) + 1
        if row["trainer"] in BASELINES:
            assert int(row["llm_calls"]) == 0 and int(row["total_tokens"]) == 0, row
    assert sorted(per_arm.values()) == [3] * 9
    llm = [r for r in rows if r["trainer"] not in BASELINES]
    assert sum(float(r["score_best"]) > float(r["score_initial"]) for r in llm) >= 12  # the stub improves
    slsqp = [float(r["score_best"]) for r in rows if r["trainer"] == "SLSQPMultistart"]
    assert min(slsqp) > max(float(r["score_best"]) for r in llm), "SLSQP from 2 random starts beats the stub"
    table = subprocess.run([sys.executable, "-m", "trace_bench", "table", str(run), "--cost-axis", "evaluations"],
                           capture_output=True, text=True, cwd=REPO, check=True).stdout
    header = next(line for line in table.splitlines() if line.startswith("| task"))
    assert "to 90 %" in header and "to 100 %" in header and "frontier" in header
    slsqp_row = next(line for line in table.splitlines() if "SLSQPMultistart" in line)
    to_90 = next(i for i, name in enumerate(header.split("|")) if name.strip().startswith("to 90 %"))
    assert "3/3 · " in slsqp_row.split("|")[to_90], slsqp_row  # every SLSQP job reached 90 % of the best known
    frontier = next(line for line in table.splitlines() if line.startswith("- discovery:circle_packing_26"))
    assert "[evaluations per job" in frontier and "SLSQPMultistart" in frontier
