"""configs/discovery_arena.yaml in stub mode: every arm runs all its seeds within the one budget."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO, run_cli

ARENA = REPO / "configs" / "discovery_arena.yaml"


def test_the_arena_config_names_the_arms_of_the_issue() -> None:
    config = yaml.safe_load(ARENA.read_text(encoding="utf-8"))
    assert config["mode"] == "stub" and len(config["seeds"]) == 3
    assert [t["id"] for t in config["tasks"]] == ["discovery:circle_packing_26"]
    arms = [(t["id"], v.get("search")) for t in config["trainers"] for v in t.get("params_variants", [{}])]
    assert arms == [("PrioritySearch", None), ("OpenEvolveTrainer", None), ("GEPATrainer", None),
                    ("SkyDiscover", "adaevolve"), ("SkyDiscover", "evox")]
    assert {"llm_calls", "usd"} <= set(config["budget"])


@pytest.mark.slow
def test_the_arena_runs_in_stub_mode_within_budget_for_every_arm(tmp_path: Path) -> None:
    proc = run_cli("run", "--config", str(ARENA), "--runs-dir", str(tmp_path))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    budget = yaml.safe_load(ARENA.read_text(encoding="utf-8"))["budget"]
    [run] = list(tmp_path.iterdir())
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
