"""The original Trace-Bench's names that moved resolve from one table, with one warning each.

A script written for the original imports ``trace_bench.runner.BenchRunner`` and friends: it must
keep working, and be told once (a DeprecationWarning) where the name lives now.  Each check runs
in a fresh interpreter: what was warned is per process.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import REPO

PROBE = """
import json, warnings
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    from {package} import {name} as first
    from {package} import {name} as second
import importlib
where = importlib.import_module({target_module!r})
print(json.dumps({{"same": first is second is getattr(where, {target_name!r}),
                  "warnings": [(w.category.__name__, str(w.message)) for w in caught]}}))
"""


def probe(package: str, name: str, target_module: str, target_name: str) -> dict[str, object]:
    code = PROBE.format(package=package, name=name, target_module=target_module, target_name=target_name)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(("package", "name", "target_module", "target_name"), [
    ("trace_bench.runner", "BenchRunner", "trace_bench.legacy.runner", "BenchRunner"),
    ("trace_bench.registry", "load_task_bundle", "trace_bench.legacy.registry", "load_task_bundle"),
    ("trace_bench.cli", "cmd_run", "trace_bench.legacy.cli", "cmd_run"),
    ("trace_bench.matrix", "expand_matrix", "trace_bench.legacy.matrix", "expand_matrix"),
    ("trace_bench.runner", "_select_best_state", "trace_bench.legacy.results", "select_best_state"),
    ("trace_bench.runner.job", "run_job", "trace_bench.runner.job.body", "run_job"),  # docs/adding-trainer.md's old path
])
def test_a_moved_name_resolves_and_warns_once(package: str, name: str, target_module: str, target_name: str) -> None:
    outcome = probe(package, name, target_module, target_name)
    assert outcome["same"] is True
    warnings = outcome["warnings"]
    assert isinstance(warnings, list) and len(warnings) == 1, warnings
    category, message = warnings[0]
    assert category == "DeprecationWarning"
    assert f"{package}.{name}" in message and f"{target_module}.{target_name}" in message


def test_an_unknown_name_is_an_attribute_error_and_submodules_still_import() -> None:
    import trace_bench.runner as runner

    with pytest.raises(AttributeError, match="no attribute 'NoSuchName'"):
        runner.NoSuchName  # noqa: B018
    from trace_bench.runner import options  # a submodule, not a moved name

    assert options.RunOptions is not None


def test_the_documented_availability_path_for_task_authors() -> None:
    """docs/adding-task.md: a task's ``availability`` returns an ``Unavailable`` from
    ``trace_bench.availability`` (the helpers live in ``_util``; the path stays)."""
    from trace_bench._util import availability as helpers
    from trace_bench.availability import Unavailable, UnavailableKind, requires

    assert Unavailable is helpers.Unavailable
    reason = requires("no_such_package_here", extra="hf")()
    assert isinstance(reason, Unavailable) and reason.kind == UnavailableKind.MISSING_PACKAGE
