"""Every task of ``list-tasks --all`` that runs LLM-written code says it needs the sandbox, and does.

The listing's ``sandbox`` column is what `validate` checks and what a user reads; the tests of each
suite (and tests/sandbox/test_attacks.py) show the code really runs there.  A task that runs no
LLM-written code (text parameters scored without executing anything) needs none.
"""

from __future__ import annotations

import json
import sys

import pytest

from tests.conftest import run_cli
from trace_bench.registry.tasks import TaskCatalog

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox targets Linux")

# Suites whose LLM-written code runs elsewhere, by design (docs/task-suites.md, "Threat model"):
# Terminal-Bench's agent commands run in the task's own container (Docker or Daytona, via Harbor).
CONTAINER_SUITES = {"terminal_bench"}


def _listing() -> list[dict[str, str]]:
    return json.loads(run_cli("list-tasks", "--all", "--format", "json", check=True).stdout)


def test_every_task_that_runs_code_needs_the_sandbox() -> None:
    rows = _listing()
    assert len(rows) > 100
    runs_code = [row for row in rows if "code" in row["parameters"].split(",")
                 or row["task_id"] in ("humaneval:prompt",) or row["task_id"] in ("hf:humaneval", "hf:mbpp")]
    unsandboxed = [row["task_id"] for row in runs_code
                   if row["sandbox"] != "required" and row["suite"] not in CONTAINER_SUITES]
    assert unsandboxed == []


def test_tasks_with_trainable_functions_are_marked() -> None:
    """A trainable function (a code node) is LLM-written code once an optimizer changed it."""
    from opto import trace  # noqa: F401 - the tasks below build opto models

    from trace_bench.tasks.code_nodes import trainable_code_nodes

    catalog = TaskCatalog.create()
    for spec in catalog.list(["internal", "trace_examples"]):
        try:
            problem = catalog.build(spec.id, {})
        except Exception:  # noqa: BLE001 - tasks that need data or a key here; their own tests cover them
            continue
        has_nodes = bool(trainable_code_nodes(problem["param"]))
        assert has_nodes == ("sandbox" in spec.tags) or spec.id == "internal:multiobjective_bbeh", spec.id
