"""DSPyTrainer: DSPy's optimizers on parameter programs and on a task's own DSPy program."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.trainers.external_jobs import (
    assert_no_leaks,
    assert_ok_with_curve,
    events,
    expand,
    run_jobs,
    run_real_against_fake_server,
)
from trace_bench._util.errors import ConfigError
from trace_bench.registry.specs import missing_packages

COPRO = {"id": "DSPyTrainer", "dspy_optimizer": "COPRO", "breadth": 3, "depth": 2}

NATIVE_TASK = '''
from typing import Any

import dspy
from opto import trace

from trace_bench.llm.current import get_llm
from trace_bench.tasks.guide import Guide


class Contains(Guide):
    def get_feedback(self, query, response, reference=None, **kwargs):
        ok = str(reference).lower() in str(response).lower()
        return float(ok), "correct" if ok else f"the answer must mention {reference}"


@trace.model
class Agent:
    def __init__(self):
        self.instruction = trace.node("Answer the question.", name="instruction", trainable=True)

    def forward(self, question: Any) -> Any:
        return self.ask(self.instruction, question)

    @trace.bundle()
    def ask(self, instruction, question):
        """Ask the job's agent LLM."""
        reply = get_llm("agent")(messages=[{"role": "system", "content": instruction},
                                           {"role": "user", "content": question}])
        return reply.choices[0].message.content


def build_trace_problem(**kwargs):
    questions, answers = ["What is 2 + 2?", "What is 3 + 3?"], ["4", "6"]
    return {
        "param": Agent(), "guide": Contains(),
        "train_dataset": {"inputs": questions, "infos": answers},
        "dspy_program": dspy.Predict("question -> answer"),
        "dspy_examples": lambda inputs, infos: [dspy.Example(question=q, answer=a).with_inputs("question")
                                                for q, a in zip(inputs, infos)],
        "stub_candidates": [{"instruction": "Answer with the number only."}],
    }
'''


def test_copro_on_prompt_and_numeric_tasks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env_before = dict(os.environ)
    config = {"tasks": ["trace_examples:greeting_stub", "internal:numeric_param"], "trainers": [COPRO],
              "seeds": [1, 2]}
    done = run_jobs(config, tmp_path, monkeypatch)
    assert len(done) == 4
    for result, job in done:
        assert_ok_with_curve(result, job)
        assert result.score_best >= result.score_initial
    # the greeting is exact-match text and the stub never proposes the right word, so only the
    # numeric task can improve through instructions
    assert all(r.score_best > r.score_initial for r, _ in done if r.task == "internal:numeric_param")
    assert_no_leaks(env_before)


def test_gepa_by_its_original_alias(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = {"tasks": ["internal:numeric_param"], "seeds": [3],
              "trainers": [{"id": "DSPyTrainer", "dspy_optimizer": "gepa", "max_metric_calls": 12}]}
    [(result, job)] = run_jobs(config, tmp_path, monkeypatch)
    assert_ok_with_curve(result, job)
    assert result.score_best > result.score_initial


def test_optimizer_choices_are_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if missing_packages("optuna"):
        with pytest.raises(ConfigError, match="optuna"):
            expand({"tasks": ["internal:numeric_param"], "trainers": [{"id": "DSPyTrainer"}]})
    with pytest.raises(ConfigError, match="dspy_optimizer"):
        expand({"tasks": ["internal:numeric_param"], "trainers": [{"id": "DSPyTrainer", "dspy_optimizer": "Adam"}]})
    config = {"tasks": ["internal:numeric_param"], "trainers": [{"id": "DSPyTrainer", "dspy_optimizer": "bootstrap"}]}
    [(result, _)] = run_jobs(config, tmp_path, monkeypatch)
    assert result.status == "failed" and "BootstrapFewShot only chooses demonstrations" in result.error


def test_a_tasks_own_dspy_program(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "tasks"
    root.mkdir()
    (root / "dspy_qa.py").write_text(NATIVE_TASK)
    config = {"tasks": ["dspy_qa"], "trainers": [COPRO], "seeds": [1]}
    [(result, job)] = run_jobs(config, tmp_path, monkeypatch, root=root)
    assert_ok_with_curve(result, job)
    assert result.usage_by_role["agent"].llm_calls > 0 and result.usage_by_role["optimizer"].llm_calls > 0
    best = (job / "artifacts" / "final_state.yaml").read_text()
    assert "instruction" in best


def test_real_mode_counts_exactly_what_the_server_returned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result, _, _ = run_real_against_fake_server("internal:numeric_param", COPRO, tmp_path, monkeypatch)
    assert not result.tokens_estimated


def test_a_budget_stop_ends_the_trainer_cleanly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = {"tasks": ["internal:numeric_param"], "trainers": [COPRO], "seeds": [1], "budget": {"llm_calls": 2}}
    [(result, job)] = run_jobs(config, tmp_path, monkeypatch)
    assert result.status == "budget_exhausted", (result.error, result.traceback)
    assert result.llm_calls <= 2 and (job / "artifacts" / "best_state.yaml").is_file()
    assert result.score_best >= result.score_initial


def test_an_unparseable_proposal_is_a_failed_proposal_not_a_failed_job(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """MIPROv2 (the default) against a provider whose answers are in no format DSPy asks for, one in
    two: the job ends ok, each such answer counted, the proposals scored like any other."""
    from trace_bench.llm.fake_server import FakeLLMServer

    with FakeLLMServer(unparseable_rate=0.5, seed=3) as server:
        config = {"mode": "real", "tasks": ["internal:multi_param"], "seeds": [1],
                  "trainers": [{"id": "DSPyTrainer", "num_trials": 2, "num_candidates": 2}],
                  "llm": {"base_url": server.url, "model": "fake-model", "max_retries": 0}}
        [(result, job)] = run_jobs(config, tmp_path, monkeypatch)
        stats = server.stats()
    assert result.status == "ok", (result.error, result.traceback)
    steps = [e for e in events(job) if e["type"] == "step"]
    assert steps and steps[-1]["info"]["unparsed_answers"] > 0
    assert result.llm_calls == stats["ok"] and result.n_steps >= 2


def test_a_task_with_only_code_parameters_is_refused_before_the_run() -> None:
    """``validate`` and ``run`` expand the matrix: DSPyTrainer on a code-only task is a config error
    naming the pair and trainers that fit (the job used to fail 0.9 s in); a task with a kind it
    optimizes (numeric_param: numbers and code) passes."""
    with pytest.raises(ConfigError) as caught:
        expand({"tasks": ["internal:numeric_param", "internal:code_param"],
                "trainers": [{"id": "DSPyTrainer", "dspy_optimizer": "COPRO"}]})
    message = str(caught.value)
    assert "trainers[0] with tasks[1]" in message and "'internal:code_param' has only code parameters" in message
    assert "OpenEvolveTrainer" in message
    assert expand({"tasks": ["internal:numeric_param"], "trainers": [{"id": "DSPyTrainer", "dspy_optimizer": "COPRO"}]})
