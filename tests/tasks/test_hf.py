"""hf:* tasks on the synthetic, schema-exact fixtures: loading, splits, gold answers, listing offline."""

from __future__ import annotations

import functools
import json
import socket
from pathlib import Path
from typing import Any

import pytest

from trace_bench._util.errors import ConfigError
from trace_bench.registry.tasks import TaskCatalog
from trace_bench.tasks.hf import available_with
from trace_bench.tasks.hf.catalog import BBEH_SUBTASKS, DATASETS, NOT_CACHED
from trace_bench.tasks.hf.loading import DataUnavailable
from trace_bench.tasks.hf.rows import RowError, row_to_example

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hf"

# task name -> {split: fixture file}; every one of the nine datasets, in its own row schema
FILES: dict[str, dict[str, str]] = {
    "hotpot_qa": {"train": "hotpot_qa_train.jsonl", "validation": "hotpot_qa_validation.jsonl"},
    "bbeh/boolean_expressions": {"boolean_expressions": "bbeh_boolean_expressions.jsonl"},
    "musique": {"train": "musique_train.jsonl", "validation": "musique_validation.jsonl"},
    "gsm8k": {"train": "gsm8k_train.jsonl", "test": "gsm8k_test.jsonl"},
    "arc_challenge": {"train": "arc_challenge_train.jsonl", "test": "arc_challenge_test.jsonl"},
    "qasc": {"train": "qasc_train.jsonl", "validation": "qasc_validation.jsonl", "test": "qasc_test.jsonl"},
    "drop": {"train": "drop_train.jsonl", "validation": "drop_validation.jsonl"},
    "quality": {"train": "quality_train.jsonl", "validation": "quality_validation.jsonl"},
    "qasper": {"train": "qasper_train.jsonl", "validation": "qasper_validation.jsonl"},
}
TEST_SPLIT = {"hotpot_qa": "validation", "bbeh/boolean_expressions": "boolean_expressions",
              "musique": "validation", "gsm8k": "test", "arc_challenge": "test", "qasc": "validation",
              "drop": "validation", "quality": "validation", "qasper": "validation"}
TASK_TYPE = {"hotpot_qa": "hfqa", "bbeh/boolean_expressions": "bbeh", "musique": "alias", "gsm8k": "gsm8k",
             "arc_challenge": "mcqa", "qasc": "mcqa", "drop": "alias", "quality": "mcqa", "qasper": "alias"}


def data_files(name: str) -> dict[str, str]:
    return {split: str(FIXTURES / file) for split, file in FILES[name].items()}


def build(name: str, tmp_path: Path, **eval_kwargs: Any) -> dict[str, Any]:
    kwargs = {"data_files": data_files(name), "num_train": 2, "num_validate": 2, "num_test": 2,
              "cache_dir": str(tmp_path / "hf-cache"), **eval_kwargs}
    return TaskCatalog.create().build(f"hf:{name}", kwargs)


def fixture_rows(file: str) -> list[dict[str, Any]]:
    lines = (FIXTURES / file).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def as_json(dataset: dict[str, list[Any]]) -> list[str]:
    return [json.dumps(x, sort_keys=True) for x in dataset["inputs"]]


@pytest.mark.parametrize("name", list(FILES))
def test_every_dataset_builds_from_local_rows(name: str, tmp_path: Path) -> None:
    problem = build(name, tmp_path)
    meta = problem["metadata"]
    assert meta["source"] == "local files" and meta["task_type"] == TASK_TYPE[name]
    assert meta["sizes"] == {"train": 2, "validate": 2, "test": 2}
    assert meta["splits"]["test"] == TEST_SPLIT[name]
    assert meta["splits"]["validate"] == meta["splits"]["train"]
    train, validate, test = problem["train_dataset"], problem["validate_dataset"], problem["test_dataset"]
    for dataset in (train, validate, test):
        assert all(set(x) == {"question", "context"} and x["question"] for x in dataset["inputs"])
        assert all(info["task_type"] == TASK_TYPE[name] and info["answer"] for info in dataset["infos"])
    assert not set(as_json(train)) & set(as_json(validate)), "one split, disjoint partitions"
    if meta["splits"]["test"] == meta["splits"]["train"]:
        assert not set(as_json(test)) & (set(as_json(train)) | set(as_json(validate)))
    if DATASETS[name.split("/")[0]].context_field:
        assert all(x["context"] for x in train["inputs"])
    assert problem["stub_candidates"] and all(set(c) == {"instruction"} for c in problem["stub_candidates"])


