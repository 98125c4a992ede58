"""What the UI's widgets show: rounded numbers, literal Markdown, preselected runs, Stop only when
something runs, config errors before a launch, configs found without a restart, running runs named."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import run_cli
from trace_bench.ui.context import UIContext, preselect
from trace_bench.ui.discovery import list_runs
from trace_bench.ui.launcher import Launch, LaunchError, prepare_config, start_failure
from trace_bench.ui.readers import display_value, frame_of, markdown_text

pytest.importorskip("pandas")

# gradio is imported in this process by some tests: on the worker of the other modules that import it
pytestmark = pytest.mark.xdist_group("gradio")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two finished runs and a copy of the newest cut before its end (as while it runs)."""
    root = tmp_path_factory.mktemp("ui-widgets") / "runs"
    for seeds in ("[1]", "[1, 2]"):
        config = root.parent / f"c{len(seeds)}.yaml"
        config.write_text(f"mode: stub\nseeds: {seeds}\ntasks: [internal:numeric_param]\ntrainers: [NoOpTrainer]\n")
        run_cli("run", "--config", str(config), "--runs-dir", str(root), "--quiet", check=True)
    return root


@pytest.fixture
def live_run(runs: Path, tmp_path: Path) -> Path:
    source = list_runs(runs)[0].run_dir
    run = tmp_path / "runs" / "live-run"
    shutil.copytree(source, run)
    events = (run / "events.jsonl").read_text().splitlines(keepends=True)
    (run / "events.jsonl").write_text("".join(e for e in events if '"run_finished"' not in e))
    (run / "summary.json").unlink(missing_ok=True)
    return run


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    yield process
    process.communicate(b"")


def _launch(run_dir: Path, process: subprocess.Popen[bytes], log: Path) -> Launch:
    return Launch("L1", ["trace-bench"], log, process, run_dir.parent, run_dir=run_dir)


def test_decimals_are_rounded_for_display_and_ids_are_not() -> None:
    assert display_value("-0.08623333333333338") == -0.08623 and display_value(0.123456789) == 0.1235
    assert display_value("3e-05") == 3e-05 and display_value("12") == "12"
    assert display_value("123e45678901") == "123e45678901"  # a job id, not a number
    frame = frame_of([{"job_id": "0123456789ab", "score_best": "-0.08623333333333338", "mean": 0.6666666666666666}])
    assert frame.to_dict("records") == [{"job_id": "0123456789ab", "score_best": -0.08623, "mean": 0.6667}]


def test_markdown_text_is_literal() -> None:
    assert markdown_text("CI [0, 0] (x)") == r"CI \[0, 0\] \(x\)"
    assert markdown_text("<b>*a*</b>") == r"\<b\>\*a\*\</b\>"


def test_compare_text_is_plain_and_compare_preselects_the_newest_runs(runs: Path) -> None:
    pytest.importorskip("gradio")
    from trace_bench.ui import build_app

    app = build_app(runs)
    props = {c["props"].get("elem_id"): c["props"] for c in app.config["components"]}
    newest, older = (str(info.run_dir) for info in list_runs(runs)[:2])
    assert props["tb-compare-text"].get("language") is None  # a Markdown highlighter styles "[0, 0]" as a link
    assert props["tb-driver-log"].get("language") is None  # the shell highlighter split "best=-0" / ".003067"
    # nothing picked when the server starts: a page's load picks the newest runs of that moment, and
    # the Compare tab's own refresh, sent with what the page held before (nothing), picks the same
    # two whichever is answered last (a server-start pick came back when the refresh was answered last)
    assert (props["tb-compare-a"].get("value"), props["tb-compare-b"].get("value")) == (None, None)
    assert props["tb-stop"]["interactive"] is False
    on_load = next(f.fn for f in app.fns.values() if getattr(f.fn, "__name__", "") == "on_load")
    updates = on_load(None)
    assert updates[2]["value"] == newest and updates[3]["value"] == older and updates[4]["value"] == newest
    refresh = next(f.fn for f in app.fns.values() if getattr(f.fn, "__name__", "") == "on_refresh"
                   and f.fn.__module__ == "trace_bench.ui.tabs.compare")
    assert [update["value"] for update in refresh(None, None)] == [newest, older]
    assert preselect(None, [], 0) is None


def test_inspector_refresh_picks_the_newest_run(runs: Path) -> None:
    pytest.importorskip("gradio")
    from trace_bench.ui import build_app

    app = build_app(runs)
    newest = str(list_runs(runs)[0].run_dir)
    refresh = next(f.fn for f in app.fns.values() if getattr(f.fn, "__name__", "") == "on_refresh"
                   and f.fn.__module__ == "trace_bench.ui.tabs.inspector")
    assert refresh(None, None)[0]["value"] == newest


