"""Sandbox targets of discovery tasks: the evaluator's untrusted half runs here, never in the job.

:func:`run_program` writes the candidate program to a file of the call's private ``/tmp`` and
calls the evaluator's ``run(program_path)`` (split form) or ``evaluate(program_path)`` (plain
form) on it.  The evaluator is a built-in problem module (named by ``module``) or a task folder
whose files travel in the payload and are written next to the program, so an evaluator that
imports its sibling modules or reads its data files finds them.  Whatever comes back is plain
data (:mod:`trace_bench.sandbox.codec`), as untrusted as the candidate that produced it.

This module is the target the sandbox's zygote imports once, before any call: it imports
``numpy.random`` and the built-in problem modules (numpy and our code only) so that a call forks
with them loaded instead of importing them again.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy
import numpy.random  # noqa: F401 - numpy loads it lazily, ~50 ms a call: loaded once in the zygote instead

from trace_bench._util.imports import import_file
from trace_bench.tasks.discovery.problems import (  # noqa: F401 - loaded once in the zygote, see above
    autocorrelation,
    circle_packing,
    erdos_overlap,
    heilbronn,
    kissing,
    min_max_distance,
)

_ARTIFACT_CHARS = 20_000


def load_evaluator(payload: dict[str, Any]) -> Any:
    """The evaluator module a payload names (a module, or a folder's ``entry`` file)."""
    if payload.get("module"):
        return importlib.import_module(str(payload["module"]))
    task_dir = tempfile.mkdtemp(prefix="task_")
    for relative, data in (payload.get("files") or {}).items():
        target = os.path.normpath(os.path.join(task_dir, str(relative)))
        if not target.startswith(task_dir + os.sep):
            raise ValueError(f"task file {relative!r} leaves the task folder")
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as handle:
            handle.write(data if isinstance(data, bytes) else str(data).encode("utf-8"))
    sys.path.insert(0, task_dir)
    os.chdir(task_dir)
    return import_file("evaluator", Path(task_dir, str(payload["entry"])))


def write_program(program: str, suffix: str = ".py") -> str:
    directory = tempfile.mkdtemp(prefix="candidate_")
    path = os.path.join(directory, "program" + (suffix if suffix.startswith(".") and "/" not in suffix else ".py"))
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(program)
    return path


def plain_result(value: Any) -> dict[str, Any]:
    """An evaluator's return value (a dict or an ``EvaluationResult``-like object) as
    ``{"metrics": {...}, "artifacts": {...}}`` of plain values."""
    if hasattr(value, "metrics") and not isinstance(value, dict):
        metrics, artifacts = dict(value.metrics or {}), getattr(value, "artifacts", None)
    elif isinstance(value, dict):
        metrics = {k: v for k, v in value.items() if k != "artifacts"}
        artifacts = value.get("artifacts")
    else:
        raise TypeError(f"evaluate() must return a dict, got {type(value).__name__}")
    kept = {str(k): v for k, v in metrics.items() if isinstance(v, (int, float, str, bool)) or _is_number(v)}
    if isinstance(artifacts, dict):
        texts = {str(k): _text(v) for k, v in artifacts.items()}
    elif artifacts is None:
        texts = {}
    else:
        texts = {"artifacts": _text(artifacts)}
    return {"metrics": kept, "artifacts": texts}


def _is_number(value: Any) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return type(value).__module__ == "numpy"


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return str(value)[:_ARTIFACT_CHARS]


LOAD_ONLY = "__load__"


def run_program(payload: dict[str, Any]) -> Any:
    """Sandbox target: the evaluator's ``function`` on the candidate program (see the module doc);
    ``function`` :data:`LOAD_ONLY` only imports the evaluator (no candidate: a probe of the task)."""
    evaluator = load_evaluator(payload)
    if payload["function"] == LOAD_ONLY:
        return "loaded"
    path = write_program(str(payload["program"]), str(payload.get("suffix") or ".py"))
    random.seed(0)
    numpy.random.seed(0)
    function = getattr(evaluator, str(payload["function"]))
    value = function(path, **dict(payload.get("settings") or {}))
    return plain_result(value) if payload["function"] == "evaluate" else value
