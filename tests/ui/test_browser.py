"""The UI in a real browser: Debian's headless Chromium driven by playwright (never a downloaded one).

One server (``trace-bench ui`` in a subprocess, with a planted API key in its environment) and one
page serve the whole module; tests run in file order and build on each other's runs.  Screenshots
of every tab land in ``test-artifacts/ui/`` (``TRACE_BENCH_PUBLISH_SCREENSHOTS=1`` also copies
them to ``docs/images/ui-<tab>.png``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.waiting import PATIENCE_S
from trace_bench.llm.fake_server import FakeLLMServer

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PLANTED = "sk-planted-UIsecret0123456789abcdef"
TYPED = "sk-typed-UIsecret9876543210fedcba"
SHOTS = REPO / "test-artifacts" / "ui"
IMAGES = REPO / "docs" / "images"
COMPARE_CONFIG = """
mode: stub
seeds: [1, 2, 3]
max_workers: 2
tasks: [internal:numeric_param, internal:multi_param]
trainers:
  - id: PrioritySearch
    params_variants: [{ps_steps: 3, ps_candidates: 2, ps_proposals: 2}]
  - NoOpTrainer
"""

STOP_CONFIG = """# 48 short stub jobs, run one at a time so Stop lands mid-way
mode: stub
seeds: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
tasks: [internal:numeric_param, internal:multi_param]
trainers:
  - id: PrioritySearch
    params_variants: [{ps_steps: 2, ps_candidates: 2, ps_proposals: 2}]
  - NoOpTrainer
"""
STOP_JOBS = 48
#: a real-mode job on the fake provider (the planted key is what it is sent): the inspector shows its transcript
REAL_CONFIG = """
mode: real
run_id: transcript-real
seeds: [1]
tasks: [internal:numeric_param]
trainers: [{{id: PrioritySearch, ps_steps: 2}}]
llm: {{base_url: "{url}", model: fake-model}}
"""

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is not installed "
                                 "(run scripts/install-system-deps.sh as root)")]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_token(log: Path, process: subprocess.Popen[Any], timeout: float = 120) -> str:
    """The token from the server's start-up line (printed once it serves)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = re.search(r"open http://\S+\?token=(\S+)", log.read_text(errors="replace"))
        if found:
            return found.group(1)
        if process.poll() is not None:
            raise AssertionError(f"the UI server exited with {process.returncode}")
        time.sleep(0.3)
    raise AssertionError(f"the UI server printed no URL within {timeout:.0f}s")


