"""Short knob settings of the built-in trainers that search with an optimizer, for the tests that run
each of them on several tasks: the ``contract`` settings of their catalog rows (one place to write
them; a new opto-search trainer is run by those tests too)."""

from __future__ import annotations

from typing import Any

from trace_bench.registry.trainer_catalog import BUILTIN_TRAINERS

SHORT: dict[str, dict[str, Any]] = {meta.id: dict(meta.contract.params) for meta in BUILTIN_TRAINERS
                                    if meta.target.startswith("trace_bench.trainers.opto_search.") and meta.present()}
