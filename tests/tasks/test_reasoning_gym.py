"""reasoning_gym:* tasks: every task builds, the package's verifier scores gold 1 and nonsense 0."""

from __future__ import annotations

from typing import Any

import pytest

from trace_bench.registry.tasks import TaskCatalog
from trace_bench.tasks.reasoning_gym import TASKS
from trace_bench.tasks.reasoning_gym.guide import extract_answer

SMALL = {"num_train": 3, "num_validate": 2, "num_test": 2}


def build(name: str, **eval_kwargs: Any) -> dict[str, Any]:
    return TaskCatalog.create().build(f"reasoning_gym:{name}", {**SMALL, **eval_kwargs})


def gold_reply(entry: dict[str, Any], multiline: bool) -> str:
    if multiline:
        return f"I found the rule.\nAnswer:\n{entry['answer']}"
    return f"Reasoning first.\nAnswer: {entry['answer']}"


def test_listing_has_the_five_required_tasks_and_an_arc_grid_task() -> None:
    ids = {spec.id for spec in TaskCatalog.create().list(["reasoning_gym"])}
    required = {"gsm_symbolic", "word_sorting", "knights_knaves", "zebra_puzzles", "arc_1d"}
    assert {f"reasoning_gym:{name}" for name in required | {"arc_agi"}} == ids


@pytest.mark.parametrize("name", list(TASKS))
def test_task_builds_and_gold_scores_one_wrong_scores_zero(name: str) -> None:
    problem = build(name)
    assert problem["metadata"]["sizes"] == {"train": 3, "validate": 2, "test": 2}
    assert problem["metadata"]["dataset"] == name and "score_answer" in problem["metadata"]["scoring"]
    guide, multiline = problem["guide"], TASKS[name].multiline
    for key in ("train_dataset", "validate_dataset", "test_dataset"):
        for question, entry in zip(problem[key]["inputs"], problem[key]["infos"], strict=True):
            assert question == entry["question"]
            score, feedback = guide.get_feedback(question, gold_reply(entry, multiline), entry)
            assert score == 1.0, feedback
            score, feedback = guide.get_feedback(question, "Answer: no idea", entry)
            assert score == 0.0 and "expected" in feedback and "'no idea'" in feedback
    assert problem["stub_candidates"] and all(set(c) == {"instruction"} for c in problem["stub_candidates"])


@pytest.mark.parametrize("name", ["word_sorting", "arc_1d"])
def test_same_seed_same_items_other_seed_other_items(name: str) -> None:
    first, again, other = build(name, seed=7), build(name, seed=7), build(name, seed=8)
    for key in ("train_dataset", "validate_dataset", "test_dataset"):
        assert first[key]["inputs"] == again[key]["inputs"]
        assert first[key]["infos"] == again[key]["infos"]
    assert first["train_dataset"]["inputs"] != other["train_dataset"]["inputs"]
    keys = ("train_dataset", "validate_dataset", "test_dataset")
    questions = [q for key in keys for q in first[key]["inputs"]]
    assert len(questions) == len(set(questions)), "splits never share a question"


def test_dataset_config_overrides_generator_defaults() -> None:
    problem = build("zebra_puzzles", dataset_config={"num_people": 2, "num_characteristics": 2})
    assert problem["metadata"]["dataset_config"] == {"num_people": 2, "num_characteristics": 2}


def test_partial_credit_is_reported_as_such() -> None:
    problem = build("gsm_symbolic")
    entry = problem["train_dataset"]["infos"][0]
    wrong = str(int(float(entry["answer"])) + 1)
    score, feedback = problem["guide"].get_feedback(entry["question"], f"Answer: {wrong}", entry)
    assert 0.0 <= score < 1.0 and f"'{wrong}'" in feedback


def test_answer_extraction_rules() -> None:
    assert extract_answer("blah <answer> 42 </answer> trailing") == ("42", "the last <answer> tag")
    assert extract_answer("Step 1\nFinal answer: **Paris**\nbye")[0] == "Paris"
    assert extract_answer("first line\nlast line") == ("last line", "the last line (no 'Answer:' line found)")
    assert extract_answer("Answer:\n1 2\n3 4", multiline=True)[0] == "1 2\n3 4"
    assert extract_answer("") == (None, "an empty reply")


def test_bad_sizes_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="num_test must be a non-negative integer"):
        build("word_sorting", num_test="many")
    with pytest.raises(ValueError, match="num_train must be at least 1"):
        build("word_sorting", num_train=0)
