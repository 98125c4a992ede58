"""A failure is never a score: a task whose guide or evaluator raises, or returns a non-finite
score, in any phase, ends the job ``task_error`` with the exception's type and message in
``error`` and its traceback in results.json and stdout.log; it enters no statistic.  A task that
wants such failures scored says so (``score_guide_errors``) and the run records it did.

Before this rule a crashing guide gave the failure score and a job ``ok`` with an empty error."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from tests.conftest import only_run_dir, run_cli
from tests.trainers.external_jobs import curve_rows, events, run_jobs

# The guide crashes on the states a trainer proposes (not on the initial one), on test examples,
# or returns NaN; which one is chosen by eval_kwargs.  A crash on the training split only would be
# hit by the first step; a crash on the test split only, by the harness's last measurement.
TASK = '''
from opto import trace

from trace_bench.tasks.guide import Guide


class Fragile(Guide):
    def __init__(self, mode):
        self.mode = mode

    def get_feedback(self, query, response, reference=None, **kwargs):
        if self.mode == "always" or (self.mode == "proposals" and response != 0.0):
            raise KeyError("missing column 'answer'")
        if self.mode == "test" and reference == "test":
            raise ZeroDivisionError("division by zero in the scorer")
        if self.mode == "nan" and response != 0.0:
            return float("nan"), "nan"
        value = float(response)
        return -abs(value - 3.0), f"The output {value:g} is off by {abs(value - 3.0):g}; increase it."


def build_trace_problem(mode="always", opt_in=False, **eval_kwargs):
    return {"param": trace.node(0.0, name="x", trainable=True), "guide": Fragile(mode),
            "train_dataset": {"inputs": ["q"], "infos": ["train"]},
            "test_dataset": {"inputs": ["q"], "infos": ["test"]},
            "score_range": [None, 0.0], "score_guide_errors": opt_in}
'''


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "tasks"
    folder.mkdir()
    (folder / "fragile.py").write_text(TASK)
    return folder


def _config(mode: str, trainer: str = "MinibatchAlgorithm", **extra: object) -> dict[str, object]:
    return {"tasks": [{"id": "fragile", "eval_kwargs": {"mode": mode, **extra}}],
            "trainers": [{"id": trainer, "num_steps": 3} if trainer == "MinibatchAlgorithm" else {"id": trainer}],
            "seeds": [1]}


@pytest.mark.parametrize(("mode", "message"), [
    ("always", "KeyError: \"missing column 'answer'\""),  # the initial measurement
    ("proposals", "KeyError: \"missing column 'answer'\""),  # the trainer's evaluations
    ("test", "ZeroDivisionError: division by zero in the scorer"),  # the harness's test measurement
    ("nan", "not a finite number: nan"),
])
def test_a_guide_failure_in_any_phase_ends_the_job_as_a_task_error(mode: str, message: str, root: Path,
                                                                     tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    [(result, job)] = run_jobs(_config(mode), tmp_path / "run", monkeypatch, root=root)
    assert result.status == "task_error", (result.status, result.error)
    assert result.error.startswith("task_error: the guide Fragile") and message in result.error
    assert result.traceback.strip(), "the traceback is recorded"
    if mode != "nan":
        assert message.split(":")[0] in result.traceback  # the guide's own exception, with its frames
        assert "get_feedback" in result.traceback
    assert result.score_best is None and result.score_final is None and result.score_test_best is None
    finished = [e for e in events(job) if e["type"] == "job_finished"]
    assert finished and message.split(":")[0] in finished[0]["error"]


def test_a_guide_failure_swallowed_by_the_trainer_still_ends_the_job(root: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A library may catch exceptions from the evaluation callbacks it is given; the job's problem
    keeps the first guide failure, so the job still ends task_error."""
    from trace_bench.trainers.opto_search.minibatch import MinibatchAlgorithm

    original = MinibatchAlgorithm.train

    def swallowing(self: MinibatchAlgorithm) -> None:
        try:
            original(self)
        except Exception:  # noqa: BLE001 - what a careless library does
            pass

    monkeypatch.setattr(MinibatchAlgorithm, "train", swallowing)
    [(result, _)] = run_jobs(_config("proposals"), tmp_path / "run", monkeypatch, root=root)
    assert result.status == "task_error" and "KeyError" in result.error and result.traceback


def test_a_task_that_opts_in_scores_guide_failures_and_the_run_records_it(root: Path, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    [(result, _)] = run_jobs(_config("proposals", opt_in=True), tmp_path / "run", monkeypatch, root=root)
    assert result.status == "ok", (result.error, result.traceback)
    assert result.guide_errors_scored and result.guide_errors_scored > 0
    assert result.score_best == -3.0  # the initial state: the crashing proposals scored as failures
    assert json.loads(result.model_dump_json())["guide_errors_scored"] == result.guide_errors_scored
    [(plain, _)] = run_jobs(_config("never"), tmp_path / "plain", monkeypatch, root=root)
    assert plain.status == "ok" and plain.guide_errors_scored is None  # not opted in: nothing to count


def test_the_cli_run_shows_the_task_error_in_stdout_log_the_table_and_the_summary(root: Path,
                                                                                   tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("tasks:\n  - id: fragile\n    eval_kwargs: {mode: test}\n"
                      "trainers:\n  - id: MinibatchAlgorithm\n    num_steps: 2\nseeds: [1, 2]\n")
    proc = run_cli("run", "--config", str(config), "--root", str(root), "--runs-dir", str(tmp_path / "runs"))
    assert proc.returncode == 1, proc.stdout + proc.stderr  # some job failed
    run = only_run_dir(tmp_path / "runs")
    with open(run / "results.csv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert {r["status"] for r in rows} == {"task_error"}
    saved = json.loads((run / "jobs" / rows[0]["job_id"] / "results.json").read_text())
    assert "ZeroDivisionError" in saved["traceback"] and saved["score_test_best"] is None
    assert all(r["score_best"] == "" and "ZeroDivisionError" in r["error"] for r in rows)
    for row in rows:
        log = (run / "jobs" / row["job_id"] / "stdout.log").read_text()
        assert "Traceback (most recent call last)" in log and "ZeroDivisionError: division by zero" in log
        assert curve_rows(run / "jobs" / row["job_id"])  # what happened before the crash is kept
    with open(run / "leaderboard.csv", encoding="utf-8") as handle:
        [board] = list(csv.DictReader(handle))
    assert board["count"] == "0" and board["failed"] == "2" and board["mean"] == ""
    assert "task_error=2" in proc.stdout
    assert "ZeroDivisionError: division by zero in the scorer" in proc.stdout  # the first failure, per task


def test_a_task_that_cannot_be_built_is_a_task_error_with_its_traceback(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "tasks"
    folder.mkdir()
    (folder / "broken.py").write_text("def build_trace_problem(**kw):\n    return helper()\n\n"
                                      "def helper():\n    raise ValueError('no data here')\n")
    config = {"tasks": ["broken"], "trainers": ["NoOpTrainer"], "seeds": [1]}
    [(result, _)] = run_jobs(config, tmp_path / "run", monkeypatch, root=folder)
    assert result.status == "task_error"
    assert result.error == "task_load_error: ValueError: no data here"
    assert "in helper" in result.traceback and "ValueError: no data here" in result.traceback
    assert "in helper" in capsys.readouterr().err  # what the job prints to its stdout.log
