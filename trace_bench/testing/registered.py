"""Every registered trainer as a contract case: what the test suite runs the contract on.

The cases come from the registry's listing (built-in rows of ``trainers/catalog.json``, entry-point
plugins, opto's own trainers), never from a hand-written list, so a newly registered trainer is
checked with no edit to any test.  A built-in trainer runs with the short settings of its catalog
row (``contract``: knobs and, where needed, a task); a trainer with no row runs with its defaults
on the default task.  A trainer that cannot run here (its optional library is missing, its module
is absent from this checkout) is still a case: it carries the reason, and the test skips it saying
so, rather than dropping it from the list.

Built from the static listing (``list_trainer_rows``), so collecting the cases imports no trainer
module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from trace_bench.testing.trainer_contract import DEFAULT_TASK


@dataclass(frozen=True)
class ContractCase:
    """One trainer to check: its id, the settings to check it with, and why it cannot run here."""

    trainer_id: str
    params: Mapping[str, Any] = field(default_factory=dict, hash=False)
    task: str = DEFAULT_TASK
    unavailable: str | None = None


def contract_cases() -> list[ContractCase]:
    """Every registered trainer, sorted by id, unavailable ones included with their reason."""
    from trace_bench.registry.trainer_catalog import BUILTIN_TRAINERS, list_trainer_rows

    cases: dict[str, ContractCase] = {}
    for meta in BUILTIN_TRAINERS:
        settings = meta.contract
        absent = None if meta.present() else f"module {meta.module} is absent from this checkout"
        cases[meta.id] = ContractCase(meta.id, dict(settings.params), settings.task or DEFAULT_TASK, absent)
    for row in list_trainer_rows(include_unavailable=True):
        if row.id in cases and row.source in ("built-in", "external"):
            cases[row.id] = ContractCase(row.id, cases[row.id].params, cases[row.id].task, row.reason)
        else:  # a plugin (even one replacing a built-in id) or an opto trainer: its own defaults
            cases[row.id] = ContractCase(row.id, unavailable=row.reason)
    return sorted(cases.values(), key=lambda case: case.trainer_id.lower())
