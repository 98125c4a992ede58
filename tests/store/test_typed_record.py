"""Typed all the way down: the job's specification holds the config's own frozen blocks, one Spend
record carries what a job spends, a job's error is a JobError its status derives from, and its record
is built once, frozen, from a live handle.  Old runs read as what they were."""

from __future__ import annotations

import json
import typing
from pathlib import Path

import pytest
from pydantic import ValidationError

from tests.conftest import FIXTURES
from tests.records import record_of, spec_of
from trace_bench.config.identity import LLMIdentity
from trace_bench.config.models import BudgetConfig, LLMConfig, parse_config
from trace_bench.matrix.identity import job_id, llm_identity
from trace_bench.store.live_result import LiveResult
from trace_bench.store.models import Attempts, JobError, JobResult, JobSpec, RoleUsage, Spend, StoreError
from trace_bench.store.run_store import RunStore


def test_the_specification_is_typed_to_its_leaves() -> None:
    """Only ``eval_kwargs`` and the trainer's knobs are open mappings; the llm and budget blocks are
    the config's frozen models, and survive the launch arguments' JSON as themselves."""
    open_fields = {name for name, info in JobSpec.model_fields.items()
                   if typing.get_origin(info.annotation) is dict and typing.get_args(info.annotation)[1] is typing.Any}
    assert open_fields == {"eval_kwargs", "params", "trainer_kwargs", "optimizer_kwargs"}
    config = parse_config({"mode": "real", "tasks": ["internal:numeric_param"], "budget": {"llm_calls": 3},
                           "llm": {"model": "m", "roles": {"agent": {"model": "a", "temperature": 0.2}}}})
    spec = spec_of("j", mode="real", llm=config.llm, budget=config.budget, llm_identity=llm_identity(config))
    again = JobSpec.model_validate(json.loads(json.dumps(spec.model_dump(mode="json"))))
    assert again == spec and isinstance(again.llm, LLMConfig) and isinstance(again.budget, BudgetConfig)
    assert (again.budget.llm_calls, again.llm.role("agent").model, again.role_models["judge"]) == (3, "a", "m")
    with pytest.raises(ValidationError):
        again.budget.llm_calls = 4  # type: ignore[misc]


def test_the_llm_identity_hashes_as_the_mapping_it_was() -> None:
    """Job ids hash the identity's JSON, which is the mapping earlier versions built by hand: the
    ids of existing runs do not change."""
    config = parse_config({"mode": "real", "tasks": ["internal:numeric_param"],
                           "llm": {"model": "m", "provider": "openai", "temperature": 0.5,
                                   "roles": {"optimizer": {"model": "o"}}}})
    written = {"mode": "real", "provider": "openai", "model": "m", "temperature": 0.5,
               "roles": {"optimizer": {"model": "o", "provider": None, "temperature": None}}}
    identity = llm_identity(config)
    assert identity.model_dump(mode="json") == written == identity
    kwargs = {"task": "t", "eval_kwargs": {}, "trainer": "T", "trainer_kwargs": {}, "optimizer": None,
              "optimizer_kwargs": {}, "seed": 1}
    assert job_id(**kwargs, llm=identity.model_dump(mode="json")) == job_id(**kwargs, llm=written)
    assert LLMIdentity(mode="stub").model_dump() == {"mode": "stub"}


def test_a_record_is_built_once_and_frozen() -> None:
    live = LiveResult(spec_of("j"), "r")
    live.set(score_best=1.5, n_steps=2)
    with pytest.raises(AttributeError, match="status"):
        live.set(status="failed")  # the status derives from the error
    with pytest.raises(ValidationError):
        live.set(n_steps="many")  # refused where it is set, never when the record is frozen
    record = live.freeze()
    assert (record.status, record.error, record.job_error, record.score_best) == ("ok", "", None, 1.5)
    assert record.spec is live.spec, "the record embeds the specification it was planned with"
    with pytest.raises(ValidationError):
        record.score_best = 2.0  # type: ignore[misc]


def test_the_status_derives_from_the_error_and_the_file_shows_it_as_text(tmp_path: Path) -> None:
    live = LiveResult(spec_of("j"), "r")
    live.fail(JobError(status="infra_error", type="InfraError", message="InfraError: down", traceback="tb",
                       phase="train"))
    record = live.freeze()
    assert (record.status, record.error, record.traceback) == ("infra_error", "InfraError: down", "tb")
    job = RunStore.create(tmp_path, "r").job("j")
    job.write_result(record)
    data = json.loads(job.results_path.read_text())
    assert list(data)[list(data).index("status"):][:4] == ["status", "error", "traceback", "job_error"]
    assert data["job_error"] == {"status": "infra_error", "type": "InfraError", "message": "InfraError: down",
                                 "traceback": "tb", "phase": "train"}
    assert job.read_result() == record and record.columns()["error"] == "InfraError: down"
    data["status"] = "ok"
    job.results_path.write_text(json.dumps(data))
    with pytest.raises(StoreError, match="status ok is not its error's"):
        job.read_result()


