"""Command-line overrides of a resumed run: the run keeps the ones it recorded, and a new one may
not change it.

A run records its overrides in its config snapshot's header (:mod:`trace_bench.config.overrides`).
``--resume RUN`` resolves the config it continues with those overrides applied again, to the
snapshot (where they are already part of the config) or to the file ``--config`` names, so a
resume with the original file is the run it was.  An override given with ``--resume`` is accepted
only when it leaves the run's identity (its ``config_hash``) as it is: repeating a recorded
override, or a run-local setting such as ``max_workers``.  One that would change it (other seeds,
another budget, model or mode) is a config error (exit 2): it would mix incomparable jobs in one
run, so it belongs in a new run.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from trace_bench._util.errors import ConfigError
from trace_bench.config.loader import parse_overridden
from trace_bench.config.models import RunConfig
from trace_bench.config.overrides import parse_overrides, read_snapshot_header
from trace_bench.matrix.identity import config_hash
from trace_bench.store.run_store import RunStore

Pairs = list[tuple[str, str]]


def recorded_overrides(run_dir: str | Path) -> Pairs:
    """The overrides the run at ``run_dir`` recorded in its config snapshot ([] for none)."""
    text = RunStore(run_dir).read_snapshot_text()
    return read_snapshot_header(text) if text else []


def resumed_config(data: Any, file: str | None, run_dir: str | Path, new: Sequence[tuple[str, str]]) -> tuple[
        RunConfig, Pairs]:
    """The config a resume of ``run_dir`` continues with: the config document ``data`` (read from
    ``file``) with the run's recorded overrides applied, then ``new`` ones, which must not change
    its ``config_hash``; and every override applied, for the snapshot."""
    recorded = recorded_overrides(run_dir)
    config = parse_overridden(data, recorded, file=file)
    if not new:
        return config, recorded
    parse_overrides(new)  # a malformed one is reported as such first
    changed = parse_overridden(data, [*recorded, *new], file=file)
    before, after = config_hash(config), config_hash(changed)
    if before != after:
        culprit = next((pair for pair in new if config_hash(parse_overridden(data, [*recorded, pair], file=file))
                        != before), new[0])
        raise ConfigError(f"--resume continues run {Path(run_dir).name} with the config it recorded, and this override "
                          f"changes it (config_hash {before[:12]} -> {after[:12]}); a run holds one config's jobs",
                          key_path=f"{culprit[0]} {culprit[1]}",
                          hint=f"start a new run with it: trace-bench run --config FILE {culprit[0]} {culprit[1]}")
    return changed, [*recorded, *(pair for pair in new if pair not in recorded)]