def _plant_runs(runs: Path, env: dict[str, str], llm_url: str) -> list[subprocess.Popen[Any]]:
    """Two comparable runs (B with a tighter LLM-call budget) and a real-mode run against the fake
    provider at ``llm_url``, made by the CLI, plus a broken run dir."""
    broken = runs / "broken-run" / "meta"
    broken.mkdir(parents=True)
    (broken / "manifest.json").write_text('{"run_id": "broken-run", "jobs": [', encoding="utf-8")
    (broken.parent / "summary.json").write_text('{"counts": {"ok": 1', encoding="utf-8")
    processes = []
    for name, text in (("compare-a", COMPARE_CONFIG + "run_id: compare-a\n"),
                       ("compare-b", COMPARE_CONFIG + "run_id: compare-b\nbudget: {llm_calls: 4}\n"),
                       ("transcript-real", REAL_CONFIG.format(url=llm_url))):
        config = runs.parent / f"{name}.yaml"
        config.write_text(text, encoding="utf-8")
        processes.append(subprocess.Popen([sys.executable, "-m", "trace_bench", "run", "--config", str(config),
                                           "--runs-dir", str(runs), "--quiet"], env=env, cwd=REPO,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    return processes


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    runs = tmp_path_factory.mktemp("ui") / "runs"
    runs.mkdir()
    env = {**os.environ, "OPENAI_API_KEY": PLANTED, "GRADIO_ANALYTICS_ENABLED": "False"}
    provider = FakeLLMServer().start()
    planted = _plant_runs(runs, env, provider.url)
    port = _free_port()
    log = open(runs.parent / "server.log", "wb")  # noqa: SIM115 - closed below
    process = subprocess.Popen([sys.executable, "-m", "trace_bench", "ui", "--runs-dir", str(runs),
                                "--port", str(port)], env=env, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    try:
        token = _wait_token(runs.parent / "server.log", process)
        for other in planted:
            assert other.wait(120) == 0
        yield {"url": url, "runs": runs, "port": port, "token": token}
    finally:
        provider.stop()
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


@pytest.fixture(scope="module")
def page(server: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path=str(CHROMIUM), headless=True,
            args=ARGS, viewport={"width": 1360, "height": 1000})
        # every wait is on a condition; the bound only ends a wait that will never end (a loaded machine
        # rendered a real job's transcript after more than the 30 s the bound was)
        context.set_default_timeout(PATIENCE_S * 1000)
        tab = context.new_page()
        tab.goto(f"{server['url']}?token={server['token']}")
        tab.wait_for_selector("#tb-start")
        yield tab
        context.close()


def _choose(page: Any, elem_id: str, text: str) -> None:
    page.locator(f"#{elem_id} input").click()
    page.get_by_role("option", name=re.compile(re.escape(text))).first.click()


def _open_tab(page: Any, name: str) -> None:
    """Switch tabs and wait until the tab is the selected one; the pickers used next wait for their
    options themselves (Playwright's auto-waiting), so no pause is needed for the lists to refresh."""
    page.get_by_role("tab", name=name).click()
    page.wait_for_function("name => [...document.querySelectorAll('[role=tab]')].some(t => "
                           "t.textContent.trim() === name && t.getAttribute('aria-selected') === 'true')", arg=name)


def _wait_for_lines(page: Any, elem_id: str) -> None:
    """A curve chart has drawn at least one series (a server-rendered SVG with a line in it)."""
    page.wait_for_function(f"() => {{ const c = document.querySelector('#{elem_id} .tb-chart');"
                           " return c && Number(c.dataset.series) > 0 && c.querySelector('svg g[id^=\"line2d\"] path'); }")


def _wait_for_plot(page: Any, elem_id: str) -> None:
    """An interactive chart (plotly, in gr.Plot) has drawn at least one curve."""
    page.wait_for_function(f"() => {{ const g = document.querySelector('#{elem_id} .js-plotly-plot');"
                           " return g && g.data && g.data.some(t => t.meta === 'curve' || t.type === 'parcoords'); }")


def _shot(page: Any, name: str, publish: bool = True) -> None:
    """Screenshot to test-artifacts/ui/<name>.png.  With TRACE_BENCH_PUBLISH_SCREENSHOTS=1 the
    published ones are also copied to docs/images/ui-<name>.png (a plain test run never edits
    tracked files)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    if publish and os.environ.get("TRACE_BENCH_PUBLISH_SCREENSHOTS") == "1":
        IMAGES.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, IMAGES / f"ui-{name}.png")


def _progress(page: Any) -> dict[str, str]:
    return page.locator("#tb-progress").evaluate(
        "e => ({percent: e.dataset.percent, state: e.dataset.state || '', done: e.dataset.done || '0',"
        " total: e.dataset.total || '0', text: e.innerText})")


def _run_dirs(runs: Path) -> set[Path]:
    return {p for p in runs.iterdir() if (p / "meta" / "manifest.json").exists()}


def _all_json_valid(run_dir: Path) -> None:
    for path in run_dir.rglob("*.json"):
        json.loads(path.read_text(encoding="utf-8"))
    for path in run_dir.rglob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            json.loads(line)


def _set_config(page: Any, text: str, marker: str) -> None:
    """Replace the Launch editor's text and wait until the editor shows ``marker``."""
    editor = page.locator("#tb-editor .cm-content")
    editor.click()
    page.keyboard.press("Control+A")
    page.keyboard.insert_text(text)
    page.wait_for_function("m => document.querySelector('#tb-editor').innerText.includes(m)", arg=marker)


def test_launch_smoke_run_reaches_100_percent(page: Any, server: dict[str, Any]) -> None:
    _open_tab(page, "Launch")
    _set_config(page, "# the one-job smoke run\n" + (REPO / "configs" / "smoke.yaml").read_text(encoding="utf-8"),
                "the one-job smoke run")
    # the field shows the workers a Start would use (the config's), not "0 = config"
    page.wait_for_function("() => document.querySelector('#tb-workers input').value === '1'")
    page.locator("#tb-workers input").fill("1")
    before = _run_dirs(server["runs"])
    page.locator("#tb-api-key input").fill(TYPED)
    page.click("#tb-start")
    page.wait_for_selector('#tb-progress[data-percent="100"][data-state="finished"]', timeout=90_000)
    assert page.locator("#tb-api-key input").input_value() == ""  # cleared once the run started
    (run_dir,) = _run_dirs(server["runs"]) - before
    assert json.loads((run_dir / "summary.json").read_text())["counts"] == {"ok": 1}
    assert "1/1 jobs · 1 worker ·" in _progress(page)["text"]
    # once the run has ended, its leaderboard is shown, not the driver's first lines
    page.wait_for_function("() => document.querySelector('#tb-launch-leaderboard')?.innerText.includes('rank')")
    assert "PrioritySearch" in page.inner_text("#tb-launch-leaderboard")
    _shot(page, "launch-finished", publish=False)


def test_inspector_shows_the_job_curve(page: Any) -> None:
    """On a run the server fixture planted, so it holds whichever tests ran before."""
    _open_tab(page, "Job inspector")
    _choose(page, "tb-inspect-run", "compare-a")
    page.wait_for_selector("#tb-job-header h3")
    _wait_for_lines(page, "tb-job-curve")
    assert "internal:numeric_param" in page.inner_text("#tb-job-header")
    page.wait_for_function("() => document.querySelector('#tb-job-stdout').innerText.includes('[Step 3]')")
    page.wait_for_selector("#tb-state-diff .tb-diff")  # initial -> best, the states of a stub job
    assert "initial" in page.inner_text("#tb-state-diff") and "best" in page.inner_text("#tb-state-diff")
    for picker in ("tb-inspect-run", "tb-inspect-job"):  # each picker shows its whole label
        page.wait_for_function(f"() => document.querySelector('#{picker} input').value !== ''")
        fits = page.evaluate(f"(() => {{ const i = document.querySelector('#{picker} input');"
                             " return [i.scrollWidth, i.clientWidth]; })()")
        assert fits[0] <= fits[1], f"{picker} is cut off: {fits}"
    _shot(page, "inspector")


def test_inspector_shows_a_real_jobs_transcript_per_step_and_a_state_diff(page: Any) -> None:
    """The real-mode job the fixture ran on the fake provider: its calls of a step, as a conversation,
    beside the state the step produced; the diff between two states it picks."""
    _open_tab(page, "Job inspector")
    _choose(page, "tb-inspect-run", "transcript-real")
    page.wait_for_selector("#tb-transcript .tb-conv[data-step='2'] .tb-call")  # the latest step, shown first
    calls = page.locator("#tb-transcript .tb-call")
    assert calls.count() == int(page.locator("#tb-transcript .tb-conv").get_attribute("data-calls") or 0) > 0
    first = calls.first
    assert "optimizer" in first.inner_text() and "fake-model" in first.inner_text()
    assert "#Variables" in first.text_content() and '"suggestion"' in first.text_content()  # prompt and answer
    # the state panel is its own output: a loaded page may still show the previous pick's for a moment
    page.wait_for_function("() => document.querySelector('#tb-transcript-state').innerText"
                           ".includes('state reported at step 2')")
    assert "x0" in (page.locator("#tb-transcript-state").text_content() or "")
    _choose(page, "tb-transcript-step", "step 1")
    page.wait_for_selector("#tb-transcript .tb-conv[data-step='1'] .tb-call")
    page.wait_for_function("() => document.querySelector('#tb-transcript-state').innerText"
                           ".includes('state reported at step 1')")
    # a diff, not two texts side by side: initial -> best by default, then any two states
    page.wait_for_selector("#tb-state-diff .tb-diff[data-changed='1'] .tb-changed[data-name='x0'] .tb-add")
    _choose(page, "tb-diff-from", "step 1")
    _choose(page, "tb-diff-to", "step 2")
    page.wait_for_function("() => document.querySelector('#tb-state-diff').innerText.includes('step 1')"
                           " && document.querySelector('#tb-state-diff').innerText.includes('step 2')")
    assert page.locator("#tb-state-diff .tb-del").count() >= 1 and page.locator("#tb-state-diff .tb-add").count() >= 1
    _shot(page, "inspector-transcript")


def test_browse_shows_results_report_and_broken_runs(page: Any, server: dict[str, Any]) -> None:
    _open_tab(page, "Browse")
    _choose(page, "tb-browse-run", "broken-run")
    page.wait_for_function("() => document.querySelector('#tb-summary').innerText.includes('not valid JSON')")
    _choose(page, "tb-browse-run", "compare-a")
    page.wait_for_function("() => document.querySelector('#tb-results').innerText.includes('internal:multi_param')")
    _wait_for_plot(page, "tb-browse-curves")
    traces = page.evaluate("document.querySelector('#tb-browse-curves .js-plotly-plot').data"
                           ".map(t => ({meta: t.meta, group: t.legendgroup, x: t.x}))")
    curves = [t for t in traces if t["meta"] == "curve"]
    for end in [t for t in traces if t["meta"] == "end"]:  # each curve ends at its end marker
        assert any(c["group"] == end["group"] and c["x"][-1] == end["x"][0] for c in curves)
    assert len(curves) == 4, "two arms on two task panels"
    page.locator("#tb-browse-curves .legend .traces").first.click()  # a click on the legend hides that arm
    page.wait_for_function("() => document.querySelector('#tb-browse-curves .js-plotly-plot').data"
                           ".some(t => t.meta === 'curve' && t.visible === 'legendonly')")
    page.get_by_text("Params variants").click()
    _wait_for_plot(page, "tb-params")
    page.wait_for_function("() => [...document.querySelectorAll('#tb-browse-frontier .tb-frontier')]"
                           ".some(c => Number(c.dataset.frontier) > 0 && c.querySelector('svg'))")
    page.wait_for_function("() => document.querySelector('#tb-integrity').innerText.includes('Integrity audit')")
    page.click("#tb-report")
    page.wait_for_selector("#tb-report-view iframe", timeout=60_000)
    assert (server["runs"] / "compare-a" / "report.html").exists()
    _shot(page, "browse")


def test_compare_two_runs(page: Any) -> None:
    _open_tab(page, "Compare")
    _choose(page, "tb-compare-a", "compare-a")
    _choose(page, "tb-compare-b", "compare-b")
    page.click("#tb-compare-btn")
    page.wait_for_function("() => document.querySelector('#tb-compare-message').innerText.includes('paired')")
    assert "PrioritySearch" in page.inner_text("#tb-compare-table")
    _shot(page, "compare")
    _choose(page, "tb-compare-b", "broken-run")
    page.click("#tb-compare-btn")
    page.wait_for_function("() => document.querySelector('#tb-compare-message').innerText.includes('Not comparable')")


def test_stop_leaves_a_resumable_run_and_resume_finishes_it(page: Any, server: dict[str, Any]) -> None:
    _open_tab(page, "Launch")
    before = _run_dirs(server["runs"])
    _set_config(page, STOP_CONFIG, "Stop lands mid-way")
    page.locator("#tb-workers input").fill("1")
    page.click("#tb-start")
    page.wait_for_function("() => { const e = document.querySelector('#tb-progress');"
                           f" return e.dataset.total === '{STOP_JOBS}' && Number(e.dataset.done) >= 3; }}",
                           timeout=90_000)
    _shot(page, "launch")  # the published Launch screenshot shows a run in progress
    page.click("#tb-stop")
    page.wait_for_selector('#tb-progress[data-state="interrupted"]', timeout=60_000)
    (run_dir,) = _run_dirs(server["runs"]) - before
    page.wait_for_function("() => document.querySelector('#tb-progress').innerText.includes('stopped')")
    _all_json_valid(run_dir)
    results = list(run_dir.glob("jobs/*/results.json"))
    assert 3 <= len(results) < STOP_JOBS
    finished = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()][-1]
    assert finished["type"] == "run_finished" and finished["interrupted"] is True
    statuses = [json.loads(p.read_text())["status"] for p in results]
    assert set(statuses) <= {"ok", "interrupted"}, statuses

    page.locator("#tb-workers input").fill("2")
    page.click("#tb-resume")
    page.wait_for_selector('#tb-progress[data-percent="100"][data-state="finished"]', timeout=120_000)
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    starts = [e for e in events if e["type"] == "run_started"]
    assert len(starts) == 2 and starts[1]["to_run"] == STOP_JOBS - statuses.count("ok")
    assert json.loads((run_dir / "summary.json").read_text())["counts"] == {"ok": STOP_JOBS}
    _all_json_valid(run_dir)


def test_no_secret_reaches_the_browser(page: Any, server: dict[str, Any]) -> None:
    for tab in ("Launch", "Browse", "Compare", "Job inspector"):
        _open_tab(page, tab)
        content = page.content()
        assert PLANTED not in content and TYPED not in content, tab
        assert "sk-planted" not in content and "sk-typed" not in content, tab
    request = urllib.request.Request(server["url"] + "config", headers={"Authorization": f"token {server['token']}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        config = response.read().decode()
    assert "sk-planted" not in config and "sk-typed" not in config
    for path in server["runs"].rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert b"sk-planted" not in data and b"sk-typed" not in data, path


def test_report_fits_a_1300px_viewport(page: Any, server: dict[str, Any]) -> None:
    """report.html fits a 1300 px window: nothing widens the page, and no table (paired tests, power,
    integrity, with their long arm labels) is cut off behind a sideways scroll."""
    from trace_bench.analysis import write_report

    report = write_report([server["runs"] / "compare-a"], server["runs"].parent / "fit.html")
    tab = page.context.new_page()
    try:
        tab.set_viewport_size({"width": 1300, "height": 900})
        tab.goto(report.as_uri())
        tab.wait_for_selector("#cost table")
        assert tab.evaluate("document.documentElement.scrollWidth") <= 1300
        widths = tab.evaluate("[...document.querySelectorAll('svg')].map(s => s.getBoundingClientRect().right)")
        assert widths and max(widths) <= 1300
        cut = tab.evaluate("[...document.querySelectorAll('table')].filter(t => t.scrollWidth > t.clientWidth + 1)"
                           ".map(t => t.closest('section').id)")
        assert cut == [], f"tables cut off at 1300 px in {cut}"
    finally:
        tab.close()


def test_a_bad_config_says_why_it_did_not_start(page: Any) -> None:
    _open_tab(page, "Launch")
    _set_config(page, "mode: stub\ntasks: [internal:no_such_task]\ntrainers: [NoOpTrainer]\n", "no_such_task")
    page.click("#tb-start")
    page.wait_for_function("() => document.querySelector('#tb-launch-message').innerText.includes('Not started')")
    message = page.inner_text("#tb-launch-message")
    (line,) = [line for line in message.splitlines() if "Not started" in line]  # one line
    assert "unknown task 'internal:no_such_task'" in line and "Started launch" not in message
    assert "/.ui/" not in message and str(Path("/").resolve()) + "tmp" not in message
    assert page.locator("#tb-stop").is_disabled()


def test_a_page_loaded_later_compares_the_newest_runs_and_lists_no_validation(page: Any,
                                                                            server: dict[str, Any]) -> None:
    """Runs made after the server started: a page loaded now preselects the two newest in Compare;
    what `validate --strict` wrote is not a run and appears nowhere."""
    env = {**os.environ, "OPENAI_API_KEY": PLANTED}
    for name in ("fresh-1", "fresh-2"):
        config = server["runs"].parent / f"{name}.yaml"
        config.write_text(f"run_id: {name}\ntasks: [internal:numeric_param]\ntrainers: [NoOpTrainer]\n")
        subprocess.run([sys.executable, "-m", "trace_bench", "run", "--config", str(config), "--runs-dir",
                        str(server["runs"]), "--quiet"], env=env, cwd=REPO, check=True, timeout=300,
                       capture_output=True)
    config = server["runs"].parent / "checked.yaml"
    config.write_text("run_id: only-validated\ntasks: [internal:numeric_param]\ntrainers: [NoOpTrainer]\n")
    subprocess.run([sys.executable, "-m", "trace_bench", "validate", "--config", str(config), "--strict",
                    "--runs-dir", str(server["runs"])], env=env, cwd=REPO, check=True, timeout=300,
                   capture_output=True)
    assert (server["runs"] / "only-validated" / "meta" / "manifest.json").exists()
    fresh = page.context.new_page()
    try:
        fresh.goto(f"{server['url']}?token={server['token']}")
        fresh.wait_for_selector("#tb-start")
        _open_tab(fresh, "Compare")
        fresh.wait_for_function("() => document.querySelector('#tb-compare-a input').value.includes('fresh-2')")
        assert "fresh-1" in fresh.locator("#tb-compare-b input").input_value()
        _open_tab(fresh, "Browse")
        fresh.locator("#tb-browse-run input").click()
        options = fresh.get_by_role("option").all_inner_texts()
        assert any("fresh-2" in o for o in options) and not any("only-validated" in o for o in options), options
    finally:
        fresh.close()
