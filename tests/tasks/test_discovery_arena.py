"""configs/discovery_arena.yaml names the arms of the arena; that a stub run of it stays within its
budget for every arm is checked on notebook 08's run of it (tests/test_notebooks.py)."""

from __future__ import annotations

import yaml

from tests.tasks.arena import ARENA


def test_the_arena_config_names_the_arms_of_the_issue() -> None:
    config = yaml.safe_load(ARENA.read_text(encoding="utf-8"))
    assert config["mode"] == "stub" and len(config["seeds"]) == 3
    assert [t["id"] for t in config["tasks"]] == ["discovery:circle_packing_26"]
    arms = [(t["id"], v.get("search") or v.get("sampler")) for t in config["trainers"]
            for v in t.get("params_variants", [{}])]
    assert arms == [("PrioritySearch", None), ("OpenEvolveTrainer", None), ("GEPATrainer", None),
                    ("SkyDiscover", "adaevolve"), ("SkyDiscover", "evox"), ("RandomSearch", None),
                    ("OptunaSearch", "tpe"), ("OptunaSearch", "cmaes"), ("SLSQPMultistart", None)]
    assert {"llm_calls", "usd", "evaluations"} <= set(config["budget"])
