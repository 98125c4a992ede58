"""Trusted sandbox targets used by the sandbox tests: each runs the code it is given."""

from __future__ import annotations

import os
from typing import Any


def echo(payload: dict[str, Any]) -> Any:
    return payload


def run_code(payload: dict[str, Any]) -> Any:
    """Execute ``payload["code"]`` and return the value of its ``result`` variable, if any."""
    namespace: dict[str, Any] = {"payload": payload}
    exec(payload["code"], namespace)
    return namespace.get("result")


def unpicklable(payload: dict[str, Any]) -> Any:
    return lambda: None


def where_am_i(payload: dict[str, Any]) -> dict[str, Any]:
    with open("scratch.txt", "w") as fh:  # the temporary working directory: allowed
        fh.write("ok")
    return {"cwd": os.getcwd(), "netns": os.readlink("/proc/self/ns/net") if os.path.exists("/proc/self/ns/net")
            else None, "pid": os.getpid()}


def sandbox_from_child(code: str) -> tuple[str, Any]:
    """Run in a multiprocessing child: call the sandbox from there and report the outcome."""
    from trace_bench.sandbox import SandboxLimits, run_sandboxed

    result = run_sandboxed("tests.sandbox.targets:run_code", {"code": code}, SandboxLimits(wall_s=5))
    return result.status, result.value
