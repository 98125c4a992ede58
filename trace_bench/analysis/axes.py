"""The axes of a run's matrix, so that ``compare`` can enforce "change one axis at a time".

A run is tasks × trainers × params variants × seeds, run in one mode against one LLM.  Each axis is
read from the manifest's expanded job list when both runs have one (it records eval kwargs and the
resolved optimizer), else from results.csv, and the LLM from the manifest, the jobs' LLM identity
or the config snapshot, whichever the run has.  Transport settings (base URL, keys, timeouts,
concurrency, cache) never count: they do not change what the LLM answers.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

AXIS_NAMES = ("llm", "mode", "tasks", "trainers", "params_variants", "seeds")
_LLM_KEYS = ("provider", "model", "temperature")


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _llm_behaviour(block: Any) -> dict[str, Any]:
    """Provider, model and temperature, globally and per role; unset values are left out so that
    "not given" equals "null" across config versions."""
    if not isinstance(block, dict):
        return {}
    out: dict[str, Any] = {k: block[k] for k in _LLM_KEYS if block.get(k) is not None}
    roles = {}
    for role, settings in sorted((block.get("roles") or {}).items()):
        kept = {k: settings[k] for k in _LLM_KEYS if isinstance(settings, dict) and settings.get(k) is not None}
        if kept:
            roles[role] = kept
    if roles:
        out["roles"] = roles
    return out


def _mode(manifest: dict[str, Any], snapshot: dict[str, Any], jobs: pd.DataFrame) -> str:
    if manifest.get("mode"):
        return str(manifest["mode"])
    if snapshot.get("mode"):
        return str(snapshot["mode"])
    modes = sorted({m for m in jobs.get("mode", pd.Series(dtype=str)) if m})
    return ",".join(modes)


def _llm(manifest: dict[str, Any], snapshot: dict[str, Any], jobs: pd.DataFrame) -> str:
    if isinstance(manifest.get("llm"), dict):
        return _canonical(_llm_behaviour(manifest["llm"]))
    identities = {_canonical(_llm_behaviour(j.get("llm_identity"))) for j in manifest.get("jobs") or []
                  if isinstance(j, dict) and isinstance(j.get("llm_identity"), dict)}
    if identities:
        return ",".join(sorted(identities))
    if isinstance(snapshot.get("llm"), dict):
        return _canonical(_llm_behaviour(snapshot["llm"]))
    return ",".join(sorted({m for m in jobs.get("llm_model", pd.Series(dtype=str)) if m}))


def run_condition(manifest: dict[str, Any], snapshot: dict[str, Any], jobs: pd.DataFrame) -> str:
    """The mode and LLM a run's jobs ran under: runs that differ here are different conditions."""
    return f"{_mode(manifest, snapshot, jobs)}|{_llm(manifest, snapshot, jobs)}"


def _cells(manifest: dict[str, Any], jobs: pd.DataFrame, detailed: bool) -> list[dict[str, Any]]:
    if detailed:
        cells = []
        for job in manifest["jobs"]:
            resolved = job.get("resolved") or {}
            cells.append({"task": f"{job.get('task')} {_canonical(job.get('eval_kwargs') or {})}",
                          "trainer": str(job.get("trainer")), "seed": job.get("seed"),
                          "variant": _canonical([job.get("params_label"), job.get("params"),
                                                 resolved.get("optimizer"), resolved.get("optimizer_kwargs")])})
        return cells
    return [{"task": t, "trainer": r, "seed": s, "variant": p}
            for t, r, s, p in zip(jobs["task"], jobs["trainer"], jobs["seed"], jobs["params_label"], strict=True)]


def _has_job_list(manifest: dict[str, Any]) -> bool:
    jobs = manifest.get("jobs")
    return isinstance(jobs, list) and bool(jobs) and all(isinstance(j, dict) and "task" in j for j in jobs)


def differing_axes(a: tuple[dict[str, Any], dict[str, Any], pd.DataFrame],
                   b: tuple[dict[str, Any], dict[str, Any], pd.DataFrame]) -> list[str]:
    """Names of the axes in which two runs differ, each given as (manifest, snapshot, jobs frame).
    The LLM is not compared when either run is in stub mode (stub answers ignore it); variants are
    compared only for trainers both runs have."""
    (manifest_a, snapshot_a, jobs_a), (manifest_b, snapshot_b, jobs_b) = a, b
    detailed = _has_job_list(manifest_a) and _has_job_list(manifest_b)
    cells_a, cells_b = _cells(manifest_a, jobs_a, detailed), _cells(manifest_b, jobs_b, detailed)
    mode_a, mode_b = _mode(manifest_a, snapshot_a, jobs_a), _mode(manifest_b, snapshot_b, jobs_b)
    axes = []
    if "stub" not in (mode_a, mode_b) and _llm(manifest_a, snapshot_a, jobs_a) != _llm(manifest_b, snapshot_b,
                                                                                        jobs_b):
        axes.append("llm")
    if mode_a != mode_b:
        axes.append("mode")
    for name, field in (("tasks", "task"), ("trainers", "trainer"), ("seeds", "seed")):
        if {str(c[field]) for c in cells_a} != {str(c[field]) for c in cells_b}:
            axes.append(name)
    shared = {c["trainer"] for c in cells_a} & {c["trainer"] for c in cells_b}
    variants_a = {(c["trainer"], c["variant"]) for c in cells_a if c["trainer"] in shared}
    variants_b = {(c["trainer"], c["variant"]) for c in cells_b if c["trainer"] in shared}
    if variants_a != variants_b:
        axes.append("params_variants")
    return [name for name in AXIS_NAMES if name in axes]


def budget_note(snapshot_a: dict[str, Any], snapshot_b: dict[str, Any]) -> str | None:
    """A warning (not a refusal) when the budgets differ: scores at different spend are not comparable."""
    budget_a, budget_b = snapshot_a.get("budget"), snapshot_b.get("budget")
    if budget_a is None or budget_b is None or _canonical(budget_a) == _canonical(budget_b):
        return None
    return f"budgets differ ({_canonical(budget_a)} vs {_canonical(budget_b)}): compare at equal spend too"
