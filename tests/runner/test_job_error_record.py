"""A job's error is data on its record (a JobError: status, type, message, traceback, phase), and
its status is that error's: a task that cannot be built fails in the ``setup`` phase with the
builder's exception type, the message results.csv shows and the builder's traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.trainers.external_jobs import run_jobs


def test_a_task_that_cannot_be_built_records_its_error_as_data(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "tasks"
    folder.mkdir()
    (folder / "broken.py").write_text("def build_trace_problem(**kw):\n    raise KeyError('split')\n")
    config = {"tasks": ["broken"], "trainers": ["NoOpTrainer"], "seeds": [1]}
    [(record, _)] = run_jobs(config, tmp_path / "run", monkeypatch, root=folder)
    error = record.job_error
    assert error is not None and (error.status, error.type, error.phase) == ("task_error", "KeyError", "setup")
    assert record.status == error.status and record.error == error.message == "task_load_error: KeyError: 'split'"
    assert "build_trace_problem" in error.traceback and record.score_best is None
