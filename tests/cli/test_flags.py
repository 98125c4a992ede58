"""Command-line flags and errors that are not about a config file: bad numbers, unwritable
directories, missing credentials, interrupted runs, strict checks that respect the mode."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from tests.conftest import REPO, USER_TASKS, run_cli

SMOKE = "tasks: [internal:numeric_param]\ntrainers: [NoOpTrainer]\n"
_PROVIDER_ENV = ("OPENAI_API_KEY", "OPENROUTER_API_KEY", "OPENAI_API_BASE", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY",
                 "TRACE_DEFAULT_LLM_BACKEND", "TRACE_CUSTOMLLM_URL", "TRACE_CUSTOMLLM_API_KEY", "TRACE_CUSTOMLLM_MODEL",
                 "TRACE_LITELLM_MODEL", "MY_PROVIDER_KEY", "HARBOR_MODEL")


def _cli_without_keys(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in _PROVIDER_ENV}
    return subprocess.run([sys.executable, "-m", "trace_bench", *args], capture_output=True, text=True, timeout=180,
                          env=env, cwd=cwd or REPO)


def _config(tmp_path: Path, text: str, name: str = "c.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(("flag", "value", "expected"), [
    ("--max-workers", "0", "must be at least 1"), ("--max-workers", "-5", "must be at least 1"),
    ("--max-workers", "two", "expected a whole number"), ("--job-timeout", "-5", "finite number of seconds"),
    ("--job-timeout", "nan", "finite number of seconds"), ("--job-timeout", "inf", "finite number of seconds"),
])
def test_bad_numeric_flags_are_usage_errors(tmp_path: Path, flag: str, value: str, expected: str) -> None:
    proc = run_cli("run", "--config", str(_config(tmp_path, SMOKE)), "--runs-dir", str(tmp_path / "runs"),
                   f"{flag}={value}")
    assert proc.returncode == 2
    assert f"argument {flag}" in proc.stderr and expected in proc.stderr
    assert not (tmp_path / "runs").exists()


def test_validate_strict_into_an_unwritable_runs_dir_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the runs directory should be")
    targets = [blocker / "runs"]
    if os.geteuid() != 0:  # root ignores directory permissions
        read_only = tmp_path / "read-only"
        read_only.mkdir(mode=0o555)
        targets.append(read_only)
    for runs in targets:
        proc = run_cli("validate", "--config", str(_config(tmp_path, SMOKE)), "--strict", "--runs-dir", str(runs))
        assert proc.returncode == 2, proc.stderr
        assert "Traceback" not in proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("trace-bench: error: --runs-dir: cannot write"), lines


def _read_only_mount(directory: Path) -> list[str] | None:
    """A command prefix that runs a command with ``directory`` bind-mounted read-only in a private
    mount namespace (``unshare -rm``), or None where this machine does not allow one."""
    import shutil

    if shutil.which("unshare") is None:
        return None
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", f"mount --bind -o ro '{directory}' '{directory}' && "
                            f"! touch '{directory}/probe'"], capture_output=True, timeout=60)
    if probe.returncode != 0:
        return None
    return ["unshare", "-rm", "sh", "-c", f"mount --bind -o ro '{directory}' '{directory}' && exec \"$0\" \"$@\""]


def test_run_into_an_unwritable_runs_dir_is_a_usage_error_with_a_hint(tmp_path: Path) -> None:
    """Nothing ran: exit 2 and one line with validate's hint (it was exit 1 and a bare OSError)."""
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the runs directory should be")
    mounted = tmp_path / "mounted"
    (mounted / "runs").mkdir(parents=True)
    config = _config(tmp_path, SMOKE)
    commands = [[sys.executable, "-m", "trace_bench", "run", "--config", str(config), "--runs-dir",
                 str(blocker / "runs")]]
    prefix = _read_only_mount(mounted)
    if prefix is not None:  # what a read-only mount answers: EROFS
        commands.append([*prefix, sys.executable, "-m", "trace_bench", "run", "--config", str(config),
                         "--runs-dir", str(mounted / "runs")])
    for command in commands:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=REPO)
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("trace-bench: error: --runs-dir: cannot create the run "
                                                       "directory"), lines
        assert lines[0].endswith("(choose a writable directory with --runs-dir)"), lines
    assert prefix is None or "Read-only file system" in lines[0]
    assert list((mounted / "runs").iterdir()) == []


