"""Internal and trace_examples tasks never touch the network, even with the hub reachable.

DESIGN.md §7: only ``hf:`` tasks contact the dataset hub.  The test suite runs with the hub offline
(conftest), which hid that ``internal:multiobjective_gsm8k`` tried ``openai/gsm8k`` on the hub first
whenever ``datasets`` was installed.  Here every such task is built and scored in a fresh
interpreter without the offline variables, under an audit hook that refuses, and records, every
name lookup or connection to a host other than loopback (after the harness's own environment
defaults, as in a job process: they also turn off ``datasets``' load counter, which pinged S3 on
every load of a local file).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from trace_bench.registry.tasks import TaskCatalog

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "hf"

PROBE = r"""
import json, sys

attempts = []
LOOPBACK = {"localhost", "127.0.0.1", "::1", None, ""}


def hook(event, args):
    host = None
    if event == "socket.getaddrinfo":
        host = args[0]
    elif event == "socket.connect" and isinstance(args[1], tuple):
        host = args[1][0]
    else:
        return
    if isinstance(host, bytes):
        host = host.decode()
    if host not in LOOPBACK:
        attempts.append(f"{event} {host}")
        raise ConnectionRefusedError(f"test: no network ({host})")


sys.addaudithook(hook)

from trace_bench._util.runtime import configure_environment

configure_environment()  # as every job process does first

from trace_bench.registry.tasks import TaskCatalog
from trace_bench.tasks.problem import Problem
from trace_bench.trainers.evaluate import Evaluator

cases = json.loads(sys.argv[1])
catalog = TaskCatalog.create()
report = {}
for task_id, eval_kwargs in cases:
    before = len(attempts)
    problem = Problem.from_mapping(catalog.build(task_id, eval_kwargs), task_id)
    data = problem.train_dataset
    Evaluator(problem.param, problem.guide, want_score_dict=True).rollouts(data["inputs"][:2], data["infos"][:2])
    report[f"{task_id} {sorted(eval_kwargs)}"] = {"attempts": attempts[before:],
                                                  "source": (problem.metadata or {}).get("data_source")}
print(json.dumps(report))
"""

SMALL = {"internal:multiobjective_bbeh": {"n_train": 2, "n_val": 0}, "internal:multiobjective_gsm8k": {"n_train": 2}}


def test_internal_and_example_tasks_make_no_network_call(tmp_path: Path) -> None:
    ids = sorted(t.id for t in TaskCatalog.create().list() if t.id.split(":")[0] in ("internal", "trace_examples"))
    assert "internal:multiobjective_gsm8k" in ids and len(ids) >= 10
    cases = [(task_id, SMALL.get(task_id, {})) for task_id in ids]
    cases.append(("internal:multiobjective_gsm8k", {"n_train": 2, "data_files": str(FIXTURES / "gsm8k_train.jsonl"),
                                                    "cache_dir": str(tmp_path / "cache")}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
    env["HF_HOME"] = str(tmp_path / "hf-home")  # nothing cached: the hub route would have to go online
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(cases)], capture_output=True, text=True,
                          env=env, cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert {case: row["attempts"] for case, row in report.items() if row["attempts"]} == {}
    gsm8k = report["internal:multiobjective_gsm8k ['n_train']"]
    assert gsm8k["source"] == "problems shipped with trace-bench (not GSM8K items)"
    assert report["internal:multiobjective_gsm8k ['cache_dir', 'data_files', 'n_train']"]["source"] == "local files"


def test_shipped_gsm8k_rows_are_in_its_schema_and_modest() -> None:
    """The shipped rows: GSM8K's schema (the answer ends ``#### n``), a few dozen, distinct questions."""
    from trace_bench.tasks.internal.multiobjective_gsm8k import SHIPPED_ROWS, final_number, shipped_rows

    rows = shipped_rows()
    assert 20 <= len(rows) <= 100 and SHIPPED_ROWS.stat().st_size < 20_000
    assert len({r["question"] for r in rows}) == len(rows)
    for row in rows:
        assert set(row) == {"question", "answer"}
        assert "\n#### " in row["answer"] and final_number(row["answer"]) is not None
