"""Terminal-Bench via Harbor: stub mode never runs Harbor; real mode against a fake ``harbor``.

The fake ``harbor`` (a Python script first on PATH) writes Harbor's layout: the job's
``result.json`` and a trial dir ``<task>__<id>/`` with ``result.json`` (verifier reward,
exception_info) and ``agent/trajectory.json``.  The scenario comes from ``FAKE_HARBOR_SCENARIO``,
passed through ``harbor_extra_env`` (which must reach Harbor and never reach the disk).
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from tests.trainers.external_jobs import expand, run_jobs
from tests.waiting import PATIENCE_S
from trace_bench._util.errors import ConfigError
from trace_bench.tasks.terminal_bench import HARBOR_MISSING
from trace_bench.tasks.terminal_bench.errors import InfraError
from trace_bench.tasks.terminal_bench.harbor import HarborSettings, build_command
from trace_bench.tasks.terminal_bench.problem import DEFAULT_TEMPLATE, TerminalBenchGuide

SECRET = "sk-fakeharborsecret0123456789abcdef"

FAKE_HARBOR = r'''#!{python}
import json, os, sys, time
args = sys.argv[1:]
def arg(name):
    return args[args.index(name) + 1]
scenario = os.environ.get("FAKE_HARBOR_SCENARIO", "success")
print("harbor fake starting; secret", os.environ.get("FAKE_HARBOR_SECRET", ""))
if scenario == "timeout":
    time.sleep(3600)  # hangs: only harbor_cli_timeout_seconds ends it
if scenario == "crash":
    print("docker: Cannot connect to the Docker daemon", file=sys.stderr)
    sys.exit(2)
job = os.path.join(arg("--jobs-dir"), arg("--job-name"))
task = arg("--task-name")
template_path = [a for a in args if a.startswith("prompt_template_path=")][0].split("=", 1)[1]
trial = os.path.join(job, task + "__Ab3dE")
os.makedirs(os.path.join(trial, "agent"))
json.dump({{"id": "job-1", "n_total_trials": 1, "stats": {{"n_trials": 1, "n_errors": 0}}}},
          open(os.path.join(job, "result.json"), "w"))
result = {{"task_name": task, "trial_name": task + "__Ab3dE", "exception_info": None,
          "agent_result": {{"n_input_tokens": 1200, "n_output_tokens": 300}},
          "verifier_result": {{"rewards": {{"reward": 1.0}}}}}}
if scenario == "fail":
    result["verifier_result"] = {{"rewards": {{"reward": 0.0}}}}
if scenario == "agent_timeout":
    result["verifier_result"] = None
    result["exception_info"] = {{"exception_type": "AgentTimeoutError", "exception_message": "agent ran 900s"}}
if scenario == "infra":
    result["verifier_result"] = None
    result["exception_info"] = {{"exception_type": "EnvironmentStartTimeoutError", "exception_message": "no sandbox"}}
with open(os.path.join(trial, "result.json"), "w") as handle:
    handle.write("{{not json" if scenario == "malformed" else json.dumps(result))
steps = [{{"step_id": 1, "source": "agent", "message": "I will grep the log", "tool_calls": [{{"function_name": "bash"}}]}},
         {{"step_id": 2, "source": "agent", "message": "Done, marking complete"}}]
json.dump({{"schema_version": "ATIF-v1.2", "steps": steps}}, open(os.path.join(trial, "agent", "trajectory.json"), "w"))
open(os.path.join(trial, "used_template.txt"), "w").write(open(template_path).read())
'''


@pytest.fixture
def fake_harbor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    harbor = bin_dir / "harbor"
    harbor.write_text(FAKE_HARBOR.format(python=sys.executable))
    harbor.chmod(harbor.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return harbor


def _guide(tmp_path: Path, scenario: str, **extra: object) -> TerminalBenchGuide:
    # the fake harbor may start slowly on a loaded machine: only the hanging scenario may time out
    timeout = 5 if scenario == "timeout" else int(PATIENCE_S)
    kwargs = {"harbor_model": "openai/gpt-test", "harbor_env": "docker", "harbor_cli_timeout_seconds": timeout,
              "harbor_extra_env": {"FAKE_HARBOR_SCENARIO": scenario, "FAKE_HARBOR_SECRET": SECRET}, **extra}
    guide = TerminalBenchGuide("regex-log", kwargs)
    guide.set_trace_bench_context(mode="real", job_id="job42", artifacts_dir=str(tmp_path / "job" / "artifacts"))
    return guide


def test_command_line_contract() -> None:
    settings = HarborSettings.from_eval_kwargs("regex-log", {"harbor_agent_kwargs": {"max_episodes": 3}})
    assert settings.dataset == "terminal-bench@2.0" and settings.env in ("docker", "daytona")
    argv = build_command(settings, job_name="j", jobs_dir=Path("/jobs"), template_file=Path("/e/t.txt"), model="m")
    line = " ".join(argv[1:])
    assert line.startswith("run --job-name j --jobs-dir /jobs --dataset terminal-bench@2.0 --task-name regex-log")
    assert "--agent-import-path trace_bench.tasks.terminal_bench.agent:TraceBenchTerminus2" in line
    assert "--agent-kwarg prompt_template_path=/e/t.txt --agent-kwarg max_episodes=3" in line
    assert "--model m" in line and "--env" in line
    with pytest.raises(ValueError, match="harbor_route"):
        HarborSettings.from_eval_kwargs("x", {"harbor_route": "carrier-pigeon"})


def test_outcomes_artifacts_and_secrets(fake_harbor: Path, tmp_path: Path) -> None:
    assert _guide(tmp_path, "success").get_feedback("regex-log", DEFAULT_TEMPLATE)[0] == 1.0
    score, feedback = _guide(tmp_path, "fail").get_feedback("regex-log", DEFAULT_TEMPLATE + "\nBe careful.")
    assert score == 0.0 and "failed" in feedback and "grep the log" in feedback
    score, feedback = _guide(tmp_path, "agent_timeout").get_feedback("regex-log", DEFAULT_TEMPLATE)
    assert score == 0.0 and "AgentTimeoutError" in feedback
    for scenario, message in (("infra", "EnvironmentStartTimeoutError"), ("crash", "without a trial result"),
                              ("malformed", "unreadable trial result"), ("timeout", "harbor_cli_timeout_seconds")):
        with pytest.raises(InfraError, match=message) as caught:
            _guide(tmp_path, scenario).get_feedback("regex-log", DEFAULT_TEMPLATE)
        assert caught.value.job_status == "infra_error"
    root = tmp_path / "job" / "artifacts" / "terminal_bench"
    evals = sorted(root.iterdir())
    assert [e.name for e in evals] == [f"eval-{i:04d}" for i in range(1, 8)]
    for eval_dir in evals:
        for name in ("prompt_template.txt", "command.txt", "stdout.txt", "stderr.txt", "outcome.json"):
            assert (eval_dir / name).is_file(), (eval_dir, name)
        assert f"prompt_template_path={eval_dir / 'prompt_template.txt'}" in (eval_dir / "command.txt").read_text()
    second = evals[1]
    assert (second / "prompt_template.txt").read_text().endswith("Be careful.")
    used = next((second / "harbor_jobs").rglob("used_template.txt")).read_text()
    assert used == (second / "prompt_template.txt").read_text(), "Harbor read this evaluation's own file"
    assert {"trial_result.json", "job_result.json", "trajectory.json"} <= {p.name for p in second.iterdir()}
    outcome = json.loads((evals[0] / "outcome.json").read_text())
    assert outcome["kind"] == "task" and outcome["extra_env_names"] == ["FAKE_HARBOR_SCENARIO", "FAKE_HARBOR_SECRET"]
    assert outcome["agent_usage"]["n_input_tokens"] == 1200
    for path in root.rglob("*"):
        if path.is_file() and "harbor_jobs" not in path.parts:
            assert SECRET not in path.read_text(errors="replace"), path


def test_unusable_template_is_a_task_failure_without_harbor(tmp_path: Path) -> None:
    score, feedback = _guide(tmp_path, "success").get_feedback("regex-log", "no placeholders {oops}")
    assert score == 0.0 and "{instruction}" in feedback
    assert not (tmp_path / "job" / "artifacts" / "terminal_bench").exists()


def test_stub_mode_never_invokes_harbor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no harbor anywhere
    config = {"tasks": ["terminal_bench:some-unlisted-slug"], "trainers": [{"id": "PrioritySearch", "ps_steps": 2}],
              "seeds": [1]}
    [(result, job)] = run_jobs(config, tmp_path, monkeypatch)
    assert result.status == "ok" and result.score_initial == 1.0, result.error
    assert not (job / "artifacts" / "terminal_bench").exists()
    with pytest.raises(ConfigError, match="harbor not found"):  # real mode needs the extra: say how
        expand({**config, "mode": "real"})
    assert HARBOR_MISSING.startswith("harbor not found")


def test_real_jobs_score_or_end_as_infra_error(fake_harbor: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def config(scenario: str) -> dict[str, object]:
        return {"mode": "real", "tasks": [{"id": "terminal_bench:regex-log", "eval_kwargs": {
            "harbor_model": "openai/gpt-test", "harbor_extra_env": {"FAKE_HARBOR_SCENARIO": scenario}}}],
            "trainers": ["NoOpTrainer"], "seeds": [1], "llm": {"model": "unused", "base_url": "http://127.0.0.1:9/v1"}}

    [(ok, job)] = run_jobs(config("success"), tmp_path / "ok", monkeypatch)
    assert ok.status == "ok" and ok.score_best == 1.0, ok.error
    assert (job / "artifacts" / "terminal_bench" / "eval-0001" / "outcome.json").is_file()
    [(broken, _)] = run_jobs(config("infra"), tmp_path / "infra", monkeypatch)
    assert broken.status == "infra_error" and "EnvironmentStartTimeoutError" in broken.error
