"""Trusted sandbox targets used by the sandbox tests: each runs the code it is given."""

from __future__ import annotations

import os
from typing import Any


def echo(payload: Any) -> Any:
    return payload


def run_code(payload: dict[str, Any]) -> Any:
    """Execute ``payload["code"]`` (with ``payload`` in scope) and return its ``result`` variable."""
    namespace: dict[str, Any] = {"payload": payload}
    exec(payload["code"], namespace)
    return namespace.get("result")


def not_plain_data(payload: Any) -> Any:
    return lambda: None


def where_am_i(payload: Any) -> dict[str, Any]:
    with open("scratch.txt", "w") as fh:  # the private working directory: allowed
        fh.write("ok")
    return {"cwd": os.getcwd(), "pid": os.getpid(), "uid": os.getuid(), "tmp": sorted(os.listdir("/tmp")),
            "netns": os.readlink("/proc/self/ns/net"), "processes": sorted(p for p in os.listdir("/proc") if p.isdigit())}


def sandbox_from_child(code: str) -> tuple[str, Any]:
    """Run in a multiprocessing child: call the sandbox from there and report the outcome."""
    from trace_bench.sandbox import SandboxLimits, run_sandboxed

    result = run_sandboxed("tests.sandbox.targets:run_code", {"code": code}, SandboxLimits(wall_s=20))
    return result.status, result.value
