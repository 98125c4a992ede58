"""configs/discovery_arena.yaml and what a stub run of it must show.

Notebook 08 runs exactly this config; ``tests/test_notebooks.py`` checks that notebook's run with
:func:`check_arena_run`, so the suite runs the arena's 15 jobs once, not once per test."""

from __future__ import annotations

import csv
from pathlib import Path

import yaml

from tests.conftest import REPO

ARENA = REPO / "configs" / "discovery_arena.yaml"


def check_arena_run(run: Path) -> None:
    """Every arm ran all its seeds within the one budget, trusted, and the stub improves most jobs."""
    budget = yaml.safe_load(ARENA.read_text(encoding="utf-8"))["budget"]
    with open(run / "results.csv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 15
    per_arm: dict[tuple[str, str], int] = {}
    for row in rows:
        assert row["status"] in ("ok", "budget_exhausted"), row
        assert int(row["llm_calls"]) <= budget["llm_calls"] and float(row["cost_usd"]) <= budget["usd"]
        assert 0 < float(row["pct_of_best_known"]) < 100 and row["score_trust"] == "trusted"
        assert float(row["score_best"]) >= float(row["score_initial"])
        per_arm[(row["trainer"], row["params_label"])] = per_arm.get((row["trainer"], row["params_label"]), 0) + 1
    assert sorted(per_arm.values()) == [3] * 5
    assert sum(float(r["score_best"]) > float(r["score_initial"]) for r in rows) >= 12  # the stub improves
