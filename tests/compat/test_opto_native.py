"""opto's own trainers (OpenTrace 0.2.x has ``opto.trainer``): discovered statically, listed with
their source, run under the harness.  Tested against a small fake ``opto.trainer`` (fake_opto)."""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.compat import fake_opto
from tests.conftest import run_cli

CONFIG = """\
mode: stub
seeds: [1]
tasks:
  - id: internal:multiobjective_bbeh
    eval_kwargs: {n_train: 2, n_val: 1}
trainers:
  - id: ToySearch
    params_variants: [{num_steps: 3, patience: 5}]
  - id: opto:PrioritySearch
    optimizer: opto:OPRO
    params_variants: [{ps_steps: 2}]
  - id: KnobsFirst
    params_variants: [{epsilon: 0.5, num_steps: 1}]
"""


@pytest.fixture(scope="module")
def fake_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fake_opto.install(tmp_path_factory.mktemp("fake-opto"))


@pytest.fixture
def with_fake(fake_root: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The fake in this process: discovery reads it (nothing of opto is imported here)."""
    from trace_bench.registry.trainers import all_trainers
    from trace_bench.trainers.opto_native import discovery

    real = discovery.opto_dirs()
    monkeypatch.setattr(discovery, "opto_dirs", lambda: [fake_root / "opto", *real])
    discovery.clear_caches()
    all_trainers.cache_clear()
    yield fake_root
    discovery.clear_caches()
    all_trainers.cache_clear()


def test_trace_opt_0_1_3_8_has_no_native_trainers() -> None:
    from trace_bench.registry.trainers import list_trainers
    from trace_bench.trainers.opto_native.discovery import (
        has_trainer_package,
        native_optimizers,
        native_trainers,
    )

    assert not has_trainer_package() and native_trainers() == {}
    assert not [info.id for info in list_trainers(include_unavailable=True) if info.source == "opto"]
    assert set(native_optimizers()) == {"OPRO", "OptoPrime", "OptoPrimeMulti", "TextGrad"}


def test_discovery_reads_exports_and_signatures_without_importing_opto(with_fake: Path) -> None:
    from trace_bench.trainers.opto_native.discovery import native_trainers, signature

    before = {name for name in sys.modules if name.split(".")[0] == "opto"}
    found = native_trainers()
    assert set(found) == {"ToySearch", "PrioritySearch", "KnobsFirst"}, "the base class Trainer is not a trainer"
    assert found["ToySearch"].also_exported_as == ("LegacyName",)
    toy = signature(found["ToySearch"])
    assert toy.init_knobs == {"patience": 3}
    assert toy.train_knobs == {"num_steps": 2, "batch_size": 1, "num_threads": None, "verbose": False}
    assert {"validate_dataset", "objective_config", "test_frequency", "log_frequency"} <= toy.accepts
    assert signature(found["PrioritySearch"]).lineage == ("PrioritySearch", "ToySearch", "Trainer")
    assert {name for name in sys.modules if name.split(".")[0] == "opto"} == before


def test_registry_ids_aliases_and_knobs(with_fake: Path) -> None:
    from trace_bench._util.errors import ConfigError
    from trace_bench.config.models import TrainerEntry
    from trace_bench.matrix.expand import resolve_variant
    from trace_bench.registry.trainers import resolve_trainer

    assert resolve_trainer("PrioritySearch").source == "built-in", "our own stays the default for shared names"
    native = resolve_trainer("opto:PrioritySearch")
    assert native.source == "opto" and native.target == "opto.trainer.algorithms:PrioritySearch"
    assert resolve_trainer("toysearch").id == resolve_trainer("LegacyName").id == "opto:ToySearch"
    _, kwargs, optimizer, _, _ = resolve_variant(TrainerEntry(id="ToySearch", optimizer="OPROv2"),
                                                 {"ps_steps": 4, "patience": 1}, {}, "trainers[0]")
    assert kwargs["num_steps"] == 4 and kwargs["patience"] == 1 and optimizer == "OPROv2"
    with pytest.raises(ConfigError, match="unknown knob 'patienc'") as error:
        resolve_variant(TrainerEntry(id="opto:ToySearch"), {"patienc": 1}, {}, "trainers[0]")
    assert "patience" in str(error.value)


def test_list_trainers_shows_the_source(fake_root: Path) -> None:
    rows = json.loads(run_cli("list-trainers", "--format", "json", env={"PYTHONPATH": str(fake_root)},
                              check=True).stdout)
    by_id = {row["trainer_id"]: row for row in rows}
    assert by_id["opto:ToySearch"]["source"] == "opto" and by_id["opto:PrioritySearch"]["source"] == "opto"
    assert by_id["PrioritySearch"]["source"] == "built-in" and "opto:LegacyName" not in by_id
    plain = {row["trainer_id"] for row in json.loads(run_cli("list-trainers", "--format", "json", check=True).stdout)}
    assert not any(trainer_id.startswith("opto:") for trainer_id in plain)


def job_files(run_dir: Path) -> dict[str, dict[str, object]]:
    jobs: dict[str, dict[str, object]] = {}
    for results in run_dir.glob("jobs/*/results.json"):
        record = json.loads(results.read_text())
        job = results.parent
        with (job / "artifacts" / "curve.csv").open(encoding="utf-8") as handle:
            record["curve"] = list(csv.DictReader(handle))
        record["stdout"] = (job / "stdout.log").read_text(encoding="utf-8")
        record["events"] = [json.loads(line) for line in (job / "events.jsonl").read_text().splitlines()]
        jobs[str(record["trainer"])] = record
    return jobs


def test_native_trainers_run_under_the_harness(fake_root: Path, tmp_path: Path) -> None:
    config = tmp_path / "native.yaml"
    config.write_text(CONFIG)
    proc = run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "runs"), "--quiet",
                   env={"PYTHONPATH": str(fake_root)}, check=True)
    assert "jobs:        ok=3" in proc.stdout
    jobs = job_files(next((tmp_path / "runs").iterdir()))
    toy, priority, knobs_first = jobs["opto:ToySearch"], jobs["opto:PrioritySearch"], jobs["opto:KnobsFirst"]
    # the adapter hands opto the validation split and opto's own ObjectiveConfig, keeps opto's test
    # evaluation off (the harness measures) and logs every iteration
    assert ("FAKE-TRAIN validate=True test_frequency=None log_frequency=1 patience=5 num_steps=3 "
            "epsilon=None optimizer=OptoPrime objective=weighted") in str(toy["stdout"])
    assert "patience=3 num_steps=2 epsilon=None optimizer=OPRO" in str(priority["stdout"])
    # agent and optimizer go by keyword, so a class whose own knobs come first still gets them right
    assert "patience=3 num_steps=1 epsilon=0.5 optimizer=OptoPrime" in str(knobs_first["stdout"])
    for record, steps in ((toy, 3), (priority, 2)):
        assert record["status"] == "ok" and record["n_steps"] == steps
        assert record["llm_calls"] == steps, "one metered optimizer call per iteration"
        assert record["n_evals"] == steps, "opto's guide calls count as the trainer's evaluations"
        assert [row["step"] for row in record["curve"]] == [str(i) for i in range(steps + 1)] + [str(steps)]
        assert record["curve"][-1]["kind"] == "final"
        step_events = [e for e in record["events"] if e["type"] == "step"]
        assert [e["info"]["opto_step"] for e in step_events] == list(range(steps))
        assert set(record["score_dict_best"]) == {"accuracy", "execution_time_s"}


@pytest.mark.slow
def test_native_trainers_stop_at_the_budget(fake_root: Path, tmp_path: Path) -> None:
    config = tmp_path / "budget.yaml"
    config.write_text("mode: stub\ntasks: [internal:numeric_param]\nbudget: {llm_calls: 2}\n"
                      "trainers: [{id: opto:ToySearch, params_variants: [{num_steps: 6}]}]\n")
    run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "runs"), "--quiet",
            env={"PYTHONPATH": str(fake_root)})
    record = next(iter(job_files(next((tmp_path / "runs").iterdir())).values()))
    assert record["status"] == "budget_exhausted" and record["budget_spent"]["llm_calls"] == 2
    assert record["n_steps"] == 2 and len(record["curve"]) == 4
    assert record["curve"][-1]["kind"] == "harness_final" and record["curve"][-1]["llm_calls"] == "2"


def test_optimizer_names_ours_and_opto(monkeypatch: pytest.MonkeyPatch) -> None:
    from trace_bench.trainers import optimizers
    from trace_bench.trainers.opto_native import discovery

    assert optimizers.canonical_optimizer("OptoPrimeV2") == "OptoPrime", "the original's spelling, our class"
    assert optimizers.canonical_optimizer("opto:TextGrad") == "opto:TextGrad"
    with pytest.raises(ValueError, match="opto's own: opto:OPRO"):
        optimizers.canonical_optimizer("opto:OPROv2")
    monkeypatch.setattr(discovery, "native_optimizers", lambda: ("OPROv2", "OptoPrimeV2"))
    assert optimizers.canonical_optimizer("opto:OPROv2") == "opto:OPROv2"
    rows = {row["optimizer"]: row for row in optimizers.listed_optimizers()}
    assert rows["OptoPrime"]["source"] == "built-in" and "optoprimev2" in rows["OptoPrime"]["aliases"]
    assert rows["opto:OptoPrimeV2"]["source"] == "opto"
    listed = run_cli("list-trainers", "--optimizers", check=True).stdout.splitlines()
    assert "opto:TextGrad\topto" in listed and "OPRO\tbuilt-in" in listed