@pytest.mark.parametrize(("file", "entry", "check"), [
    ("hotpot_qa_train.jsonl", "hotpot_qa", lambda i, x: i["answer"] == "Tarn River"
     and "Ostrava Nova: Ostrava Nova is the capital of Valdoria. The Tarn River" in x["context"]),
    ("bbeh_boolean_expressions.jsonl", "bbeh", lambda i, x: i["answer"] == "True" and x["context"] == ""),
    ("musique_train.jsonl", "musique",
     lambda i, x: i["aliases"] == ["valdor", "the valdor", "Valdorian valdor"]
     and "is_supporting" not in x["context"] and "Kestrel Lake: " in x["context"]),
    ("gsm8k_train.jsonl", "gsm8k", lambda i, x: i["number"] == "7"),
    ("arc_challenge_train.jsonl", "arc_challenge", lambda i, x: i["label"] == "B"
     and "(B) light energy" in x["question"] and i["answer"] == "(B) light energy"),
    ("qasc_train.jsonl", "qasc", lambda i, x: i["label"] == "B" and len(i["options"]) == 8
     and x["context"] == "solar panels use sunlight to make electricity"),
    ("drop_train.jsonl", "drop",
     lambda i, x: i["aliases"] == ["2300"] and x["context"].startswith("In 1820")),
    ("quality_train.jsonl", "quality",
     lambda i, x: i["label"] == "B" and i["options"]["B"] == "He had to save lamp oil."),
    ("qasper_train.jsonl", "qasper", lambda i, x: i["aliases"] == ["FooBank"] and "Title:" in x["question"]),
])
def test_gold_extraction_per_dataset(file: str, entry: str, check: Any) -> None:
    question, info = row_to_example(fixture_rows(file)[0], DATASETS[entry])
    assert check(info, question), (info, question)


def test_gold_extraction_edge_cases() -> None:
    gsm8k = fixture_rows("gsm8k_train.jsonl")
    assert row_to_example(gsm8k[3], DATASETS["gsm8k"])[1]["number"] == "1050"  # "#### 1,050"
    arc = fixture_rows("arc_challenge_train.jsonl")[3]  # numeric labels, as some real ARC rows have
    assert row_to_example(arc, DATASETS["arc_challenge"])[1]["label"] == "3"
    quality = fixture_rows("quality_train.jsonl")[2]  # answer 1 is the FIRST option (1-based)
    assert row_to_example(quality, DATASETS["quality"])[1]["label"] == "A"
    drop = fixture_rows("drop_train.jsonl")[3]
    assert row_to_example(drop, DATASETS["drop"])[1]["aliases"] == ["Ruiz", "Brandt"]
    with pytest.raises(RowError, match="'question' field"):
        row_to_example({"answer": "#### 1"}, DATASETS["gsm8k"])


@pytest.mark.parametrize("name", list(FILES))
def test_gold_reply_scores_one_and_wrong_reply_zero(name: str, tmp_path: Path) -> None:
    problem = build(name, tmp_path)
    guide = problem["guide"]
    train = problem["train_dataset"]
    for question, info in zip(train["inputs"], train["infos"], strict=True):
        gold = f"({info['label']})" if info["task_type"] == "mcqa" else info["answer"]
        score, feedback = guide.get_feedback(question, f"Let me think.\nAnswer: {gold}", info)
        assert score == 1.0, feedback
        score, feedback = guide.get_feedback(question, "Answer: zzqx", info)
        assert score == 0.0 and "Incorrect" in feedback