def test_errors_of_a_run_written_as_text_read_as_typed_errors() -> None:
    """A run written before errors were typed (JobResult version 4): each error's text is its
    message, its type and phase read from the text where it says them."""
    records = RunStore(FIXTURES / "runs_before_record" / "before-record").read_results()
    errors = {(r.status, r.job_error.type, r.job_error.phase) for r in records.values() if r.job_error is not None}
    assert errors == {("budget_exhausted", "BudgetExhausted", "train"), ("failed", "", ""),
                      ("skipped", "", "plan")}
    assert all(r.job_error is None for r in records.values() if r.status == "ok")
    assert all(r.error == r.job_error.message for r in records.values() if r.job_error is not None)
    version_7 = {key: value for key, value in record_of("j").record().items() if key != "job_error"}
    loaded = JobResult.load({**version_7, "schema_version": 7, "status": "task_error",
                             "error": "task_load_error: ValueError: no data", "traceback": "t"})
    assert loaded.job_error == JobError(status="task_error", type="ValueError", phase="setup", traceback="t",
                                        message="task_load_error: ValueError: no data")


@pytest.mark.parametrize("version", [8, 9])
def test_a_record_of_mains_versions_8_and_9_keeps_its_fields_and_types_its_error(version: int) -> None:
    """Versions 8 and 9 (score_range; pct_of_alphaevolve, best_known_score) wrote the error as text
    too: version 10 reads it as a JobError and keeps the fields those versions added."""
    written = {key: value for key, value in record_of("j").record().items() if key != "job_error"}
    added = {"score_range": [0.0, None], **({"pct_of_alphaevolve": 98.5, "best_known_score": 1.0} if version == 9
                                           else {})}
    loaded = JobResult.load({**written, **added, "schema_version": version, "status": "task_error",
                             "error": "task_load_error: ValueError: no data", "traceback": "tb"})
    assert loaded.schema_version == JobResult.SCHEMA_VERSION == 10
    assert loaded.job_error == JobError(status="task_error", type="ValueError", phase="setup", traceback="tb",
                                        message="task_load_error: ValueError: no data")
    assert loaded.score_range == [0.0, None] and loaded.status == "task_error"
    assert (loaded.pct_of_alphaevolve, loaded.best_known_score) == ((98.5, 1.0) if version == 9 else (None, None))


def test_a_spend_counts_evaluations_only_where_the_budget_does() -> None:
    assert Spend(llm_calls=1) == {"llm_calls": 1, "tokens": 0, "usd": 0.0}
    counted = Spend(llm_calls=1, evaluations=4)
    assert counted == {"llm_calls": 1, "tokens": 0, "usd": 0.0, "evaluations": 4} and counted["evaluations"] == 4
    assert counted.plus(Spend(evaluations=2)).evaluations == 6 and Spend().plus(Spend()).evaluations is None


def test_one_spend_record_reads_like_the_mapping_it_is_written_as(tmp_path: Path) -> None:
    spend = Spend(llm_calls=2, tokens=12, usd=0.75)
    assert spend == {"llm_calls": 2, "tokens": 12, "usd": 0.75} and spend["tokens"] == 12
    assert spend.plus(Spend(llm_calls=1, wall_s=3.0)).model_dump() == {"llm_calls": 3, "tokens": 12, "usd": 0.75,
                                                                       "wall_s": 3.0}
    job = RunStore.create(tmp_path, "r").job("j")
    job.root.mkdir(parents=True)
    (job.root / "attempts.json").write_text(json.dumps({"schema_version": 2, "attempts": 1,
                                                        "carried": {"llm_calls": 2.0, "tokens": 30.0, "usd": 0.5}}))
    ledger = job.read_attempts()
    assert ledger is not None and ledger.carried == Spend(llm_calls=2, tokens=30, usd=0.5)
    assert Attempts(carried=ledger.carried).record()["carried"] == {"llm_calls": 2, "tokens": 30, "usd": 0.5}
    live = LiveResult(spec_of("j"), "r", attempt=2)
    train = RoleUsage(llm_calls=3, total_tokens=40, prompt_tokens=30, completion_tokens=10, cost_usd=0.25)
    live.charge(train, RoleUsage(), ledger.carried, ledger.carried.plus(train.spend()), estimated=False)
    record = live.freeze()
    assert (record.llm_calls, record.total_tokens, record.cost_usd) == (5, 70, 0.75)
    assert (record.carried_llm_calls, record.carried_tokens, record.carried_cost_usd) == (2, 30, 0.5)
    assert record.budget_spent == {"llm_calls": 5, "tokens": 70, "usd": 0.75}
