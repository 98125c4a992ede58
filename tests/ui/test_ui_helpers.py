"""The UI's helpers without a browser: readers, discovery, live progress, launcher, plots, secrets."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, run_cli
from tests.records import record_of
from tests.waiting import PATIENCE_S, wait_until
from trace_bench.ui.discovery import job_choices, latest_statuses, list_runs, run_info
from trace_bench.ui.launcher import Launcher, LaunchError, prepare_config
from trace_bench.ui.live import ProgressReader, progress_html
from trace_bench.ui.plots import frontier_html, job_curve_frame, run_curve_frame
from trace_bench.ui.readers import frame_of, json_text, read_csv_rows, read_json, tail_lines

SECRET = "sk-helper-planted-0123456789abcdef"
STOPPABLE = """mode: stub
seeds: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]
tasks: [internal:numeric_param, internal:multi_param]
trainers:
  - id: PrioritySearch
    params_variants: [{ps_steps: 2}]
"""

# gradio is imported in this process by some tests: on the worker of the other modules that import it
pytestmark = pytest.mark.xdist_group("gradio")


def _group_exists(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ui-helpers") / "runs"
    run_cli("run", "--config", str(REPO / "configs" / "m1_matrix_smoke.yaml"), "--runs-dir", str(root), "--quiet",
            check=True)
    return root


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    run = tmp_path / "runs" / "broken"
    (run / "meta").mkdir(parents=True)
    (run / "meta" / "manifest.json").write_text('{"run_id": "broken", "jobs": [', encoding="utf-8")
    (run / "summary.json").write_text("{", encoding="utf-8")
    (run / "results.csv").write_text("job_id,task,status\nabc,t,ok\ntorn,row\n", encoding="utf-8")
    (run / "events.jsonl").write_text('{"type": "run_started", "total_jobs": 2}\n{"type": "job_sta', encoding="utf-8")
    return run


def test_readers_turn_broken_files_into_messages(broken: Path) -> None:
    data, problem = read_json(broken / "meta" / "manifest.json")
    assert data is None and "not valid JSON" in problem
    assert read_json(broken / "missing.json")[1] == "missing.json: not written yet"
    assert json_text(broken / "summary.json").startswith("// summary.json: not valid JSON")
    rows, problem = read_csv_rows(broken / "results.csv")
    assert problem is None and rows == [{"job_id": "abc", "task": "t", "status": "ok"}]
    info = run_info(broken)
    assert info.state == "unreadable" and "not valid JSON" in (info.problem or "")
    assert job_choices(broken) == []


def test_secrets_are_masked_at_the_boundary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    log = tmp_path / "stdout.log"
    log.write_text("".join(f"line {i}\n" for i in range(5000)) + f"key={SECRET}\n", encoding="utf-8")
    tail = tail_lines(log, 3)
    assert SECRET not in tail and tail.splitlines()[-1] == "key=***"
    frame = frame_of([{"error": f"auth failed for {SECRET}", "max_tokens": 5}])
    assert frame.loc[0, "error"] == "auth failed for ***" and frame.loc[0, "max_tokens"] == 5


def test_discovery_lists_runs_and_job_statuses(runs: Path, broken: Path) -> None:
    (infos,) = [list_runs(runs)]
    assert len(infos) == 1 and infos[0].state == "finished" and infos[0].counts == {"ok": 4}
    choices = job_choices(infos[0].run_dir)
    assert len(choices) == 4 and all(" · ok" in label for label, _ in choices)
    events = broken / "events.jsonl"
    events.write_text('{"type": "run_started", "total_jobs": 2}\n{"type": "job_started", "job_id": "a"}\n'
                      '{"type": "run_finished", "interrupted": true}\n', encoding="utf-8")
    assert latest_statuses(broken) == {"a": "interrupted"}


def test_progress_reader_follows_a_growing_run(tmp_path: Path) -> None:
    run = tmp_path / "run"
    job = run / "jobs" / "j1"
    job.mkdir(parents=True)
    events = run / "events.jsonl"
    events.write_text('{"ts": "2026-01-01T00:00:00Z", "type": "run_started", "total_jobs": 2}\n'
                      '{"type": "job_started", "job_id": "j1"}\n{"type": "job_sta', encoding="utf-8")
    (job / "events.jsonl").write_text('{"type": "llm_call", "total_tokens": 100, "cost_usd": 0.5}\n',
                                      encoding="utf-8")
    reader = ProgressReader(run)
    progress = reader.read()
    assert (progress.total, progress.done, progress.running, progress.tokens, progress.usd) == (2, 0, 1, 100, 0.5)
    with open(events, "a", encoding="utf-8") as handle:  # the torn line is completed by the next write
        handle.write('rted", "job_id": "j2"}\n{"type": "job_finished", "job_id": "j1", "status": "failed"}\n')
    record = record_of("j1", run_id="run", task="t", status="failed", total_tokens=150, cost_usd=0.75)
    (job / "results.json").write_text(json.dumps(record.record()), encoding="utf-8")
    progress = reader.read()
    assert (progress.done, progress.running, progress.failed, progress.tokens) == (1, 1, 1, 150)
    with open(events, "a", encoding="utf-8") as handle:
        handle.write('{"type": "job_finished", "job_id": "j2", "status": "ok"}\n{"type": "run_finished"}\n')
    progress = reader.read()
    assert progress.percent == 100 and progress.state == "finished"
    page = progress_html(progress, "done")
    assert 'data-percent="100"' in page and 'data-state="finished"' in page and "2/2 jobs" in page


def test_an_ended_runs_elapsed_time_stops_at_its_end(tmp_path: Path) -> None:
    """The Launch tab's clock kept counting after the run ended (it read the time now)."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "events.jsonl").write_text(
        '{"ts": "2026-01-01T00:00:00Z", "type": "run_started", "total_jobs": 0}\n'
        '{"ts": "2026-01-01T00:01:30Z", "type": "run_finished"}\n', encoding="utf-8")
    progress = ProgressReader(run).read()
    assert progress.state == "finished" and progress.elapsed_s == 90.0
    assert "elapsed 1:30" in progress_html(progress)