def test_seeded_subsets_are_reproducible_and_differ_by_seed(tmp_path: Path) -> None:
    first, again = build("gsm8k", tmp_path, seed=3), build("gsm8k", tmp_path, seed=3)
    for key in ("train_dataset", "validate_dataset", "test_dataset"):
        assert first[key] == again[key]
    orders = {tuple(as_json(build("gsm8k", tmp_path, seed=s)["train_dataset"])) for s in range(5)}
    assert len(orders) > 1, "the seed must change which rows are drawn"


def test_one_file_serves_every_partition_disjointly(tmp_path: Path) -> None:
    problem = build("gsm8k", tmp_path, data_files=str(FIXTURES / "gsm8k_train.jsonl"))
    parts = [set(as_json(problem[k])) for k in ("train_dataset", "validate_dataset", "test_dataset")]
    assert problem["metadata"]["splits"] == {"train": "train", "validate": "train", "test": "train"}
    assert sum(len(p) for p in parts) == len(set().union(*parts)) == 6


def test_csv_route_and_short_splits(tmp_path: Path) -> None:
    csv = tmp_path / "gsm8k.csv"
    rows = 'question,answer\n"What is 2+2?","2+2=4\n#### 4"\n"What is 3+3?","#### 6"\n'
    csv.write_text(rows, encoding="utf-8")
    problem = build("gsm8k", tmp_path, data_files=str(csv), num_train=1, num_validate=5, num_test=5)
    assert problem["metadata"]["sizes"] == {"train": 1, "validate": 1, "test": 0}
    assert "test_dataset" not in problem


def test_rows_without_gold_are_skipped(tmp_path: Path) -> None:
    problem = build("qasc", tmp_path, test_split="test", num_test=1)  # QASC's test split hides its keys
    assert problem["metadata"]["skipped_without_gold"] == 1 and "test_dataset" not in problem


def test_bbeh_expands_to_its_subtasks() -> None:
    catalog = TaskCatalog.create()
    expanded = catalog.expand("hf:bbeh")
    assert expanded == [f"hf:bbeh/{name}" for name in BBEH_SUBTASKS] and len(expanded) == 23
    assert catalog.expand("hf:gsm8k") == ["hf:gsm8k"]
    assert catalog.get("hf:bbeh/nycc").id == "hf:bbeh/nycc"
    listed = {spec.id for spec in catalog.list(["hf"])}
    assert "hf:bbeh" not in listed and set(expanded) <= listed
    assert len(listed) == 12 + 23 + 8 + 8, "12 plain ids; bbeh, bbeh_eight and bbeh_horizon subtasks"
    with pytest.raises(ConfigError):
        catalog.get("hf:bbeh/not_a_subtask")


def test_offline_listing_says_not_cached(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path))
    specs = {spec.id: spec for spec in TaskCatalog.create().list(["hf"])}
    assert {spec.unavailable_reason() for spec in specs.values()} == {NOT_CACHED}
    (tmp_path / "openai___gsm8k" / "main").mkdir(parents=True)  # what a prepared cache looks like
    assert specs["hf:gsm8k"].unavailable_reason() is None
    assert specs["hf:drop"].unavailable_reason() == NOT_CACHED
    assert available_with(specs["hf:drop"], {"data_files": "rows.jsonl"}) is None
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "0")
    _hub_lookup(monkeypatch, reachable=True)
    assert specs["hf:drop"].unavailable_reason() is None  # online: the hub can be asked at run time


