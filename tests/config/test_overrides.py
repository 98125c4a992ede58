"""Command-line overrides of a config, in-process: the forms each flag accepts, how an override
reaches into lists and aliases, errors that name the override, the snapshot header round trip."""

from __future__ import annotations

from pathlib import Path

import pytest

from trace_bench._util.errors import ConfigError
from trace_bench.config.loader import load_config, parse_overridden
from trace_bench.config.models import BudgetConfig, parse_config
from trace_bench.config.overrides import (
    apply_overrides,
    parse_overrides,
    parse_seeds,
    read_snapshot_header,
    snapshot_header,
)

BASE = {"mode": "stub", "seed": 5, "runs_root": "out", "tasks": ["internal:numeric_param"],
        "trainers": [{"id": "PrioritySearch", "params_variants": [{"ps_steps": 1}]}]}


@pytest.mark.parametrize(("text", "seeds"), [
    ("1,2", [1, 2]), ("1, 2, 3", [1, 2, 3]), ("1 2 3", [1, 2, 3]), ("[4, 5]", [4, 5]), ("3", [3]),
    ("1-3", [1, 2, 3]), ("0..2,7", [0, 1, 2, 7]), ("-4", [-4]),
])
def test_seed_forms(text: str, seeds: list[int]) -> None:
    assert parse_seeds(text) == seeds


@pytest.mark.parametrize(("text", "reason"), [
    ("", "no seed given"), ("a,b", "'a' is not a seed"), ("5-1", "must go up"), ("1,1", "given twice"),
])
def test_bad_seeds_name_the_flag_and_show_the_forms(text: str, reason: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_seeds(text)
    message = str(caught.value)
    assert message.startswith(f"--seeds {text}:".rstrip(":")) and reason in message
    assert "--seeds 1,2,3" in message and "--seeds 7 (the one seed 7)" in message


def test_overrides_reach_lists_aliases_and_new_mappings() -> None:
    overrides = parse_overrides([
        ("--seeds", "1,2"), ("--set", "runs_dir=elsewhere"), ("--set", "tasks.0.eval_kwargs.target=2.5"),
        ("--set", "trainers.-1.params_variants.0.ps_steps=2"), ("--budget", "llm_calls=5,usd=0.25"),
        ("--model", "some/model"), ("--mode", "real"), ("--set", "llm.roles.optimizer.temperature=0"),
    ])
    data = apply_overrides(BASE, overrides)
    assert BASE["seed"] == 5 and BASE["tasks"] == ["internal:numeric_param"]  # the document is left alone
    assert "seed" not in data and data["seeds"] == [1, 2]  # the other spelling of the key is replaced
    assert "runs_root" not in data and data["runs_dir"] == "elsewhere"
    assert data["tasks"] == [{"id": "internal:numeric_param", "eval_kwargs": {"target": 2.5}}]
    assert data["trainers"][0]["params_variants"] == [{"ps_steps": 2}]
    assert data["budget"] == {"llm_calls": 5, "usd": 0.25}
    assert data["llm"] == {"model": "some/model", "roles": {"optimizer": {"temperature": 0}}}
    config = parse_config(data)
    assert (config.seeds, config.mode, config.budget.llm_calls, config.runs_dir) == ([1, 2], "real", 5, "elsewhere")


def test_later_override_wins_and_set_takes_seed_forms() -> None:
    config = parse_overridden(BASE, [("--seeds", "1"), ("--set", "seeds=2-4"), ("--set", "mode='stub'")])
    assert config.seeds == [2, 3, 4] and config.mode == "stub"


@pytest.mark.parametrize(("pairs", "expected"), [
    ([("--set", "budget.llm_calls=0")], "--set budget.llm_calls=0: budget.llm_calls: Input should be greater than"),
    ([("--set", "budget.llm_callz=3")], "--set budget.llm_callz=3: budget.llm_callz: unknown key 'llm_callz' "
                                        "(did you mean 'llm_calls'?)"),
    ([("--set", "tasks.3.id=x")], "--set tasks.3.id=x: tasks has 1 entry; index 3 is out of range"),
    ([("--set", "mode.x=1")], "--set mode.x=1: mode is str 'stub', not a mapping"),
    ([("--set", "budget")], "--set budget: expected KEY.PATH=VALUE"),
    ([("--budget", "5")], "--budget 5: expected KEY=VALUE, got '5'"),
    ([("--seeds", "1"), ("--set", "seeds=[1, 1]")], "--set seeds=[1, 1]: seeds: seeds has duplicates"),
])
def test_errors_name_the_override_not_the_file(tmp_path: Path, pairs: list[tuple[str, str]], expected: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("mode: stub\ntasks: [internal:numeric_param]\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path, pairs)
    assert str(caught.value).startswith(expected), str(caught.value)
    assert "c.yaml" not in str(caught.value)


def test_an_error_of_the_file_still_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("mode: stub\nmax_workers: 0\ntasks: [internal:numeric_param]\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"c\.yaml: max_workers: Input should be greater"):
        load_config(path, [("--set", "budget.llm_calls=5")])


def test_snapshot_header_round_trip() -> None:
    pairs = [("--seeds", "1,2"), ("--set", 'llm.model="a: b"')]
    text = snapshot_header(pairs, "configs/x.yaml") + "mode: stub\n"
    assert "#   --seeds 1,2" in text and "from configs/x.yaml" in text
    assert read_snapshot_header(text) == pairs
    assert read_snapshot_header(snapshot_header([], None) + "mode: stub\n") == []


@pytest.mark.parametrize(("value", "hint"), [
    ("3", "write seeds: [3] for the one seed 3, or seeds: [1, 2, 3] for 3 seeds"),
    ('"1, 2, 3"', "write a YAML list: seeds: [1, 2, 3]"),
    ("[1, x]", "e.g. seeds: [1, 2, 3]"),
])
def test_config_seeds_in_another_shape_get_an_example(tmp_path: Path, value: str, hint: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(f"mode: stub\nseeds: {value}\ntasks: [internal:numeric_param]\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert hint in str(caught.value) and str(caught.value).startswith(f"{path}: seeds")


def test_budget_hint_names_every_budget_key() -> None:
    """``--budget``'s hint lists the keys the config's budget block accepts, all of them, in order."""
    with pytest.raises(ConfigError) as caught:
        parse_overrides([("--budget", "")])
    assert f"(keys: {', '.join(BudgetConfig.model_fields)})" in str(caught.value)
