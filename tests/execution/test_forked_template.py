"""The job template forked from the driver (``execution.forked_template``): it holds what the driver
imported before the fork, and its jobs see what a spawned template's jobs see."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, only_run_dir, run_cli

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the template is forked on Linux only")


def _probe(tmp_path: Path, **env: str | None) -> dict[str, Any]:
    out = tmp_path / "job.json"
    merged = {**os.environ, **env}
    subprocess.run([sys.executable, "-m", "tests.execution.fork_probe", str(out)], check=True, cwd=REPO, timeout=120,
                   env={name: value for name, value in merged.items() if value is not None})
    return dict(json.loads(out.read_text(encoding="utf-8")))


def _fresh_hash() -> int:
    return int(subprocess.run([sys.executable, "-c", "print(hash('trace-bench'))"], check=True, capture_output=True,
                              text=True, env={**os.environ, "PYTHONHASHSEED": "0"}).stdout)


def test_a_template_forked_from_the_driver_holds_its_pydantic_and_looks_spawned(tmp_path: Path) -> None:
    job = _probe(tmp_path, PYTHONHASHSEED="0", TRACE_BENCH_FORK_TEMPLATE=None)
    assert job["marker"] is not None and not job["template_spawned"]  # the driver's own pydantic, not imported again
    assert job["hash_randomization"] == 0 and job["hash"] == _fresh_hash()
    assert job["sigint_default"] and job["sigterm_default"]  # the driver's SIGTERM handler is not the job's
    assert not any(name.endswith("job.json.held") for name in job["open_files"])  # nor its descriptors


@pytest.mark.parametrize("env", [{"PYTHONHASHSEED": None}, {"PYTHONHASHSEED": "0", "TRACE_BENCH_FORK_TEMPLATE": "0"},
                                 {"PYTHONHASHSEED": "0", "FORK_PROBE_THREAD": "1"}])
def test_a_driver_that_may_not_fork_spawns_its_template(tmp_path: Path, env: dict[str, str | None]) -> None:
    """A fork would give the jobs the driver's random string hashes (opto's prompts iterate sets), or
    copy one thread of several; the switch turns it off."""
    job = _probe(tmp_path, **env)
    assert job["template_spawned"] and job["marker"] is None
    assert job["hash_randomization"] == 0 and job["hash"] == _fresh_hash()
    assert job["sigint_default"] and job["sigterm_default"]


def test_runs_with_a_forked_and_a_spawned_template_record_the_same_job(tmp_path: Path) -> None:
    """``trace-bench run`` without PYTHONHASHSEED runs itself again with 0 and forks its template."""
    config = tmp_path / "c.yaml"
    config.write_text("tasks: [internal:numeric_param]\ntrainers: [{id: PrioritySearch, ps_steps: 1, ps_batches: 1}]\n"
                      "seeds: [123]\n", encoding="utf-8")
    rows = []
    for side, fork in (("forked", None), ("spawned", "0")):
        runs = tmp_path / side
        run_cli("run", "--config", str(config), "--runs-dir", str(runs), "--quiet", check=True,
                env={"PYTHONHASHSEED": None, "TRACE_BENCH_FORK_TEMPLATE": fork})
        result = json.loads(next((only_run_dir(runs) / "jobs").glob("*/results.json")).read_text(encoding="utf-8"))
        rows.append({key: result.get(key) for key in ("job_id", "status", "score_initial", "score_best", "score_final",
                                                        "llm_calls", "total_tokens", "n_evals")})
    assert rows[0] == rows[1] and rows[0]["status"] == "ok"


def test_the_run_command_runs_itself_again_with_a_fixed_hash_seed() -> None:
    """The same program, the same arguments, the same process, now with string hashes a forked template may share."""
    code = ("import os, sys\n"
            "print(sys.flags.hash_randomization, os.environ.get('PYTHONHASHSEED'), os.getpid(), sys.argv[1:], flush=True)\n"
            "from trace_bench._util.hash_seed import fix_hash_seed\n"
            "fix_hash_seed()\n")
    env = {name: value for name, value in os.environ.items() if name not in ("PYTHONHASHSEED", "TRACE_BENCH_FORK_TEMPLATE")}
    lines = subprocess.run([sys.executable, "-c", code, "a", "b"], check=True, capture_output=True, text=True, cwd=REPO,
                           env=env, timeout=120).stdout.splitlines()
    first, again = (line.split(" ", 3) for line in lines)
    assert (first[:2], again[:2]) == (["1", "None"], ["0", "0"])
    assert first[2:] == again[2:] == [first[2], "['a', 'b']"]


@pytest.mark.parametrize(("argv", "before_parsing"), [
    (["run", "--config", "c.yaml"], True),
    (["run", "--config", "c.yaml", "--executor", "local"], True),
    (["run", "--config", "c.yaml", "--executor", "ray"], False),  # a Ray driver must not run itself again
    (["run", "--config", "c.yaml", "--executor=ray"], False),
    (["run", "--config", "array.yaml"], False),  # "ray" in a path: decided after parsing, as before
    (["validate", "--config", "c.yaml"], False),
    ([], False),
])
def test_a_plain_local_run_is_told_before_its_parser_is_built(argv: list[str], before_parsing: bool) -> None:
    from trace_bench.cli.entry import plainly_local_run

    assert plainly_local_run(argv) is before_parsing