def test_configs_added_later_appear_on_rescan(runs: Path, tmp_path: Path) -> None:
    pytest.importorskip("gradio")
    from trace_bench.ui import build_app

    configs = tmp_path / "configs"
    configs.mkdir()
    (configs / "a.yaml").write_text("tasks: [internal:numeric_param]\n")
    app = build_app(runs, configs_dir=configs)
    (configs / "b.yaml").write_text("tasks: [internal:numeric_param]\n")
    on_load = next(f.fn for f in app.fns.values() if getattr(f.fn, "__name__", "") == "on_load")
    assert on_load("a.yaml")[5]["choices"] == ["a.yaml", "b.yaml"]
    rescan = next(f.fn for f in app.fns.values() if getattr(f.fn, "__name__", "") == "on_rescan")
    assert rescan("a.yaml")["choices"] == ["a.yaml", "b.yaml"]


def test_a_bad_config_is_refused_before_launch_in_one_line() -> None:
    for text, expected in (("tasks: [internal:nope]\ntrainers: [NoOpTrainer]\n", "unknown task 'internal:nope'"),
                           ("tasks: [internal:numeric_param]\ntrainers: [Nope]\n", "unknown trainer 'Nope'")):
        with pytest.raises(LaunchError) as caught:
            prepare_config(text, "stub")
        message = str(caught.value)
        assert expected in message and "\n" not in message and "the editor" in message and "/" not in message


def test_a_launch_that_dies_at_start_reports_its_error_without_server_paths(tmp_path: Path) -> None:
    config = tmp_path / "runs" / ".ui" / "L1.yaml"
    log = tmp_path / "L1.log"
    log.write_text(f"Traceback? no.\ntrace-bench: error: {config}: tasks[0].id: unknown task 'x'\n")
    process = subprocess.Popen([sys.executable, "-c", "raise SystemExit(2)"])
    process.wait()
    launch = _launch(tmp_path / "runs" / "r", process, log)
    launch.config_path = config
    assert start_failure(launch) == "the editor: tasks[0].id: unknown task 'x'"


def test_running_runs_are_named_and_stoppable(live_run: Path, sleeper: subprocess.Popen[bytes],
                                              tmp_path: Path) -> None:
    from trace_bench.ui.tabs.launch import stoppable_launch

    ctx = UIContext.create(live_run.parent)
    label = dict((v, k) for k, v in ctx.run_choices())[str(live_run.resolve())]
    assert label.endswith("incomplete") and stoppable_launch(ctx, str(live_run), {}) is None
    ctx.launcher.launches["L1"] = _launch(live_run, sleeper, tmp_path / "log")
    label = dict((v, k) for k, v in ctx.run_choices())[str(live_run.resolve())]
    assert label.endswith("· running") and "no results yet" not in label and "incomplete" not in label
    assert stoppable_launch(ctx, str(live_run), {}) is not None
    assert stoppable_launch(ctx, None, {"launch": "L1"}) is not None
    sleeper.communicate(b"")
    assert stoppable_launch(ctx, str(live_run), {"launch": "L1"}) is None
    assert dict((v, k) for k, v in ctx.run_choices())[str(live_run.resolve())].endswith("incomplete")



def test_a_tick_that_changed_nothing_does_not_overwrite_the_launch_state(runs: Path) -> None:
    """The timer's tick runs beside Start: had it written back the state it read, a Start landing
    meanwhile would be undone and its launch never followed (the page showed "no run selected")."""
    pytest.importorskip("gradio")
    import gradio as gr

    from trace_bench.ui import build_app

    app = build_app(runs)
    tick = next(f.fn for f in app.fns.values() if getattr(f.fn, "__name__", "") == "on_tick")
    run_dir = str(list_runs(runs)[0].run_dir)
    state = {"stoppable": False}
    skipped = gr.skip()
    first = tick(state, run_dir)
    settled = state if first[3] == skipped else first[3]  # the first tick records what it shows
    again = tick(settled, run_dir)
    assert again[3] == skipped, "nothing changed: the state output is skipped"


def test_launch_shows_the_workers_a_start_uses_and_passes_only_a_changed_count() -> None:
    from trace_bench.ui.tabs.launch import config_workers, workers_override

    assert config_workers("mode: stub\nmax_workers: 4\n") == 4 and config_workers("n_concurrent: 3\n") == 3
    assert config_workers("mode: stub\n") == 1 and config_workers("max_workers: [") == 1, "the schema's default"
    assert workers_override(4, 4) is None and workers_override(2, 4) == 2 and workers_override(0, 4) is None


def test_a_run_that_ended_shows_its_leaderboard_and_its_workers(runs: Path, live_run: Path) -> None:
    """After a run ends the Launch tab shows its leaderboard (not the first lines of the driver's
    output) and the progress bar the worker count the driver used; while it runs, no leaderboard."""
    pytest.importorskip("gradio")
    from trace_bench.ui import build_app
    from trace_bench.ui.live import ProgressReader, progress_html

    app = build_app(runs)
    tick = next(f.fn for f in app.fns.values() if getattr(f.fn, "__name__", "") == "on_tick")
    finished = str(list_runs(runs)[0].run_dir)
    board = tick({"stoppable": False}, finished)[6]
    assert board["visible"] is True and {"rank", "trainer", "seeds"} <= set(board["value"].columns)
    assert tick({"stoppable": False}, str(live_run))[6]["visible"] is False
    progress = ProgressReader(finished).read()
    assert progress.workers == 1 and "2/2 jobs · 1 worker ·" in progress_html(progress)
