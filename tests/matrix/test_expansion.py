"""Matrix expansion: precedence of trainer settings, arm labels, shared knobs, identities."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import USER_TASKS, only_run_dir, run_cli
from trace_bench.config import parse_config
from trace_bench.matrix.expand import expand_matrix
from trace_bench.registry.tasks import TaskCatalog


def _jobs(data: dict) -> list:
    return expand_matrix(parse_config(data), TaskCatalog.create())


def test_precedence_labels_and_shared_knobs() -> None:
    jobs = _jobs({
        "tasks": ["internal:numeric_param"], "ps_candidates": 3,
        "trainer_kwargs": {"optimizer": "OPRO", "optimizer_kwargs": {"memory_size": 1}},
        "trainers": [
            {"id": "PrioritySearch", "optimizer": "TextGrad", "optimizer_kwargs": {"memory_size": 2}, "ps_steps": 2,
             "params_variants": [{}, {"ps_steps": 4, "optimizer_kwargs": {"memory_size": 3}}]},
            {"id": "PrioritySearch", "ps_steps": 5},
            "NoOpTrainer",
        ],
    })
    rows = [(j.trainer, j.params_label, j.optimizer, j.optimizer_kwargs.get("memory_size"),
             j.trainer_kwargs.get("num_steps"), j.trainer_kwargs.get("num_candidates")) for j in jobs]
    assert rows == [
        # beside `id` beats run-wide settings; an entry's optimizer labels its arm
        ("PrioritySearch", "optimizer=TextGrad,ps_steps=2", "TextGrad", 2, 2, 3),
        ("PrioritySearch", 'optimizer=TextGrad,optimizer_kwargs={"memory_size": 3},ps_steps=4', "TextGrad", 3, 4,
         3),  # the variant wins
        ("PrioritySearch", "ps_steps=5", "OPRO", 1, 5, 3),       # knobs beside `id` label the arm
        ("NoOpTrainer", "default", "OPRO", 1, 1, None),          # run-wide ps_* knobs are ignored by NoOp
    ]
    assert len({j.job_id for j in jobs}) == 4


def test_knob_given_for_a_trainer_must_be_valid() -> None:
    from trace_bench._util.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown knob 'ps_candidates' for trainer NoOpTrainer"):
        _jobs({"tasks": ["internal:numeric_param"], "trainers": [{"id": "NoOpTrainer", "ps_candidates": 2}]})


def test_model_from_environment_is_part_of_the_job_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    data = {"mode": "real", "tasks": ["internal:numeric_param"], "trainers": ["NoOpTrainer"]}
    monkeypatch.setenv("TRACE_LITELLM_MODEL", "model-a")
    a = _jobs(data)[0]
    monkeypatch.setenv("TRACE_LITELLM_MODEL", "model-b")
    b = _jobs(data)[0]
    assert a.job_id != b.job_id and b.llm_identity["model"] == "model-b"


def test_fixed_run_id_refuses_a_changed_config(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("run_id: same\ntasks: [internal:numeric_param]\ntrainers: [NoOpTrainer]\n")
    run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "r"), "--quiet", check=True)
    config.write_text("run_id: same\ntasks: [internal:multi_param]\ntrainers: [NoOpTrainer]\nbudget: {llm_calls: 3}\n")
    proc = run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "r"), "--quiet")
    assert proc.returncode == 2 and "different config" in proc.stderr


def test_resume_failed_reports_jobs_that_never_ran(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("run_id: part\ntasks: [internal:numeric_param, internal:multi_param]\ntrainers: [NoOpTrainer]\n")
    run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "r"), "--quiet", check=True)
    run = tmp_path / "r" / "part"
    victim = next((run / "jobs").iterdir())
    (victim / "results.json").unlink()
    proc = run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "r"), "--resume", "failed")
    assert proc.returncode == 1 and "not run:     1" in proc.stdout


def test_resume_remembers_the_task_root(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("run_id: rooted\ntasks: [shared_state, internal:non_trainable]\ntrainers: [NoOpTrainer]\n")
    run_cli("run", "--config", str(config), "--root", str(USER_TASKS), "--runs-dir", str(tmp_path / "r"), "--quiet")
    proc = run_cli("run", "--resume", str(only_run_dir(tmp_path / "r")), "--quiet")
    assert proc.returncode == 1, proc.stderr  # non_trainable fails again, but the root task resolves
    assert "unknown task" not in proc.stderr


def test_fake_llm_accepts_its_own_options() -> None:
    import subprocess
    import sys

    from tests.conftest import REPO

    proc = subprocess.Popen([sys.executable, "-m", "trace_bench", "fake-llm", "--port", "0", "--latency", "0"],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stdout.readline() if proc.stdout else ""
        assert first.startswith("http://127.0.0.1:"), proc.stderr.read() if proc.stderr else ""
    finally:
        proc.kill()
        proc.wait()


def test_listing_into_a_closed_pipe_is_quiet() -> None:
    import subprocess
    import sys

    from tests.conftest import REPO

    proc = subprocess.run(f"{sys.executable} -m trace_bench list-tasks | head -1", shell=True, cwd=REPO,
                          capture_output=True, text=True, timeout=600)
    assert proc.stdout.count("\n") == 1 and "Traceback" not in proc.stderr


def test_a_budget_frees_the_iteration_knob_the_config_left_unset() -> None:
    """ps_steps/num_steps, iterations, max_metric_calls: freed under a budget unless the config set
    them (or, for PrioritySearch, num_epochs, which bounds the same iterations); no budget, no change."""
    trainers = [{"id": "PrioritySearch", "params_variants": [{}, {"ps_steps": 3}, {"num_epochs": 2}]},
                {"id": "UCBSearchAlgorithm"}, "NoOpTrainer"]
    budgeted = _jobs({"tasks": ["internal:numeric_param"], "budget": {"llm_calls": 5}, "trainers": trainers})
    steps = [(j.trainer, j.trainer_kwargs.get("num_steps", j.trainer_kwargs.get("num_search_iterations")))
             for j in budgeted]
    assert steps == [("PrioritySearch", 100_000), ("PrioritySearch", 3), ("PrioritySearch", None),
                     ("UCBSearchAlgorithm", 100_000), ("NoOpTrainer", 1)]
    plain = _jobs({"tasks": ["internal:numeric_param"], "trainers": trainers})
    assert [j.trainer_kwargs.get("num_steps") for j in plain][:3] == [None, 3, None]
    assert plain[3].trainer_kwargs["num_search_iterations"] == 100
    assert budgeted[1].job_id == plain[1].job_id and budgeted[0].job_id != plain[0].job_id
