"""Identities: config_hash, job_id, run_id (DESIGN §5)."""

from __future__ import annotations

import hashlib
import json
import os
import time
from datetime import datetime, timezone
from typing import Any

from trace_bench.config.model_names import configured_model
from trace_bench.config.models import RUN_LOCAL_FIELDS, RunConfig


def canonical_json(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)


def sha256(data: Any) -> str:
    return hashlib.sha256(canonical_json(data).encode()).hexdigest()


def config_hash(config: RunConfig) -> str:
    """Hash of the resolved config without run-local fields (where/how fast it runs)."""
    data = config.model_dump(mode="json", exclude=set(RUN_LOCAL_FIELDS))
    return sha256(data)


def llm_identity(config: RunConfig) -> dict[str, Any]:
    """What makes two runs' LLM behaviour different: mode, provider, models per role, sampling.
    Transport (base URL, keys, timeouts, retries, concurrency) is left out on purpose."""
    if config.mode == "stub":
        return {"mode": "stub"}
    llm = config.llm
    # the models a job will really call, also when they come from the original's environment variables
    # (CustomLLM included): the same rule the providers use
    model = configured_model(llm.model)
    roles = {role: {"model": rc.model, "provider": rc.provider, "temperature": rc.temperature}
             for role, rc in sorted(llm.roles.items())}  # a role without a model calls ``model``
    return {"mode": "real", "provider": llm.provider, "model": model, "temperature": llm.temperature,
            "roles": roles}


def job_id(*, task: str, eval_kwargs: dict[str, Any], trainer: str, trainer_kwargs: dict[str, Any],
           optimizer: str | None, optimizer_kwargs: dict[str, Any], seed: int, llm: dict[str, Any]) -> str:
    payload = {"task": task, "eval_kwargs": eval_kwargs, "trainer": trainer, "trainer_kwargs": trainer_kwargs,
               "optimizer": optimizer, "optimizer_kwargs": optimizer_kwargs, "seed": seed, "llm": llm}
    return sha256(payload)[:12]


def new_run_id(config_digest: str) -> str:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    salt = f"{config_digest}|{os.getpid()}|{time.time_ns()}"
    return f"{stamp}-{hashlib.sha256(salt.encode()).hexdigest()[:8]}"
