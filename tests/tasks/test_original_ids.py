"""The task ids of the original Trace-Bench that were missing: listing, building, scoring, running."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from trace_bench.registry.tasks import TaskCatalog
from trace_bench.tasks.hf.catalog import BBEH_EIGHT, BBEH_HORIZON, NOT_CACHED
from trace_bench.tasks.problem import Problem
from trace_bench.trainers.evaluate import Evaluator

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hf"

ORIGINAL_IDS = [
    "trace_examples:opentrace_greeting", "trace_examples:opentrace_train_single_node",
    "internal:multiobjective_bbeh", "internal:multiobjective_gsm8k",
    *(f"hf:bbeh_eight/{name}" for name in BBEH_EIGHT), *(f"hf:bbeh_horizon/{name}" for name in BBEH_HORIZON),
    "hf:aqua_rat", "hf:strategy_qa", "hf:humaneval", "hf:mbpp",
]


def build(task_id: str, **eval_kwargs: Any) -> Problem:
    return Problem.from_mapping(TaskCatalog.create().build(task_id, eval_kwargs), task_id)


def rollouts(problem: Problem, dataset: dict[str, list[Any]] | None = None) -> list[Any]:
    data = dataset or problem.train_dataset
    return Evaluator(problem.param, problem.guide, want_score_dict=True).rollouts(data["inputs"], data["infos"])


def test_all_24_original_ids_are_listed_and_resolve() -> None:
    assert len(ORIGINAL_IDS) == 24
    catalog = TaskCatalog.create()
    listed = {spec.id for spec in catalog.list()}
    assert set(ORIGINAL_IDS) <= listed
    assert [catalog.get(task_id).id for task_id in ORIGINAL_IDS] == ORIGINAL_IDS
    assert catalog.expand("hf:bbeh_eight") == [f"hf:bbeh_eight/{name}" for name in BBEH_EIGHT]
    assert catalog.expand("hf:bbeh_horizon") == [f"hf:bbeh_horizon/{name}" for name in BBEH_HORIZON]


def test_opentrace_examples_build_and_score() -> None:
    greeting = build("trace_examples:opentrace_greeting")
    assert [r.score for r in rollouts(greeting)] == [1.0, 1.0]
    assert [r.output.data for r in rollouts(greeting)] == ["Hola, Juan!", "Hello, Sam!"]
    names = {p.py_name.rstrip("0123456789") for p in greeting.param.parameters() if p.trainable}
    assert {"instruct", "__code"} <= names and len(list(greeting.param.parameters())) == 5
    wrong = greeting.guide.get_feedback("Hola, soy Ana.", "Hello, Ana!", "es")
    assert wrong[0] == 0.0 and "es" in wrong[1]
    single = build("trace_examples:opentrace_train_single_node")
    assert [r.score for r in rollouts(single)] == [-3.0]
    assert single.guide.get_feedback(None, 3, "Correct answer is: 3")[0] == 0.0


def test_boolean_generator_agrees_with_python_and_reads_task_files(tmp_path: Path) -> None:
    from trace_bench.tasks.internal.boolean_data import evaluate, generate, load_examples

    rows = generate(50, seed=3)
    assert rows == generate(50, seed=3) and rows != generate(50, seed=4)
    for row in rows:  # the targets come from our parser; Python's own evaluation must agree
        assert str(eval(row["question"].removesuffix(" is"))) == row["answer"]  # noqa: S307 - test oracle
    with pytest.raises(ValueError):
        evaluate("True and and False is")
    task_file = tmp_path / "task.json"
    task_file.write_text(json.dumps({"examples": [{"input": "not True is", "target": "False"}] * 3}))
    loaded, source = load_examples(2, seed=0, data_file=str(task_file))
    assert loaded == [{"question": "not True is", "answer": "False"}] * 2 and source.startswith("file ")


def test_multiobjective_bbeh_runs_programs_in_the_sandbox() -> None:
    problem = build("internal:multiobjective_bbeh", n_train=4, n_val=2)
    assert problem.objective_config.mode == "weighted" and problem.objective_config.minimize == {"execution_time_s"}
    assert len(problem.train_dataset["inputs"]) == 4 and len(problem.validate_dataset["inputs"]) == 2
    results = rollouts(problem)
    assert all(r.score == 1.0 and set(r.score_dict) == {"accuracy", "execution_time_s"} for r in results)
    question, answer = problem.train_dataset["inputs"][0], problem.train_dataset["infos"][0]
    wrong = "result = 'True'\n" if answer == "False" else "result = 'False'\n"
    assert problem.guide.get_score_dict(question, wrong, answer)["accuracy"] == 0.0
    # os.system only returns -1 when the sandbox refuses the fork; subprocess raises, so the program fails
    spawn = "import os, subprocess\nrc = os.system('true')\nsubprocess.run(['true'])\nresult = str(rc)"
    score, feedback = problem.guide.get_feedback(question, spawn, answer)
    assert score == 0.0 and "EXEC_ERROR" in feedback, "process creation is refused by the sandbox"
    score, feedback = problem.guide.get_feedback(question, "print('no result')", answer)
    assert score == 0.0 and "did not set 'result'" in feedback


def test_multiobjective_bbeh_a_looping_program_times_out_without_hurting_the_job() -> None:
    problem = build("internal:multiobjective_bbeh", n_train=2, n_val=0, timeout_s=1)
    question, answer = problem.train_dataset["inputs"][0], problem.train_dataset["infos"][0]
    score, feedback = problem.guide.get_feedback(question, "while True:\n    pass\n", answer)
    assert score == 0.0 and "timeout" in feedback


def test_multiobjective_gsm8k_counts_the_solver_tokens(tmp_path: Path) -> None:
    from trace_bench.tasks.internal.multiobjective_gsm8k import final_number

    assert [final_number(t) for t in ("so 3 + 4 = 7\n#### 7", "it is 1,050.0 dollars", "none")] == ["7", "1050", None]
    problem = build("internal:multiobjective_gsm8k", n_train=3)
    assert problem.metadata["data_source"].startswith("problems shipped") and len(problem.train_dataset["inputs"]) == 3
    for rollout in rollouts(problem):
        assert set(rollout.score_dict) == {"error", "tokens_in", "tokens_out"}
        assert rollout.score_dict["tokens_in"] > 0 and rollout.score in (0.0, -1.0)
    gold = problem.train_dataset["infos"][0]
    assert problem.guide.get_feedback("q", f"Work...\n#### {final_number(gold)}", gold)[0] == 0.0
    local = build("internal:multiobjective_gsm8k", n_train=2, data_files=str(FIXTURES / "gsm8k_train.jsonl"),
                  cache_dir=str(tmp_path / "cache"))
    assert local.metadata["data_source"] == "local files"
    with pytest.raises(ValueError, match="llm.roles.agent.model"):
        build("internal:multiobjective_gsm8k", model="gpt-4o")


def hf_build(task_id: str, files: dict[str, str], tmp_path: Path, **sizes: int) -> Problem:
    data_files = {split: str(FIXTURES / name) for split, name in files.items()}
    return build(task_id, data_files=data_files, cache_dir=str(tmp_path / "cache"), **sizes)


def test_aqua_rat_options_keep_one_label_and_score(tmp_path: Path) -> None:
    # num_test=0: the test split is neither needed nor loaded (it used to be looked up anyway)
    problem = hf_build("hf:aqua_rat", {"train": "aqua_rat_train.jsonl"}, tmp_path,
                       num_train=2, num_validate=2, num_test=0)
    question, info = problem.train_dataset["inputs"][0], problem.train_dataset["infos"][0]
    assert "(A) " in question["question"] and "A)" not in question["question"].replace("(A)", "")
    assert problem.guide.get_feedback(question, f"Answer: ({info['label']})", info)[0] == 1.0
    other = next(label for label in "ABCDE" if label != info["label"])
    assert problem.guide.get_feedback(question, f"Answer: ({other})", info)[0] == 0.0


def test_strategy_qa_scores_the_first_yes_or_no(tmp_path: Path) -> None:
    problem = hf_build("hf:strategy_qa", {"train": "strategy_qa_train.jsonl"}, tmp_path,
                       num_train=3, num_validate=3, num_test=0)
    for question, info in zip(problem.train_dataset["inputs"], problem.train_dataset["infos"], strict=True):
        assert info["answer"] in ("yes", "no") and info["row_id"].startswith("sq-")
        flipped = "No" if info["answer"] == "yes" else "Yes"
        assert problem.guide.get_feedback(question, f"Maybe not... Answer: {info['answer'].title()}.", info)[0] == 1.0
        assert problem.guide.get_feedback(question, f"Answer: {flipped}", info)[0] == 0.0


def test_humaneval_rows_are_scored_by_their_tests_in_the_sandbox(tmp_path: Path) -> None:
    problem = hf_build("hf:humaneval", {"test": "humaneval_test.jsonl"}, tmp_path, num_train=2, num_validate=2,
                       num_test=2)
    assert problem.metadata["splits"] == {"train": "test", "validate": "test", "test": "test"}
    rows = {json.loads(line)["task_id"]: json.loads(line) for line in (FIXTURES / "humaneval_test.jsonl").open()}
    for task, info in zip(problem.train_dataset["inputs"], problem.train_dataset["infos"], strict=True):
        row = rows[task["task_id"].split("/", 1)[1]]
        assert problem.guide.get_feedback(task, row["prompt"] + row["canonical_solution"], info)[0] == 1.0
        score, feedback = problem.guide.get_feedback(task, row["prompt"] + "    return None\n", info)
        assert score == 0.0 and "test failed" in feedback
    outputs = [r.output.data for r in rollouts(problem)]  # the stub agent's programs start from the prompt
    assert all(out.startswith(task["prompt"]) for out, task in zip(outputs, problem.train_dataset["inputs"],
                                                                     strict=True))


def test_mbpp_asserts_become_a_check_and_validation_comes_from_its_split(tmp_path: Path) -> None:
    files = {"train": "mbpp_train.jsonl", "validation": "mbpp_validation.jsonl", "test": "mbpp_test.jsonl"}
    problem = hf_build("hf:mbpp", files, tmp_path, num_train=3, num_validate=1, num_test=2)
    assert problem.metadata["splits"] == {"train": "train", "validate": "validation", "test": "test"}
    rows = {f"mbpp/{json.loads(line)['task_id']}": json.loads(line) for line in (FIXTURES / "mbpp_train.jsonl").open()}
    for task, info in zip(problem.train_dataset["inputs"], problem.train_dataset["infos"], strict=True):
        row = rows[info["task_id"]]
        assert info["entry_point"] in row["code"] and f"`{info['entry_point']}`" in task["question"]
        assert problem.guide.get_feedback(task, row["code"], info)[0] == 1.0, info["test"]
        renamed = row["code"].replace(f"def {info['entry_point']}(", "def other_name(")
        assert problem.guide.get_feedback(task, renamed, info)[0] == 0.0


def test_bbeh_subsets_read_the_subtask_split(tmp_path: Path) -> None:
    problem = hf_build("hf:bbeh_eight/boolean_expressions",
                       {"boolean_expressions": "bbeh_boolean_expressions.jsonl"}, tmp_path,
                       num_train=2, num_validate=1, num_test=0)
    assert problem.metadata["subtask"] == "boolean_expressions" and problem.metadata["task_type"] == "bbeh"


def test_new_hf_ids_are_unavailable_offline_without_data(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path))
    catalog = TaskCatalog.create()
    for task_id in ("hf:aqua_rat", "hf:strategy_qa", "hf:humaneval", "hf:mbpp", "hf:bbeh_horizon/web_of_lies"):
        assert catalog.get(task_id).unavailable_reason() == NOT_CACHED


def run_config(tmp_path: Path, config: dict[str, Any]) -> tuple[Any, dict[str, dict[str, Any]]]:
    import trace_bench

    outcome = trace_bench.BenchRunner(config, runs_dir=str(tmp_path / "runs")).run()
    records = {json.loads(p.read_text())["task"]: json.loads(p.read_text())
               for p in outcome.run_dir.glob("jobs/*/results.json")}
    return outcome, records


@pytest.mark.slow
def test_a_config_of_original_ids_runs_in_stub_mode(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "empty-cache"))
    strategy = {"data_files": str(FIXTURES / "strategy_qa_train.jsonl"), "num_train": 2, "num_validate": 2,
                "num_test": 2, "cache_dir": str(tmp_path / "cache")}
    outcome, records = run_config(tmp_path, {
        "mode": "stub", "seeds": [1],
        "tasks": ["trace_examples:opentrace_greeting", "example:opentrace_train_single_node",
                  {"id": "internal:multiobjective_bbeh", "eval_kwargs": {"n_train": 3, "n_val": 2}},
                  {"id": "internal:multiobjective_gsm8k", "eval_kwargs": {"n_train": 2, "objective_mode": "pareto"}},
                  {"id": "hf:strategy_qa", "eval_kwargs": strategy}, "hf:aqua_rat"],
        "trainers": [{"id": "PrioritySearch", "params_variants": [{"ps_steps": 2, "ps_candidates": 2}]}],
    })
    statuses = {task: record["status"] for task, record in records.items()}
    assert statuses == {"trace_examples:opentrace_greeting": "ok", "trace_examples:opentrace_train_single_node": "ok",
                        "internal:multiobjective_bbeh": "ok", "internal:multiobjective_gsm8k": "ok",
                        "hf:strategy_qa": "ok", "hf:aqua_rat": "skipped"}
    assert NOT_CACHED in records["hf:aqua_rat"]["error"] and outcome.exit_code == 0
    assert set(records["internal:multiobjective_bbeh"]["score_dict_best"]) == {"accuracy", "execution_time_s"}
    assert records["internal:multiobjective_gsm8k"]["usage_by_role"]["agent"]["llm_calls"] > 0
    assert records["trace_examples:opentrace_train_single_node"]["score_best"] > -3.0


def test_veribench_all_without_data_is_one_skipped_placeholder(monkeypatch: pytest.MonkeyPatch,
                                                               tmp_path: Path) -> None:
    monkeypatch.setenv("TRACE_BENCH_VERIBENCH_ROOT", str(tmp_path / "no-veribench"))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "empty-cache"))
    assert TaskCatalog.create().expand("veribench:all") == ["veribench:smoke_placeholder"]
    outcome, records = run_config(tmp_path, {"mode": "stub", "tasks": ["veribench:all"], "trainers": ["NoOpTrainer"]})
    assert list(records) == ["veribench:smoke_placeholder"]
    assert records["veribench:smoke_placeholder"]["status"] == "skipped" and outcome.exit_code == 0
