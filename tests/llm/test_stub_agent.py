"""The stub as an agent follows a prompt task's instruction well enough that a prompt optimizer can
improve a stub run: it answers in the format the instruction asks for, and knows more of a task's
``stub_answers`` the more advice the instruction gives (never all of them).

Before, the stub agent answered a random word or number whatever the instruction said, so every arm
of hf:gsm8k scored a flat 0 in stub mode."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import REPO
from trace_bench.llm.stub_agent import MAX_COMPETENCE, agent_answer, competence
from trace_bench.testing.trainer_contract import run_trainer

QUESTIONS = {f"What is {a} plus {a + 1}?": str(2 * a + 1) for a in range(200)}


def _accuracy(instruction: str, seed: int = 0) -> float:
    right = sum(agent_answer(instruction, f"Question: {q}\n\nEnd with 'Answer: <your answer>'.", seed=seed,
                             answers=QUESTIONS).endswith(f"Answer: {a}") for q, a in QUESTIONS.items())
    return right / len(QUESTIONS)


def test_advice_in_the_instruction_raises_accuracy_but_never_to_all() -> None:
    plain = "Answer."
    better = "Use the facts of the question and think step by step."
    best = ("Use the facts of the question, think step by step, check the answer, and give only the final "
            "answer, concise.")
    assert competence(plain) < competence(better) < competence(best) == MAX_COMPETENCE
    low, mid, high = _accuracy(plain), _accuracy(better), _accuracy(best)
    assert low < mid < high < 0.95, (low, mid, high)
    assert abs(high - MAX_COMPETENCE) < 0.1 and abs(low - competence(plain)) < 0.1


def test_the_agent_answers_in_the_format_asked() -> None:
    assert agent_answer("Answer the question with Yes or No.", "Question: Is ice cold?", seed=1,
                        answers={}).split("Answer: ")[-1] in ("Yes", "No")
    option = agent_answer("Choose the best option.", "Question: Which?\n(A) one\n(B) two\n(C) three", seed=1,
                          answers={})
    assert option.split("Answer: ")[-1] in ("(A)", "(B)", "(C)")
    assert agent_answer("Finish with '#### <number>'.", "Tom has 3 apples and buys 4.", seed=1,
                        answers={}).startswith("#### ")
    again = agent_answer("Finish with '#### <number>'.", "Tom has 3 apples and buys 4.", seed=1, answers={})
    assert again == agent_answer("Finish with '#### <number>'.", "Tom has 3 apples and buys 4.", seed=1,
                                 answers={}), "one instruction, one answer per question"


def test_a_prompt_optimizer_improves_a_stub_run_of_a_prompt_task(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(REPO)  # data_files are relative to the repository
    data = {"train": "configs/data/gsm8k_synthetic_train.jsonl", "test": "configs/data/gsm8k_synthetic_test.jsonl"}
    outcome = run_trainer("MinibatchAlgorithm", tmp_path, task="hf:gsm8k", params={"num_steps": 8},
                          optimizer="OptoPrime", seed=2,
                          eval_kwargs={"num_train": 3, "num_validate": 2, "num_test": 3, "data_files": data})
    result = outcome.result
    assert result.status == "ok", result.error
    assert result.score_best > result.score_initial, (result.score_initial, result.score_best)
    assert result.score_test_best and result.score_test_best > 0
    history = outcome.job.read_state_history()
    assert history[0].state.parameters[0].value != history[-1].state.parameters[0].value, "the instruction changed"