def test_validate_strict_respects_stub_mode(tmp_path: Path) -> None:
    """Terminal-Bench needs harbor_model only in real mode; `run` never asked for it in stub mode."""
    config = _config(tmp_path, "mode: stub\ntasks: [terminal_bench:regex-log]\ntrainers: [NoOpTrainer]\n")
    proc = _cli_without_keys("validate", "--config", str(config), "--strict", "--runs-dir", str(tmp_path / "runs"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "[OK] terminal_bench:regex-log" in proc.stdout and "harbor_model" not in proc.stdout


@pytest.mark.parametrize(("llm", "variable"), [
    ("{model: gpt-4o-mini}", "OPENAI_API_KEY"),
    ("{model: gpt-4o-mini, api_key_env: MY_PROVIDER_KEY}", "MY_PROVIDER_KEY"),
    ("{provider: openrouter, model: some/model}", "OPENROUTER_API_KEY (or OPENAI_API_KEY)"),
    ("{base_url: 'https://llm.example.org/v1', model: m}", "OPENAI_API_KEY"),
])
def test_real_mode_without_a_key_fails_before_any_job(tmp_path: Path, llm: str, variable: str) -> None:
    config = _config(tmp_path, SMOKE + f"mode: real\nllm: {llm}\n")
    for command in ("run", "validate"):
        proc = _cli_without_keys(command, "--config", str(config), "--runs-dir", str(tmp_path / "runs"))
        assert proc.returncode == 2, proc.stdout + proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and f"{config}: llm: real mode needs an API key: {variable} is not set" in lines[0]
    assert not (tmp_path / "runs").exists()


def _templates_in_session(session: int) -> list[int]:
    """Pids of job templates (multiprocessing forkservers, spawned or forked from the driver: then
    ``trace_bench`` on their command line) in the process session ``session``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text(encoding="utf-8", errors="replace")
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:  # exited meanwhile
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # state, ppid, pgrp, session, ...
        if int(fields[3]) == session and (b"multiprocessing.forkserver" in cmdline or b"trace_bench" in cmdline):
            found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process table from /proc")
def test_a_real_run_refused_before_its_first_job_leaves_no_job_template_behind(tmp_path: Path) -> None:
    """The CLI starts a real run's template before it reads the config; it imports the provider
    libraries for seconds.  A run refused before its first job (here: no key) left it importing
    after the command had exited, for up to 10 s of CPU."""
    config = _config(tmp_path, SMOKE + "mode: real\nllm: {model: gpt-4o-mini}\n")
    env = {k: v for k, v in os.environ.items() if k not in _PROVIDER_ENV}
    log = tmp_path / "stderr.txt"
    with open(log, "w", encoding="utf-8") as stderr:  # not a pipe: reading one to its end waits for the template
        proc = subprocess.Popen([sys.executable, "-m", "trace_bench", "run", "--config", str(config), "--runs-dir",
                                 str(tmp_path / "runs")], cwd=REPO, env=env, start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=stderr)
        assert proc.wait(timeout=180) == 2, log.read_text(encoding="utf-8")
    assert _templates_in_session(proc.pid) == []


def test_a_loopback_endpoint_and_replay_need_no_key(tmp_path: Path) -> None:
    local = _config(tmp_path, SMOKE + "mode: real\nllm: {base_url: 'http://127.0.0.1:9/v1', model: m}\n", "a.yaml")
    assert _cli_without_keys("validate", "--config", str(local)).returncode == 0
    replay = _config(tmp_path, SMOKE + f"mode: real\nllm: {{cache: replay, cache_path: {tmp_path / 'c.sqlite'}}}\n")
    assert _cli_without_keys("validate", "--config", str(replay)).returncode == 0


@pytest.mark.parametrize("args", [["list-tasks", "--bench", "interal"], ["run", "--resume", "nosuchrun"],
                                  ["run", "--replay", "nosuchrun"]])
def test_errors_without_a_config_name_the_flag(tmp_path: Path, args: list[str]) -> None:
    proc = run_cli(*args, cwd=tmp_path)
    assert proc.returncode == 2
    flag = args[1]
    assert proc.stderr.startswith(f"trace-bench: error: {flag}: "), proc.stderr
    assert "<config>" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_interrupted_run_is_not_reported_complete(tmp_path: Path) -> None:
    config = _config(tmp_path, "run_id: stop-me\ntasks:\n  - id: slow_numeric\n    eval_kwargs: {delay: 0.3}\n"
                               "trainers:\n  - id: PrioritySearch\n    ps_steps: 3\n"
                               "seeds: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]\nmax_workers: 1\n")
    runs = tmp_path / "runs"
    process = subprocess.Popen([sys.executable, "-m", "trace_bench", "run", "--config", str(config), "--root",
                                str(USER_TASKS), "--runs-dir", str(runs), "--quiet"], cwd=REPO,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 240
        while not list((runs / "stop-me" / "jobs").glob("*/results.json")):
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "no job finished"
            time.sleep(0.1)
        process.send_signal(signal.SIGTERM)
        stdout, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 1, stderr
    assert "Run complete" not in stdout
    assert f"Run interrupted: stop-me (continue it with: trace-bench run --resume {runs / 'stop-me'})" in stdout


def test_list_tasks_hides_unavailable_tasks_unless_all(monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from trace_bench.cli.main import main
    from trace_bench.registry.tasks import TaskCatalog

    original = TaskCatalog.list

    def with_one_unavailable(self: TaskCatalog, benches: object = None) -> list:
        specs = original(self, benches)
        return [replace(specs[0], availability=lambda: "needs a GPU"), *specs[1:]]

    monkeypatch.setattr(TaskCatalog, "list", with_one_unavailable)
    assert main(["list-tasks", "--bench", "internal"]) == 0
    default = capsys.readouterr().out.splitlines()
    assert main(["list-tasks", "--bench", "internal", "--all"]) == 0
    everything = capsys.readouterr().out.splitlines()
    hidden = [line for line in everything if line not in default]
    assert len(hidden) == 1 and hidden[0].endswith("\tunavailable\tneeds a GPU")
    assert default and all(line.split("\t")[1] == "available" for line in default)


@pytest.mark.parametrize("prefix", [[], ["--"]])
def test_fake_llm_options_with_or_without_a_double_dash(prefix: list[str]) -> None:
    process = subprocess.Popen([sys.executable, "-m", "trace_bench", "fake-llm", *prefix, "--port", "0"], cwd=REPO,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = process.stdout.readline() if process.stdout else ""
    finally:
        process.terminate()
        process.communicate(timeout=30)
    assert first.startswith("http://127.0.0.1:") and first.strip().endswith("/v1"), first
