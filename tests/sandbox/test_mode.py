"""Where bubblewrap cannot run: tasks that run LLM-written code say so, and fail unless weak mode is allowed."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import pytest

from tests.conftest import only_run_dir, run_cli
from trace_bench.config.loader import parse_config
from trace_bench.matrix.identity import config_hash
from trace_bench.sandbox import (
    SETTING_ENV,
    SandboxUnavailable,
    allow_weak,
    run_sandboxed,
    shutdown,
    used_modes,
)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox targets Linux")

CONFIG = "tasks: [tsp_construct, internal:multi_param]\ntrainers: [NoOpTrainer]\n"


@pytest.fixture
def no_bwrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A PATH on which bubblewrap cannot be found (for this process and the CLI it starts)."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    shutdown()
    yield {"PATH": str(empty)}
    shutdown()


def test_code_runs_only_in_the_mode_the_user_allowed(no_bwrap: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SandboxUnavailable, match=r"bubblewrap .* not installed.*--allow-weak-sandbox"):
        run_sandboxed("tests.sandbox.targets:echo", {"x": 1})
    allow_weak(True)
    try:
        result = run_sandboxed("tests.sandbox.targets:echo", {"x": 1})
    finally:
        monkeypatch.delenv(SETTING_ENV, raising=False)
    assert result.ok and result.mode == "weak" and "weak" in used_modes()


def test_the_config_key_is_a_run_local_setting() -> None:
    strong, weak = parse_config({"tasks": ["tsp_construct"]}), parse_config({"tasks": ["tsp_construct"], "sandbox": "weak"})
    assert (strong.sandbox, weak.sandbox) == ("strong", "weak")
    assert config_hash(strong) == config_hash(weak)  # where a run executes, not what it measures


def test_listing_and_validate_show_the_need(no_bwrap: dict[str, str], tmp_path: Path) -> None:
    listing = json.loads(run_cli("list-tasks", "--bench", "llm4ad,internal", "--format", "json", env=no_bwrap,
                                 check=True).stdout)
    by_id = {row["task_id"]: row for row in listing}
    assert by_id["llm4ad:tsp_construct"]["sandbox"] == "required"
    assert "needs the sandbox" in by_id["llm4ad:tsp_construct"]["reason"]
    assert by_id["internal:multi_param"]["sandbox"] == "" and by_id["internal:multi_param"]["reason"] == ""
    assert by_id["internal:code_param"]["sandbox"] == "required"  # its trainable function runs sandboxed
    config = tmp_path / "c.yaml"
    config.write_text(CONFIG)
    refused = run_cli("validate", "--config", str(config), env=no_bwrap)
    assert refused.returncode == 1 and "[FAIL] sandbox for llm4ad:tsp_construct" in refused.stdout
    assert "--allow-weak-sandbox" in refused.stdout
    allowed = run_cli("validate", "--config", str(config), "--allow-weak-sandbox", env=no_bwrap)
    assert allowed.returncode == 0 and "[WARN] sandbox for llm4ad:tsp_construct" in allowed.stdout


@pytest.mark.parametrize("weak", [False, True])
def test_a_run_fails_clearly_or_records_the_weak_mode(no_bwrap: dict[str, str], tmp_path: Path, weak: bool) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(CONFIG)
    args = ["run", "--config", str(config), "--runs-dir", str(tmp_path / "runs"), "--quiet"]
    proc = run_cli(*args, *(["--allow-weak-sandbox"] if weak else []), env=no_bwrap)
    assert proc.returncode == (0 if weak else 1), proc.stderr
    run = only_run_dir(tmp_path / "runs")
    assert json.loads((run / "meta" / "env.json").read_text())["sandbox"]["setting"] == ("weak" if weak else "strong")
    results = {r["task"]: r for r in (json.loads(p.read_text()) for p in run.glob("jobs/*/results.json"))}
    tsp, internal = results["llm4ad:tsp_construct"], results["internal:multi_param"]
    assert internal["status"] == "ok" and internal["sandbox"] == ""
    if weak:
        assert tsp["status"] == "ok" and tsp["sandbox"] == "weak"
        assert "WARNING: LLM-written code runs in the WEAK sandbox" in proc.stderr  # although --quiet
    else:
        assert tsp["status"] == "failed" and "needs the sandbox" in tsp["error"] and "bubblewrap" in tsp["error"]
        assert "WEAK" not in proc.stderr


def test_the_variable_forcing_the_weak_mode_is_recorded_everywhere(tmp_path: Path) -> None:
    """Finding 7: TRACE_BENCH_SANDBOX=force-weak ran weak while env.json said strong, and a weak run
    warned nowhere and left no trace in results.csv, summary.json or the report.  And a weak run
    left an empty directory in the temporary directory for every spare call it did not use."""
    config = tmp_path / "c.yaml"
    config.write_text(CONFIG)
    scratch = tmp_path / "t"  # the weak mode's per-call work directories go under TMPDIR
    scratch.mkdir()
    proc = run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "runs"), "--quiet",
                   env={SETTING_ENV: "force-weak", "TMPDIR": str(scratch)})
    assert proc.returncode == 0, proc.stderr
    assert "WARNING: LLM-written code runs in the WEAK sandbox" in proc.stderr
    # each call's directory is removed, the spare ones made ahead of a call that never came too
    assert not [p.name for p in scratch.iterdir() if p.name.startswith("trace-bench-sandbox-")]
    run = only_run_dir(tmp_path / "runs")
    setting = json.loads((run / "meta" / "env.json").read_text())["sandbox"]
    assert setting["setting"] == "weak" and setting["chosen_by"] == f"{SETTING_ENV}=force-weak"
    assert setting["bubblewrap"] in ("unused", "unavailable")
    with open(run / "results.csv", encoding="utf-8") as handle:
        rows = {row["task"]: row for row in csv.DictReader(handle)}
    assert rows["llm4ad:tsp_construct"]["sandbox"] == "weak" and rows["internal:multi_param"]["sandbox"] == ""
    assert json.loads((run / "summary.json").read_text())["sandbox"] == {"weak": 1}
    report = run_cli("report", str(run), check=True)
    assert report.returncode == 0
    assert "WEAK sandbox" in (run / "report.html").read_text()


def test_a_sandbox_whose_calls_cannot_get_namespaces_is_refused_at_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """E.g. a security module that refuses user namespaces nested in bubblewrap: say so, do not fail each call."""
    from trace_bench.sandbox import policy

    original = policy.bwrap_argv

    def without_nested_user_namespaces(*args: object, **kwargs: object) -> list[str]:
        argv = original(*args, **kwargs)  # type: ignore[arg-type]
        return [argv[0], "--unshare-user", "--disable-userns", *argv[1:]]

    monkeypatch.setattr(policy, "bwrap_argv", without_nested_user_namespaces)
    shutdown()
    try:
        with pytest.raises(SandboxUnavailable, match="namespaces of their own"):
            run_sandboxed("tests.sandbox.targets:echo", {"x": 1})
    finally:
        monkeypatch.undo()
        shutdown()
    assert run_sandboxed("tests.sandbox.targets:echo", {"x": 2}).value == {"x": 2}


def test_prepare_reads_the_views_sources_before_its_warm_up_thread_starts(monkeypatch: pytest.MonkeyPatch,
                                                                           tmp_path: Path) -> None:
    """CPython 3.11 keeps one AST recursion counter per interpreter: the warm-up thread's
    ``ast.parse``, racing the job's own, failed with "SystemError: AST constructor recursion depth
    mismatch" (seen in CI). The thread parses nothing now: the caller has built the view.  (With
    an empty import index, so that the sources are parsed, not read from the package's index.)"""
    import ast
    import threading

    from trace_bench.sandbox import mode, view
    from trace_bench.sandbox.import_index import ImportIndex

    empty = ImportIndex(tmp_path / "index.json", view._parse)
    monkeypatch.setattr(view, "import_index", lambda: empty)

    monkeypatch.setenv(SETTING_ENV, "weak")  # bwrap first, the weak mode allowed: no refusal here
    threads: list[object] = []

    class NotStarted:
        def __init__(self, *args: object, **kwargs: object) -> None:
            threads.append(kwargs.get("name"))

        def start(self) -> None:
            pass

    parsed_in: list[threading.Thread] = []
    real_parse = ast.parse

    def parse(*args: object, **kwargs: object) -> ast.AST:
        parsed_in.append(threading.current_thread())
        return real_parse(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(mode.threading, "Thread", NotStarted)
    monkeypatch.setattr(view.ast, "parse", parse)
    view.closure.cache_clear()
    mode.prepare("trace_bench.tasks.code_nodes.execution")
    assert threads == ["trace-bench-sandbox-warm-up"]
    assert parsed_in and set(parsed_in) == {threading.current_thread()}
    parsed_in.clear()
    mode.policy.own_files(mode.policy.view_names(["trace_bench.tasks.code_nodes.execution"]))
    assert parsed_in == [], "what the thread asks for is already built"