def test_prepare_config_validates_and_applies_the_mode() -> None:
    text, key_env = prepare_config((REPO / "configs" / "smoke.yaml").read_text(), "real")
    assert "mode: real" in text and key_env == "OPENAI_API_KEY"
    import yaml

    run_id = yaml.safe_load(text)["run_id"]  # the launcher knows the run's directory before it exists
    assert run_id and yaml.safe_load(prepare_config(text, None)[0])["run_id"] == run_id
    _, key_env = prepare_config("tasks: [internal:numeric_param]\ntrainers: [NoOpTrainer]\n"
                                "llm: {api_key_env: MY_KEY}\n", None)
    assert key_env == "MY_KEY"
    for bad, message in (("", "empty"), ("tasks: [", "not valid YAML"), ("mode: stub\n", "no tasks"),
                         ("tasks: [a]\ntrainers: [b]\nllm: {api_key: x}\n", "not allowed")):
        with pytest.raises(LaunchError, match=message):
            prepare_config(bad, None)


def test_launcher_passes_the_key_only_to_the_child_and_stop_leaves_a_resumable_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    launcher = Launcher(tmp_path / "runs")
    launch = launcher.start(STOPPABLE, max_workers=1, api_key=SECRET)
    assert launch.run_dir.parent == (tmp_path / "runs").resolve()  # named up front, not parsed from output
    wait_until(lambda: launch.resolve_run_dir() is not None
               and len(list(launch.run_dir.glob("jobs/*/results.json"))) >= 2,
               what="two finished jobs of the launched run", process=launch.process)
    assert launcher.for_run(launch.run_dir) is launch
    launcher.stop(launch)
    launch.process.wait(PATIENCE_S)
    assert launcher.describe(launch).startswith("stopped")
    # the whole process group is gone (zombies reaped)
    wait_until(lambda: not _group_exists(launch.process.pid), what="the launch's process group to exit")
    progress = ProgressReader(launch.run_dir).read()
    assert progress.state == "interrupted" and 2 <= progress.done < 32
    assert progress.stub and "stub mode: the tokens are the stub&#x27;s answers and USD is 0" in progress_html(progress)
    env = json.loads((launch.run_dir / "meta" / "env.json").read_text())
    assert env["env"]["OPENAI_API_KEY"] == "***"  # the child had the key, and masked it
    for path in launch.run_dir.parent.rglob("*"):
        assert not path.is_file() or SECRET.encode() not in path.read_bytes(), path
    with pytest.raises(LaunchError, match="no meta/config.snapshot.yaml"):
        launcher.resume(tmp_path)


