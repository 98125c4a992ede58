"""Hostile configs: each is refused by ``run`` and ``validate`` with exit 2 and one line naming the
file and key, writes nothing, and costs little: the CLI process's peak memory (its own rusage) stays
under 200 MB and a per-test timeout bounds the work (an alias bomb used to hang with memory growing).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import REPO

BASE = "tasks: [internal:numeric_param]\ntrainers: [NoOpTrainer]\n"
MAX_RSS_MB = 200
SAFETY_AS_BYTES = 2 * 1024**3  # a regression fails on memory instead of taking the machine down


def _alias_bomb() -> str:
    """The billion laughs under a legitimate key: ~600 bytes, 9**9 strings once anything walks it as a tree."""
    lines = ['  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 9):
        prev, name = chr(ord("a") + i - 1), chr(ord("a") + i)
        lines.append(f"  {name}: &{name} [{', '.join([f'*{prev}'] * 9)}]")
    return BASE + "eval_kwargs:\n" + "\n".join(lines) + "\n"


CASES: list[tuple[str, Callable[[Path], str], list[str]]] = [
    ("alias_bomb", lambda tmp: _alias_bomb(), ["expands to more than", "aliases"]),
    ("nested_lists", lambda tmp: "tasks: " + "[" * 5000 + "]" * 5000 + "\n", ["nests deeper than 64 levels"]),
    ("nested_json", lambda tmp: '{"tasks": ' + "[" * 5000 + "]" * 5000 + "}", ["nests deeper than 64 levels"]),
    ("run_id_parent", lambda tmp: BASE + "run_id: ../../escaped_run\n", ["run_id", "one directory name"]),
    ("run_id_absolute", lambda tmp: BASE + f"run_id: {tmp / 'absolute_run'}\n", ["run_id", "cannot be a path"]),
    ("run_id_separator", lambda tmp: BASE + "run_id: nested/run\n", ["run_id", "one directory name"]),
    ("duplicate_key", lambda tmp: BASE + "mode: stub\nmode: real\n", ["duplicate key 'mode' on lines 3 and 4"]),
    ("duplicate_nested_key", lambda tmp: BASE + "llm:\n  model: a\n  model: b\n",
     ["llm", "duplicate key 'model' on lines 4 and 5"]),
    ("nan_eval_kwarg", lambda tmp: BASE + "eval_kwargs: {target: .nan}\n", ["eval_kwargs.target", "nan", "JSON"]),
    ("inf_budget", lambda tmp: BASE + "budget: {usd: .inf}\n", ["budget.usd", "inf"]),
    ("inf_knob", lambda tmp: "tasks: [internal:numeric_param]\ntrainers:\n  - id: PrioritySearch\n"
     "    params_variants: [{ps_steps: -.inf}]\n", ["trainers[0].params_variants[0].ps_steps", "-inf"]),
    ("unknown_optimizer", lambda tmp: "tasks: [internal:numeric_param]\ntrainers:\n  - id: NoOpTrainer\n"
     "    optimizer: NotAnOptimizer\n", ["trainers[0].optimizer", "unknown optimizer 'NotAnOptimizer'", "OptoPrime"]),
    ("misspelt_optimizer", lambda tmp: "tasks: [internal:numeric_param]\ntrainers:\n  - id: NoOpTrainer\n"
     "    optimizer: OptoPrim\n", ["unknown optimizer 'OptoPrim'", "did you mean 'OptoPrime'?"]),
    ("negative_eval_timeout", lambda tmp: "tasks:\n  - id: llm4ad:circle_packing\n    eval_kwargs: {timeout_seconds: -1}\n"
     "trainers: [NoOpTrainer]\n", ["tasks[0].eval_kwargs.timeout_seconds", "positive number", "-1"]),
    ("huge_task_id", lambda tmp: "tasks: [internal:" + "x" * 200_000 + "]\ntrainers: [NoOpTrainer]\n",
     ["tasks[0].id", "unknown task", "…"]),
    ("ten_megabytes", lambda tmp: BASE + "tags: [" + ", ".join(["padding"] * 1_200_000) + "]\n",
     ["MB", "limit is 256 KB"]),
    ("recursive_alias", lambda tmp: BASE + "eval_kwargs: &loop {again: *loop}\n", ["recursive"]),
    ("replay_without_cache_path", lambda tmp: BASE + "mode: real\nllm: {cache: replay}\n",
     ["llm", "cache_path", "trace-bench run --replay"]),
]


# The kernel keeps a process's peak RSS across exec, so a CLI forked straight from a large pytest
# process would report pytest's size. This small launcher forks the CLI itself (a fresh peak), waits
# for it with os.wait4 and prints its exit code and peak RSS.
_LAUNCHER = """
import os, resource, sys
limit = int(sys.argv[1])
pid = os.fork()
if pid == 0:
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    os.execv(sys.executable, [sys.executable, "-m", "trace_bench", *sys.argv[2:]])
_, status, usage = os.wait4(pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss, file=open(os.environ["TB_MEASURE_OUT"], "w"))
"""


def _run_measured(args: list[str], cwd: Path, out: Path) -> tuple[int, str, float]:
    """(exit code, stderr, peak RSS in MB of the CLI process) from its own rusage (os.wait4)."""
    measured = out / "measured"
    env = {**os.environ, "PYTHONPATH": str(REPO), "TB_MEASURE_OUT": str(measured)}
    with open(out / "stdout", "wb") as stdout, open(out / "stderr", "wb") as stderr:
        process = subprocess.Popen([sys.executable, "-c", _LAUNCHER, str(SAFETY_AS_BYTES), *args], cwd=cwd,
                                   stdout=stdout, stderr=stderr, env=env, start_new_session=True)
        try:
            process.wait()
        except BaseException:  # the per-test timeout fired: leave no runaway process behind
            os.killpg(process.pid, 9)
            process.wait()
            raise
    code, maxrss_kb = measured.read_text().split()
    return int(code), (out / "stderr").read_text(errors="replace"), int(maxrss_kb) / 1024


def _files_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*")} if root.exists() else set()


@pytest.mark.timeout(90)
@pytest.mark.parametrize("command", ["run", "validate"])
@pytest.mark.parametrize(("name", "make", "expected"), CASES, ids=[c[0] for c in CASES])
def test_hostile_config_is_refused_cheaply_and_writes_nothing(tmp_path: Path, command: str, name: str,
                                                               make: Callable[[Path], str], expected: list[str]) -> None:
    work = tmp_path / "deep" / "er" / "work"  # ../../escaped_run would land in tmp_path/deep
    work.mkdir(parents=True)
    config = tmp_path / f"{name}.yaml"
    config.write_text(make(tmp_path), encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    before = _files_under(tmp_path)
    args = [command, "--config", str(config), "--runs-dir", str(work / "runs")]
    if command == "validate":
        args.append("--strict")  # the mode that writes a manifest
    code, stderr, rss_mb = _run_measured(args, work, out)

    assert code == 2, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr[:2000]
    assert lines[0].startswith(f"trace-bench: error: {config}: "), lines[0][:300]
    assert len(lines[0]) < 1200
    for fragment in expected:
        assert fragment in lines[0], (fragment, lines[0])
    assert rss_mb < MAX_RSS_MB, f"peak RSS {rss_mb:.0f} MB"
    written = _files_under(tmp_path) - before - {out / "stdout", out / "stderr", out / "measured"}
    assert not written, sorted(written)
    assert not Path("/absolute_run").exists() and not (tmp_path / "escaped_run").exists()
