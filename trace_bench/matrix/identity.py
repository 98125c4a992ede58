"""Identities: config_hash, job_id, run_id (DESIGN §5)."""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from trace_bench.config.identity import LLMIdentity
from trace_bench.config.models import RUN_LOCAL_FIELDS, RunConfig


def canonical_json(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)


def sha256(data: Any) -> str:
    return hashlib.sha256(canonical_json(data).encode()).hexdigest()


#: settings of how a run is checked or recorded, not of what it measures (``llm.any_model``: how the
#: preflight reads a model listing; ``llm.transcript*``: what a job keeps of its LLM calls), left out
#: of the hash like the run-local fields
CHECK_FIELDS: dict[str, Any] = {"llm": {"any_model", "transcripts", "transcript_max_chars", "transcript_max_mb"}}


def config_hash(config: RunConfig) -> str:
    """Hash of the resolved config without run-local fields (where/how fast it runs) and without
    the preflight's settings (:data:`CHECK_FIELDS`).  An unset ``race`` is left out, so a config
    without one keeps the hash it had before racing existed; a race changes the hash (which jobs run)."""
    exclude: dict[str, Any] = {**dict.fromkeys(RUN_LOCAL_FIELDS, True), **CHECK_FIELDS}
    if config.race is None:
        exclude["race"] = True
    data = config.model_dump(mode="json", exclude=exclude)
    return sha256(data)


def llm_identity(config: RunConfig) -> LLMIdentity:
    """The LLM identity of the config's jobs (see :class:`~trace_bench.config.identity.LLMIdentity`)."""
    return LLMIdentity.of(config.mode, config.llm)


def job_id(*, task: str, eval_kwargs: dict[str, Any], trainer: str, trainer_kwargs: dict[str, Any],
           optimizer: str | None, optimizer_kwargs: dict[str, Any], seed: int, llm: dict[str, Any]) -> str:
    payload = {"task": task, "eval_kwargs": eval_kwargs, "trainer": trainer, "trainer_kwargs": trainer_kwargs,
               "optimizer": optimizer, "optimizer_kwargs": optimizer_kwargs, "seed": seed, "llm": llm}
    return sha256(payload)[:12]


def arm_job_ids(*, task: str, eval_kwargs: dict[str, Any], trainer: str, trainer_kwargs: dict[str, Any],
                optimizer: str | None, optimizer_kwargs: dict[str, Any], llm: dict[str, Any]) -> Callable[[int], str]:
    """``job_id`` of each seed of one arm, the arm's JSON encoded once: canonical JSON sorts keys,
    and ``seed`` falls between ``optimizer_kwargs`` and ``task``, so a job's text is the arm's
    first half, the seed, the arm's second half (the ids are exactly :func:`job_id`'s)."""
    first = canonical_json({"eval_kwargs": eval_kwargs, "llm": llm, "optimizer": optimizer,
                            "optimizer_kwargs": optimizer_kwargs})[:-1] + ',"seed":'
    second = "," + canonical_json({"task": task, "trainer": trainer, "trainer_kwargs": trainer_kwargs})[1:]

    def for_seed(seed: int) -> str:
        return hashlib.sha256((first + canonical_json(seed) + second).encode()).hexdigest()[:12]
    return for_seed


def new_run_id(config_digest: str) -> str:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    salt = f"{config_digest}|{os.getpid()}|{time.time_ns()}"
    return f"{stamp}-{hashlib.sha256(salt.encode()).hexdigest()[:8]}"