def _hub_lookup(monkeypatch: pytest.MonkeyPatch, *, reachable: bool) -> list[object]:
    """Answer the hub's name lookup without a network: found, or not (what an offline machine says)."""
    from trace_bench.tasks.hf import catalog

    asked: list[object] = []

    def lookup(host: object, *args: object, **kwargs: object) -> list[object]:
        asked.append(host)
        if not reachable:
            raise socket.gaierror(-2, "Name or service not known")
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("192.0.2.1", 443))]

    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    # a fresh per-process cache for this test (the module's own comes back after it)
    monkeypatch.setattr(catalog, "_lookup", functools.lru_cache(maxsize=4)(catalog._lookup.__wrapped__))
    return asked


def test_listing_and_strict_validation_agree_when_the_hub_is_out_of_reach(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Offline without HF_HUB_OFFLINE: list-tasks said hf:hotpot_qa was available, then validate
    --strict failed to load it; both now say it is unavailable (skipped), with the reason."""
    from trace_bench.cli.main import main

    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    asked = _hub_lookup(monkeypatch, reachable=False)
    assert main(["list-tasks", "--bench", "hf", "--all", "--format", "json"]) == 0
    rows = {row["task_id"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows["hf:hotpot_qa"]["status"] == "unavailable"
    assert "the hub huggingface.co cannot be reached from here" in rows["hf:hotpot_qa"]["reason"]
    assert asked == ["huggingface.co"]  # one lookup for the whole listing, no connection
    config = tmp_path / "hq.yaml"
    config.write_text("mode: stub\ntasks: [hf:hotpot_qa]\ntrainers: [NoOpTrainer]\n", encoding="utf-8")
    assert main(["validate", "--config", str(config), "--strict", "--runs-dir", str(tmp_path / "runs")]) == 0
    out = capsys.readouterr().out
    assert "[SKIP] task hf:hotpot_qa: task unavailable: dataset not cached and the hub huggingface.co" in out
    assert "[FAIL]" not in out
    _hub_lookup(monkeypatch, reachable=True)
    assert main(["list-tasks", "--bench", "hf", "--format", "json"]) == 0
    assert "hf:hotpot_qa" in {row["task_id"] for row in json.loads(capsys.readouterr().out)}


def test_cache_names_match_datasets_naming() -> None:
    from datasets.naming import camelcase_to_snakecase

    for entry in DATASETS.values():
        namespace, name = entry.dataset_id.split("/")
        assert entry.cache_name == f"{namespace}___{camelcase_to_snakecase(name)}"


def test_building_offline_without_data_files_fails_fast_and_says_how(monkeypatch: pytest.MonkeyPatch,
                                                                     tmp_path: Path) -> None:
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path))
    attempts: list[object] = []

    def no_network(*args: object, **kwargs: object) -> None:
        attempts.append(args)
        raise OSError("network access in an offline test")

    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    with pytest.raises(DataUnavailable) as error:
        TaskCatalog.create().build("hf:hotpot_qa", {})
    assert not attempts, f"offline must not try the network: {attempts}"
    message = str(error.value)
    assert message.startswith("hf:hotpot_qa: dataset not cached") and "data_files" in message


def test_bad_requests_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(DataUnavailable, match="no entry for split 'test'"):
        build("gsm8k", tmp_path, data_files={"train": str(FIXTURES / "gsm8k_train.jsonl")})
    with pytest.raises(DataUnavailable, match="does not exist"):
        build("gsm8k", tmp_path, data_files=str(tmp_path / "missing.jsonl"))
    with pytest.raises(ValueError, match="num_train must be a non-negative integer"):
        build("gsm8k", tmp_path, num_train=-1)
    from trace_bench.tasks.hf.problem import build_trace_problem

    with pytest.raises(ValueError, match="needs a subtask"):
        build_trace_problem(task_id="hf:bbeh")


def test_stub_build_and_evaluate_in_process(tmp_path: Path) -> None:
    """The agent calls the (stub) LLM at call time; its replies are scored by the guide."""
    from trace_bench.trainers.evaluate import Evaluator

    problem = build("arc_challenge", tmp_path)
    rollouts = Evaluator(problem["param"], problem["guide"]).rollouts(
        problem["validate_dataset"]["inputs"], problem["validate_dataset"]["infos"])
    assert len(rollouts) == 2 and all(r.score in (0.0, 1.0) and r.feedback for r in rollouts)
    assert all(isinstance(r.output.data, str) and r.output.data for r in rollouts)


def test_stub_run_through_the_runner(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A whole stub job on local rows: the problem builds in the job process and is scored."""
    import trace_bench

    # Listing gates jobs on availability; a prepared-cache folder makes hf:gsm8k count as available,
    # while data_files make the job read the fixture rows (the hub is never asked).
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    (tmp_path / "cache" / "openai___gsm8k" / "main").mkdir(parents=True)
    eval_kwargs = {"data_files": data_files("gsm8k"), "num_train": 2, "num_validate": 2, "num_test": 2,
                   "cache_dir": str(tmp_path / "hf-cache")}
    runner = trace_bench.BenchRunner({
        "mode": "stub", "seeds": [1], "tasks": [{"id": "hf:gsm8k", "eval_kwargs": eval_kwargs}],
        "trainers": [{"id": "PrioritySearch", "params_variants": [
            {"ps_steps": 2, "ps_batches": 1, "ps_candidates": 2, "ps_proposals": 2}]}],
    }, runs_dir=str(tmp_path / "runs"))
    outcome = runner.run()
    assert outcome.exit_code == 0
    results = [json.loads(p.read_text()) for p in outcome.run_dir.glob("jobs/*/results.json")]
    assert len(results) == 1 and results[0]["status"] == "ok", results
    assert results[0]["selection_split"] == "validate" and results[0]["score_test"] is not None
    assert results[0]["usage_by_role"]["agent"]["llm_calls"] > 0


def test_dspy_framework_offers_a_native_program_bound_to_the_instruction(tmp_path: Path) -> None:
    pytest.importorskip("dspy")
    from trace_bench.trainers.external.bridge import TextParameter
    from trace_bench.trainers.external.dspy_program import bind_native

    problem = build("hotpot_qa", tmp_path, framework="dspy")
    program = problem["dspy_program"]
    assert problem["metadata"]["framework"] == "dspy"
    assert [name for name, _ in program.named_predictors()] == ["instruction"]
    assert program.instruction.signature.instructions == problem["param"].instruction.data
    examples = program.to_examples(problem["train_dataset"]["inputs"], problem["train_dataset"]["infos"])
    assert set(examples[0].inputs().keys()) == {"context", "question"}
    parameter = TextParameter(index=0, name="instruction", kind="str", description="", original="")
    assert bind_native(program, [parameter]) == [("instruction", parameter)]
    with pytest.raises(ValueError, match="framework must be 'trace' or 'dspy'"):
        build("gsm8k", tmp_path, framework="langchain")


@pytest.mark.slow
def test_dspy_trainer_runs_the_native_program(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pytest.importorskip("dspy")
    import trace_bench

    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    (tmp_path / "cache" / "hotpotqa___hotpot_qa" / "distractor").mkdir(parents=True)
    eval_kwargs = {"framework": "dspy", "data_files": data_files("hotpot_qa"), "num_train": 2,
                   "num_validate": 2, "num_test": 1, "cache_dir": str(tmp_path / "hf-cache")}
    outcome = trace_bench.BenchRunner({
        "mode": "stub", "seeds": [1], "tasks": [{"id": "hf:hotpot_qa", "eval_kwargs": eval_kwargs}],
        "trainers": [{"id": "DSPyTrainer",
                      "params_variants": [{"dspy_optimizer": "COPRO", "breadth": 2, "depth": 1}]}],
    }, runs_dir=str(tmp_path / "runs")).run()
    results = [json.loads(p.read_text()) for p in outcome.run_dir.glob("jobs/*/results.json")]
    assert results[0]["status"] == "ok", results[0]["error"]
    assert results[0]["usage_by_role"]["agent"]["llm_calls"] > 0
