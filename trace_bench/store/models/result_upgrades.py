"""How a ``results.json`` of an older schema version is read as the current record: each function
takes the file's data at one version and returns it at the next (``JobResult.UPGRADES``).  Kept
apart from the model, whose fields say what a record is now; these say what older files meant.
"""

from __future__ import annotations

from typing import Any

from trace_bench.config.model_names import ROLES
from trace_bench.store.models.spend import CARRIED_COLUMNS, SPEND_COLUMNS, Spend


def test_best_from_test(data: dict[str, Any]) -> dict[str, Any]:
    """Version 3 -> 4: ``score_test`` was already the test score of the best state."""
    return {**data, "score_test_best": data.get("score_test")}


def spec_from_flat(data: dict[str, Any]) -> dict[str, Any]:
    """Version 5 -> 6: the record held its specification's columns at the top level; the embedded
    ``spec`` is rebuilt from them (what they do not say keeps its default: ``budget``, ``index``,
    the raw ``optimizer_kwargs``).  The LLM identity is rebuilt so that it names the same models;
    an empty ``optimizer`` (version 5) was a trainer that uses none."""
    if "spec" in data:
        return data
    mode = str(data.get("mode") or "")
    models = {role: str(data.get(f"model_{role}") or "") for role in ROLES}
    if mode == "real":
        identity: dict[str, Any] = {"mode": "real", "model": data.get("llm_model") or ""}
        identity["roles"] = {role: {"model": model} for role, model in models.items() if model}
    else:
        identity = {"mode": mode or "stub"}
    llm = {"provider": data.get("llm_provider") or None, "base_url": data.get("llm_base_url") or None}
    if mode != "real" and llm["provider"] == "stub":
        llm["provider"] = None
    spec = {"job_id": data.get("job_id"), "task": data.get("task"), "task_label": data.get("task_label") or "",
            "uses_optimizer": data.get("optimizer") != "" if "optimizer" in data else True,
            "suite": data.get("suite") or "",
            "eval_kwargs": data.get("eval_kwargs") or {}, "trainer": data.get("trainer"),
            "params": data.get("params") or {}, "params_label": data.get("params_label") or "default",
            "trainer_kwargs": data.get("resolved_trainer_kwargs") or {}, "optimizer": data.get("optimizer") or None,
            "seed": data.get("seed"), "mode": mode, "llm": llm, "llm_identity": identity,
            "logger": data.get("resolved_logger")}
    return {**data, "spec": spec}


def carried_spend(data: dict[str, Any]) -> dict[str, Any]:
    """Version 6 -> 7: the cost columns counted the last attempt only; a re-run job's
    ``budget_spent`` (its spend plus what earlier attempts spent) gives back the carried part."""
    spent = data.get("budget_spent") or {}
    if int(data.get("attempt") or 1) <= 1 or not isinstance(spent, dict):
        return data
    out = dict(data)
    for figure, column in SPEND_COLUMNS.items():
        own = float(data.get(column) or 0)
        part = max(0.0, float(spent.get(figure) or 0) - own)
        carried = CARRIED_COLUMNS[figure]
        if figure == Spend.COST:
            out[carried], out[column] = round(part, 10), round(own + part, 10)
        else:
            out[carried], out[column] = int(part), int(own + part)
    return out
