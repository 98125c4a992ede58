"""Sandbox target of discovery tasks: the evaluator's untrusted half runs here, never in the job.

:func:`run_program` writes the candidate program to a file of the call's private ``/tmp`` and
calls the evaluator on it by its layout's protocol (:mod:`.protocols`): ``run(program_path)``
(split form: plain data back, scored in the job), ``evaluate(program_path)`` with OpenEvolve's
cascade, the containerized layout's entry point as a script, or ShinkaEvolve's ``main``.  The
evaluator is a built-in problem module (named by ``module``) or a task folder whose files travel in
the payload and are written out first, so an evaluator that imports its sibling modules, reads its
data files or its own config finds them (a containerized folder's also at ``/benchmark``, its
Docker working directory, under bubblewrap).  Randomness is seeded (:mod:`.seeding`); an evaluator
that calls an LLM gets an endpoint on the sandbox's loopback (:mod:`.llm_endpoint`).  Whatever
comes back is plain data, as untrusted as the candidate that produced it.

This module is the target the sandbox's zygote imports once, before any call: it imports
``numpy.random`` and the built-in problem modules (numpy and our code only) so that a call forks
with them loaded instead of importing them again.
"""

from __future__ import annotations

import importlib
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy
import numpy.random  # noqa: F401 - numpy loads it lazily, ~50 ms a call: loaded once in the zygote instead

from trace_bench._util.imports import import_file
from trace_bench.tasks.discovery import llm_endpoint, peer_results, protocols, seeding
from trace_bench.tasks.discovery.problems import (  # noqa: F401 - loaded once in the zygote, see above
    autocorrelation,
    circle_packing,
    erdos_overlap,
    heilbronn,
    kissing,
    min_max_distance,
)

LOAD_ONLY = "__load__"
CONTAINER_LINK = "/tmp/benchmark"  # shown at /benchmark under bubblewrap (trace_bench.sandbox.policy)
plain_result = protocols.plain_result


def _write_files(task_dir: str, files: dict[str, Any]) -> None:
    for relative, data in files.items():
        target = os.path.normpath(os.path.join(task_dir, str(relative)))
        if not target.startswith(task_dir + os.sep):
            raise ValueError(f"task file {relative!r} leaves the task folder")
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as handle:
            handle.write(data if isinstance(data, bytes) else str(data).encode("utf-8"))


def _prepare(payload: dict[str, Any]) -> str:
    """Write the folder, enter its working directory, seed, and open the LLM endpoint if asked;
    returns the working directory."""
    task_dir = _directory("task")
    _write_files(task_dir, payload.get("files") or {})
    workdir = os.path.join(task_dir, str(payload.get("workdir") or ""))
    if payload.get("container") and os.path.islink("/benchmark") and not os.path.lexists(CONTAINER_LINK):
        os.symlink(workdir, CONTAINER_LINK)
    for directory in dict.fromkeys([workdir, task_dir]):
        sys.path.insert(0, directory)
    os.chdir(workdir)
    seeding.seed_children(_directory("seed"))
    llm = payload.get("llm")
    if isinstance(llm, dict):
        channels = payload.get("channels") or []
        base_url = llm_endpoint.open_endpoint(int(channels[0])) if channels else "http://127.0.0.1:9/v1"
        llm_endpoint.environment(base_url, str(llm.get("key") or ""))
        llm_endpoint.point_configs([os.path.join(task_dir, str(p)) for p in llm.get("configs") or []], base_url,
                                   str(llm.get("key") or ""))
    peer_results.install([str(name) for name in payload.get("lean") or []])
    seeding.seed_process()
    return task_dir


def load_evaluator(payload: dict[str, Any], task_dir: str) -> Any:
    """The evaluator module a payload names (a module, or a folder's ``entry`` file)."""
    if payload.get("module"):
        return importlib.import_module(str(payload["module"]))
    return import_file("evaluator", Path(task_dir, str(payload["entry"])))


def _directory(name: str) -> str:
    """``/tmp/<name>`` where each call has a private ``/tmp`` (bubblewrap, which also shows
    ``/benchmark``), so paths in tracebacks and artifacts read the same in every run; a fresh
    temporary directory elsewhere (the weak mode's calls share ``/tmp``)."""
    if os.path.islink("/benchmark") and not os.path.lexists(f"/tmp/{name}"):
        os.makedirs(f"/tmp/{name}")
        return f"/tmp/{name}"
    return tempfile.mkdtemp(prefix=f"{name}_")


def write_program(program: str, suffix: str = ".py") -> str:
    directory = _directory("candidate")
    path = os.path.join(directory, "program" + (suffix if suffix.startswith(".") and "/" not in suffix else ".py"))
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(program)
    return path


def run_program(payload: dict[str, Any]) -> Any:
    """Sandbox target: the evaluator on the candidate program (see the module doc); ``function``
    :data:`LOAD_ONLY` only imports the evaluator (no candidate: a probe of the task)."""
    if payload.get("module"):
        evaluator = load_evaluator(payload, "")
        if payload["function"] == LOAD_ONLY:
            return "loaded"
        path = write_program(str(payload["program"]), str(payload.get("suffix") or ".py"))
        seeding.seed_process()
        return getattr(evaluator, str(payload["function"]))(path, **dict(payload.get("settings") or {}))
    task_dir = _prepare(payload)
    protocol = str(payload.get("protocol") or "evaluate")
    if protocol == "script" and payload["function"] != LOAD_ONLY:
        path = write_program(str(payload["program"]), str(payload.get("suffix") or ".py"))
        return protocols.run_script(os.path.join(task_dir, str(payload["entry"])), path, payload)
    evaluator = load_evaluator(payload, task_dir)
    if payload["function"] == LOAD_ONLY:
        return "loaded"
    path = write_program(str(payload["program"]), str(payload.get("suffix") or ".py"))
    if protocol == "split":
        return evaluator.run(path, **dict(payload.get("settings") or {}))
    if protocol == "main":
        return protocols.run_main(evaluator, path, payload)
    return protocols.run_evaluate(evaluator, path, payload)
