"""Typed unavailability: a missing Python package is a config error with the install hint; a
missing tool, dataset or GPU makes the task's jobs skipped.  The kind decides, never the text."""

from __future__ import annotations

import pytest

from trace_bench._util.availability import Unavailable, UnavailableKind
from trace_bench._util.errors import ConfigError
from trace_bench.config.loader import parse_config
from trace_bench.matrix.expand import expand_matrix
from trace_bench.registry.tasks import TaskCatalog
from trace_bench.tasks.spec import TaskSpec


def _expand(reason: Unavailable | str) -> list:
    catalog = TaskCatalog()
    catalog.specs["internal:probe"] = TaskSpec(id="internal:probe", suite="internal", description="probe",
                                               module="nowhere", availability=lambda: reason)
    config = parse_config({"tasks": ["internal:probe"], "trainers": ["NoOpTrainer"], "seeds": [1, 2]})
    return expand_matrix(config, catalog)


def test_a_missing_package_is_a_config_error_with_its_hint() -> None:
    with pytest.raises(ConfigError, match=r"task 'internal:probe' is unavailable: missing foo: pip install foo"):
        _expand(Unavailable(UnavailableKind.MISSING_PACKAGE, "missing foo: pip install foo"))


@pytest.mark.parametrize("kind", [UnavailableKind.MISSING_TOOL, UnavailableKind.NO_DATA, UnavailableKind.NO_GPU])
def test_other_unavailability_skips_the_jobs(kind: UnavailableKind) -> None:
    # the text mentions installing, which the old string search took for a missing package
    jobs = _expand(Unavailable(kind, "lean not found: install elan"))
    assert [j.skip_reason for j in jobs] == ["task unavailable: lean not found: install elan"] * 2


def test_an_untyped_reason_from_an_older_plugin_skips() -> None:
    jobs = _expand("install trace-bench[something]")
    assert all(j.skip_reason == "task unavailable: install trace-bench[something]" for j in jobs)
    assert Unavailable.coerce("x") == Unavailable(UnavailableKind.MISSING_TOOL, "x")