def test_curve_frames_per_job_and_per_trainer(runs: Path) -> None:
    run = list_runs(runs)[0].run_dir
    per_trainer = run_curve_frame(run, "llm_calls", "trainer")
    assert list(per_trainer.columns) == ["x", "best_score", "series", "low", "high", "task"]
    assert per_trainer["x"].dtype == float
    # one series per arm, named by the arm's one label (the report's too); each task has its own chart
    assert {s.split(" [")[0] for s in per_trainer["series"]} == {"PrioritySearch", "NoOpTrainer"}
    per_job = run_curve_frame(run, "tokens", "job")
    assert per_job["series"].nunique() == 4
    job_id = job_choices(run)[0][1]
    frame = job_curve_frame(run, job_id, "step")
    assert set(frame["series"]) <= {"best score", "score"} and not frame.empty
    assert run_curve_frame(run, "llm_calls", "job", job_ids=[]).empty


def test_browse_draws_one_panel_per_task_and_says_why_a_stub_run_has_no_usd_curve(runs: Path) -> None:
    """Tasks score on scales of their own: each gets its panel (one axis flattened all but the
    widest); a stub run's USD axis is all zero, and the chart says so instead of drawing nothing."""
    pytest.importorskip("plotly")
    from trace_bench.ui.tabs.browse import curve_chart

    run = list_runs(runs)[0].run_dir
    frame = run_curve_frame(run, "llm_calls", "trainer")
    tasks = sorted(frame["task"].unique())
    assert len(tasks) == 2
    figure = curve_chart(frame, "llm_calls", "mean per trainer")
    titles = [a.text for a in figure.layout.annotations]
    assert len(titles) == 2 and all(any(t.startswith(f"{task}: best score so far") for t in titles) for task in tasks)
    assert {t.xaxis for t in figure.data} == {"x", "x2"}, "each task on its own axes"
    usd = curve_chart(run_curve_frame(run, "usd", "trainer"), "usd", "mean per trainer")
    (note,) = usd.layout.annotations
    assert "No USD curve" in note.text and "stub mode" in note.text and usd.layout.meta["series"] == 0


def test_frontier_html_draws_each_task_as_the_report_does(runs: Path, broken: Path) -> None:
    pytest.importorskip("scipy")
    import re

    from trace_bench.analysis import load_runs
    from trace_bench.analysis.frontier import frontier_table

    run = list_runs(runs)[0].run_dir
    page = frontier_html(run)
    frame = frontier_table(load_runs([run]).jobs)
    charts = re.findall(r'data-series="(\d+)" data-frontier="(\d+)"', page)
    expected = [(str(len(g)), str(int(g["on_frontier"].sum()))) for _, g in frame.groupby("task", sort=True)]
    assert charts == expected and len(charts) == 2, "one chart per task, every arm drawn"
    assert "internal:numeric_param [tokens per job" in page
    assert "no frontier" in frontier_html(broken) and "<svg" not in frontier_html(broken)


