"""Bad configs exit with code 2 and one clear message naming the file, key path and a fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli

BASE = "tasks: [internal:numeric_param]\ntrainers: [PrioritySearch]\n"

CASES = [
    ("unknown_top_key", BASE + "taks: []\n", ["taks", "did you mean 'tasks'?"]),
    ("bad_mode", BASE + "mode: stubb\n", ["mode", "'stub' or 'real'", "stubb"]),
    ("bad_seed_type", BASE + "seeds: [one]\n", ["seeds[0]", "integer"]),
    ("empty_seeds", BASE + "seeds: []\n", ["seeds", "empty"]),
    ("duplicate_seeds", BASE + "seeds: [1, 1]\n", ["seeds", "duplicates"]),
    ("max_workers_zero", BASE + "max_workers: 0\n", ["max_workers", "greater than or equal to 1"]),
    ("bad_resume", BASE + "resume: sometimes\n", ["resume", "'auto', 'failed' or 'none'"]),
    ("llm_typo", BASE + "llm:\n  modle: gpt-4o\n", ["llm.modle", "did you mean 'model'?"]),
    ("inline_api_key", BASE + "llm:\n  api_key: sk-secret-value\n", ["llm.api_key is not allowed", "api_key_env"]),
    ("budget_typo", BASE + "budget:\n  llm_cals: 5\n", ["budget.llm_cals", "did you mean 'llm_calls'?"]),
    ("budget_negative", BASE + "budget:\n  usd: -1\n", ["budget.usd", "greater than 0"]),
    ("task_key_typo", "tasks:\n  - id: internal:numeric_param\n    eval_kwarg: {}\ntrainers: [PrioritySearch]\n",
     ["tasks[0].eval_kwarg", "did you mean 'eval_kwargs'?"]),
    ("unknown_trainer", "tasks: [internal:numeric_param]\ntrainers: [PrioritySerch]\n",
     ["unknown trainer 'PrioritySerch'", "did you mean 'PrioritySearch'?"]),
    ("unknown_task", "tasks: [internal:numeric_parm]\ntrainers: [PrioritySearch]\n",
     ["unknown task 'internal:numeric_parm'", "did you mean 'internal:numeric_param'?"]),
    ("unknown_suite", "tasks: [interal:numeric_param]\ntrainers: [PrioritySearch]\n",
     ["unknown task suite 'interal'", "did you mean 'internal'?"]),
    ("unknown_knob", "tasks: [internal:numeric_param]\ntrainers:\n  - id: PrioritySearch\n    params_variants:\n"
     "      - ps_stepz: 2\n", ["unknown knob 'ps_stepz'", "did you mean 'ps_steps'?"]),
    ("bad_knob_type", "tasks: [internal:numeric_param]\ntrainers:\n  - id: PrioritySearch\n    ps_steps: many\n",
     ["trainers[0]", "ps_steps (num_steps)", "many"]),
    ("top_level_list", "- a\n- b\n", ["top level must be a mapping"]),
    ("yaml_syntax", "tasks: [internal:numeric_param\ntrainers: [PrioritySearch]\n", ["YAML syntax error at line", "column"]),
    ("no_tasks", "trainers: [PrioritySearch]\n", ["no tasks"]),
    ("bad_optimizer", "tasks: [internal:numeric_param]\ntrainers:\n  - id: PrioritySearch\n    optimizer: Adam\n",
     ["unknown optimizer 'Adam'"]),
    ("bad_executor", BASE + "executor: slurm\n", ["executor", "'local' or 'ray'"]),
    ("race_more_seeds_than_listed", BASE + "seeds: [1, 2, 3]\nrace: {max_seeds: 10}\n",
     ["race.max_seeds is 10 but seeds lists 3", "list at least 10 seeds"]),
    ("race_max_jobs_below_first_round", BASE + "seeds: [1, 2, 3, 4]\nrace: {min_seeds: 3, max_jobs: 2}\n",
     ["race.max_jobs is 2 but the race's first round alone runs 3 jobs", "raise race.max_jobs"]),
    ("trainer_without_id", "tasks: [internal:numeric_param]\ntrainers:\n  - params: {}\n", ["trainers[0].id", "missing"]),
]


@pytest.mark.parametrize(("name", "text", "expected"), CASES, ids=[c[0] for c in CASES])
def test_bad_config_exits_2_with_message(tmp_path: Path, name: str, text: str, expected: list[str]) -> None:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    proc = run_cli("validate", "--config", str(path))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    message = proc.stderr
    assert "Traceback" not in message
    assert str(path) in message
    for fragment in expected:
        assert fragment in message, f"{fragment!r} not in {message!r}"


def test_missing_config_file(tmp_path: Path) -> None:
    proc = run_cli("run", "--config", str(tmp_path / "nope.yaml"))
    assert proc.returncode == 2
    assert "config file not found" in proc.stderr


def test_aliases_of_the_original_are_accepted(tmp_path: Path) -> None:
    from trace_bench.config import parse_config

    config = parse_config({
        "runs_root": "out", "n_concurrent": 3, "seed": 7, "job-timeout": 12, "ps_steps": 2, "threads": 2,
        "tasks": ["numeric_param_placeholder", {"key": "internal:code_param", "eval_kwargs": {"a": 1}}],
        "trainers": [{"name": "PrioritySearch", "trainer_kwargs": {"ps_batches": 1}}],
        "llm": {"api_base": "http://localhost:1/v1"},
    })
    assert config.runs_dir == "out" and config.max_workers == 3 and config.seeds == [7]
    assert config.job_timeout == 12
    assert config.trainer_kwargs == {"ps_steps": 2, "threads": 2}
    assert config.tasks[1].id == "internal:code_param" and config.tasks[1].eval_kwargs == {"a": 1}
    assert config.trainers[0].variants() == [{"ps_batches": 1}]
    assert config.llm.base_url == "http://localhost:1/v1"


def test_hyphenated_top_level_knobs_of_the_original_are_accepted() -> None:
    # The original normalised '-' to '_' in the top-level LLM4AD knobs (ps-steps, gepa-iters, ...):
    # its configs with `ps-steps: 2` were refused here as an unknown key.
    from trace_bench.config import parse_config

    config = parse_config({"tasks": ["internal:numeric_param"], "ps-steps": 2, "gepa-train-bs": 4,
                           "num-threads": 1, "trainer_kwargs": {"ps_batches": 1}})
    assert config.trainer_kwargs == {"ps_batches": 1, "ps_steps": 2, "gepa_train_bs": 4, "num_threads": 1}


@pytest.mark.parametrize(("race", "expected"), [
    ({"min_seedz": 3}, "race.min_seedz: unknown key 'min_seedz' (did you mean 'min_seeds'?)"),
    ({"min_seeds": 4, "max_seeds": 3}, "race: min_seeds (4) is larger than max_seeds (3)"),
    ({"min_seeds": 5}, "race.min_seeds is 5 but seeds lists 4: list at least 5 seeds"),
    ({"min_seeds": 1}, "race.min_seeds: Input should be greater than or equal to 2"),
    ({"alpha": 1.5}, "race.alpha: Input should be less than 1"),
    ({"seeds_per_round": 0}, "race.seeds_per_round: Input should be greater than or equal to 1"),
])
def test_race_errors_name_the_key_and_the_fix(race: dict[str, object], expected: str) -> None:
    from trace_bench._util.errors import ConfigError
    from trace_bench.config.models import parse_config

    with pytest.raises(ConfigError) as caught:
        parse_config({"tasks": ["internal:numeric_param"], "seeds": [1, 2, 3, 4], "race": race})
    assert expected in str(caught.value)
