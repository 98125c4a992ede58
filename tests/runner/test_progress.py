"""Console progress: plain lines off a terminal (format fixed), a rich live panel on one."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from tests.records import record_of
from trace_bench.runner.console import ConsoleReporter, last_step
from trace_bench.store.models import JobResult


def _record(job_id: str, status: str = "ok", **extra: object) -> JobResult:
    return record_of(job_id, task="internal:numeric_param", suite="internal",
                     trainer="PrioritySearch", params_label="ps_steps=3", seed=1, mode="stub", status=status,
                     score_initial=-3.0, score_best=0.0, llm_calls=12, total_tokens=1000, cost_usd=0.25,
                     time_seconds=0.5, **extra)


def test_plain_lines_when_not_a_terminal() -> None:
    stream = io.StringIO()
    progress = ConsoleReporter(2, stream=stream)
    progress.started("a", "internal:numeric_param", "PrioritySearch")
    progress.line("run r: 2 jobs")
    progress.finished(_record("a"))
    progress.finished(_record("b", status="failed", error="boom"))
    progress.close()
    assert stream.getvalue().splitlines() == [
        "run r: 2 jobs",
        "[1/2] ok               internal:numeric_param x PrioritySearch (ps_steps=3) seed=1 initial=-3 best=0 "
        "calls=12 0.50s",
        "[2/2] failed           internal:numeric_param x PrioritySearch (ps_steps=3) seed=1 initial=-3 best=0 "
        "calls=12 0.50s error=boom",
    ]
    assert (progress.done, progress.failed, progress.tokens, progress.usd) == (2, 1, 2000, 0.5)


def test_quiet_prints_nothing() -> None:
    stream = io.StringIO()
    progress = ConsoleReporter(1, stream=stream, quiet=True, live=True)
    progress.finished(_record("a"))
    assert stream.getvalue() == "" and progress.done == 1


def test_live_panel_shows_counters_and_running_steps(tmp_path: Path) -> None:
    console_module = pytest.importorskip("rich.console")
    job_dir = tmp_path / "job"
    job_dir.mkdir()
    (job_dir / "events.jsonl").write_text(
        json.dumps({"type": "step", "step": 2, "best_score": -1.5, "llm_calls": 8, "tokens": 700, "usd": 0.1})
        + "\n" + '{"type": "llm_call", "total_tok', encoding="utf-8")
    assert last_step(job_dir)["step"] == 2
    progress = ConsoleReporter(3, stream=io.StringIO(), live=False)
    progress.finished(_record("done"))
    progress.started("running-job", "internal:multi_param", "PrioritySearch", job_dir=job_dir)
    console = console_module.Console(record=True, width=160, file=io.StringIO())
    console.print(progress.render())
    text = console.export_text()
    assert "1/3 jobs done" in text and "running 1" in text and "tokens 1,700" in text
    assert "internal:multi_param x PrioritySearch" in text and "-1.5" in text
    assert "ETA" in text and "stub mode" not in text
    stub = ConsoleReporter(1, stream=io.StringIO(), live=False, stub=True)
    console.print(stub.render())
    assert "USD 0.0000 (stub mode)" in console.export_text(), "a stub run's tokens and USD say whose they are"


def test_live_display_starts_and_closes_on_a_forced_terminal() -> None:
    pytest.importorskip("rich")
    stream = io.StringIO()
    with ConsoleReporter(1, stream=stream, live=True) as progress:
        assert progress._live is not None
        progress.finished(_record("a"))
    assert progress._live is None and "[1/1] ok" in stream.getvalue()


def test_the_live_header_fits_80_columns() -> None:
    console_module = pytest.importorskip("rich.console")
    progress = ConsoleReporter(1200, stream=io.StringIO(), live=False)
    for index in range(3):
        progress.finished(_record(f"j{index}").model_copy(update={"total_tokens": 123_456_789}))
    console = console_module.Console(record=True, width=80, file=io.StringIO())
    console.print(progress.render())
    lines = console.export_text().splitlines()
    assert lines[0].startswith("3/1200 jobs done") and "failed 0" in lines[0]
    assert lines[1].startswith("tokens 370,370,367 · USD 0.7500 · elapsed") and " · ETA " in lines[1]
    assert all(len(line.rstrip()) <= 80 for line in lines[:2])


def test_the_eta_counts_down_between_job_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    """It used to be recomputed as elapsed / jobs done at every refresh, so it grew between two
    job ends (for minutes while the first jobs imported)."""
    from trace_bench.runner import console

    clock = [100.0]
    monkeypatch.setattr(console.time, "monotonic", lambda: clock[0])
    progress = ConsoleReporter(5, stream=io.StringIO(), live=False)
    assert progress.eta_s() is None  # nothing to go by yet
    clock[0] = 110.0
    progress.finished(_record("a"))
    assert progress.eta_s() == 40.0  # 10 s for one job, four to go
    clock[0] = 130.0
    assert progress.eta_s() == 20.0
    clock[0] = 200.0
    assert progress.eta_s() == 0.0


def test_stdout_log_shows_scores_to_six_significant_digits(tmp_path: Path) -> None:
    """What the inspector shows: `[Step 1] score: -0.2528 best: ...`, not 17-digit floats."""
    import re

    from tests.conftest import only_run_dir, run_cli

    config = tmp_path / "c.yaml"
    config.write_text("tasks: [internal:numeric_param]\ntrainers: [{id: MinibatchAlgorithm, num_steps: 3}]\n")
    run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "runs"), "--quiet", check=True)
    (log,) = (only_run_dir(tmp_path / "runs") / "jobs").glob("*/stdout.log")
    numbers = re.findall(r"(?:score|best): (\S+)", log.read_text())
    assert len(numbers) == 6, log.read_text()
    for number in numbers:
        assert len(re.sub(r"[^0-9]", "", number.split("e")[0]).lstrip("0")) <= 6, number


def test_a_budget_stopped_job_reads_as_a_normal_end() -> None:
    """35 of 40 fixed-budget jobs printed ``budget_exhausted ... error=budget exhausted: ...``, as if
    they had failed; spending the budget is how such a job ends."""
    stream = io.StringIO()
    progress = ConsoleReporter(1, stream=stream)
    progress.finished(_record("a", status="budget_exhausted", error="budget exhausted: llm_calls 5 >= 5",
                              budget={"llm_calls": 5, "tokens": None, "usd": 0.5}))
    line = stream.getvalue().strip()
    assert "error=" not in line and line.endswith("calls=12 0.50s (stopped at its budget: llm_calls=5, usd=0.5, "
                                                  "as planned)")
    assert progress.failed == 0


def test_a_job_with_a_test_split_names_the_verdicts_score_beside_the_selection_ones() -> None:
    """Issue 36: the per-job line showed only the selection split's best while the leaderboard ranks on
    the held-out test score of the best state; both are shown, each by the name the leaderboard uses."""
    stream = io.StringIO()
    progress = ConsoleReporter(1, stream=stream)
    progress.finished(_record("a", score_test_best=0.75))
    assert " initial=-3 best=0 test_best=0.75 calls=12 " in stream.getvalue()
