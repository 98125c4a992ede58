"""``trace-bench run --replay RUN``: re-run a recorded real-mode run offline, as a new run.

The new run uses the recorded run's config snapshot with ``llm.cache: replay`` pointed at the
recorded run's cache, so every LLM exchange is answered from the record (a request nobody
recorded fails loudly) and no provider or key is needed.  Job ids are unchanged (the cache is
not part of a job's identity), which makes the two runs directly comparable.
"""

from __future__ import annotations

from pathlib import Path

from trace_bench._util.errors import ConfigError
from trace_bench.config.loader import load_config
from trace_bench.config.models import RunConfig
from trace_bench.store.models import StoreError
from trace_bench.store.run_store import RunStore


def replay_config(reference: str, runs_dir: str | None) -> tuple[RunConfig, Path, str | None]:
    """(config of the new run, the recorded run's directory, its task root) for ``--replay reference``."""
    from trace_bench.runner.run import locate_run

    try:
        run_dir = locate_run(reference, runs_dir or "runs")
    except ConfigError as exc:
        raise ConfigError(exc.reason, key_path="--replay") from None
    store = RunStore(run_dir)
    config = load_config(store.snapshot_path)
    name = run_dir.name
    if config.mode != "real":
        raise ConfigError(f"run {name} ran in stub mode and made no LLM calls to replay; run its config again",
                          key_path="--replay")
    if config.llm.cache == "off":
        raise ConfigError(f"run {name} was not recorded (its llm.cache was off)", key_path="--replay",
                          hint="record a run with llm.cache: read_write to replay it later")
    recorded = Path(config.llm.cache_path) if config.llm.cache_path else store.llm_cache_path
    if not recorded.is_file():
        raise ConfigError(f"run {name} has no LLM cache at {recorded}", key_path="--replay")
    llm = config.llm.model_copy(update={"cache": "replay", "cache_path": str(recorded.resolve())})
    replay = config.model_copy(update={"llm": llm, "run_id": None})
    try:
        manifest = store.read_manifest_head()
    except StoreError:
        manifest = None
    root = manifest.task_root if manifest is not None else None
    return replay, run_dir, root if root and Path(root).is_dir() else None