def test_chart_is_the_report_chart_with_one_entry_per_series() -> None:
    import pandas as pd

    from trace_bench.analysis.chart import step_chart
    from trace_bench.ui.chart import line_chart

    frame = pd.DataFrame({"x": [0, 4, 8, 0, 4], "best_score": [-3, -1, 0, -2, float("nan")],
                          "series": ["a <b>", "a <b>", "a <b>", "c", "c"]})
    chart = line_chart(frame, title="t", x_label="LLM calls", y_label="best")
    assert chart.count("<svg") == 1 and 'data-series="2"' in chart
    assert "a &lt;b&gt;" in chart and "<b>" not in chart and "<script" not in chart
    assert 'data-series="0"' in line_chart(frame.iloc[:0], title="t", x_label="x", y_label="y")
    assert step_chart.__module__ == "trace_bench.analysis.chart"  # one definition for the UI and report.html


def test_app_builds_with_no_secret_in_its_config(runs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("gradio")
    from trace_bench.ui import build_app

    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    app = build_app(runs)
    config = json.dumps(app.config, default=str)
    assert SECRET not in config
    key_box = next(c for c in app.config["components"] if c.get("props", {}).get("elem_id") == "tb-api-key")
    assert key_box["props"]["value"] == "" and key_box["props"]["type"] == "password"
    assert {"Launch", "Browse", "Compare", "Job inspector"} <= {
        c["props"].get("label") for c in app.config["components"] if c.get("type") == "tabitem"}


def test_views_of_broken_runs_are_messages(broken: Path) -> None:
    from trace_bench.ui.tabs.browse import summary_markdown
    from trace_bench.ui.tabs.compare import compare_table
    from trace_bench.ui.tabs.inspector import job_view

    assert "not valid JSON" in summary_markdown(broken)
    view = job_view(broken, "nope", "step")
    assert "has not started" in view[0] and "not written yet" in view[1]
    assert compare_table(str(broken), str(broken))[0] == "Pick two different runs."
    message, rows, _ = compare_table(str(broken), str(broken.parent / "other"))
    assert message.startswith("**Not comparable:**") and rows == []


def test_launch_ui_without_gradio_exits_2(monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    from trace_bench.ui import launch_ui

    monkeypatch.setitem(sys.modules, "gradio", None)
    assert launch_ui("runs") == 2
    # the command that works here: this checkout's make target (its .venv has no pip)
    assert "the UI needs gradio (run `make ui`" in capsys.readouterr().err


def test_compare_two_arms_overlay_runs_and_the_verdict_panel(runs: Path) -> None:
    """The Compare tab's other views and the Browse tab's verdict panel, on a stub run."""
    pytest.importorskip("rliable")
    from trace_bench.ui.compare_views import arm_choices, compare_arms_table, overlay
    from trace_bench.ui.tabs.browse import summary_markdown
    from trace_bench.ui.verdict import verdict_html

    run = list_runs(runs)[0].run_dir
    arms = arm_choices(str(run))
    assert [arm.split(" [")[0] for arm in arms] == ["NoOpTrainer", "PrioritySearch"]
    message, rows, text = compare_arms_table(str(run), arms[1], arms[0])
    assert rows and {"task", "p_holm", "significant", "no_variance"} <= set(rows[0])
    assert "as the leaderboard ranks" in message and text.startswith(f"A = {arms[1]}   B = {arms[0]}")
    assert compare_arms_table(str(run), arms[0], arms[0])[0] == "Pick two different arms."
    assert compare_arms_table(str(run), arms[0], "Nope")[0].startswith("**Not comparable:**")
    note, curves, board = overlay([str(run)], "tokens")
    assert "1 run(s) overlaid" in note and all(s.endswith(f" @ {run.name}") for s in curves["series"])
    assert {row["run"] for row in board} == {run.name} and {"vs_best", "p_vs_best"} <= set(board[0])
    panel = verdict_html(run)
    assert "In short" in panel and "Average rank over tasks" in panel and "Probability of improvement" in panel
    assert "**Stub mode:**" in summary_markdown(run)
