"""What runs inside a sandbox child: set up limits, call the trusted target, send back one result.

The target (``package.module:function``) is our own evaluator; it receives the payload (which
usually carries LLM-written source that the evaluator ``exec``s) and returns a picklable value.
Everything the child says goes back as one length-prefixed pickle on a pipe; output printed by
the candidate is kept as a bounded tail, and also written (up to a cap) to a file in the
sandbox directory so the parent can show it when the child dies without a result.
"""

from __future__ import annotations

import importlib
import io
import os
import pickle
import signal
import struct
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from typing import Any

from trace_bench.sandbox.guard import SandboxDenied, apply_rlimits, install_policy
from trace_bench.sandbox.limits import STDOUT_TAIL_CHARS, tail

OUTPUT_FILE = ".sandbox-output"
HEADER = struct.Struct(">Q")
_MAX_MESSAGE = 2000
_MAX_TRACEBACK = 8000


class TailWriter(io.TextIOBase):
    """``sys.stdout``/``sys.stderr`` of the child: keeps the last few KB, mirrors a capped prefix to a file."""

    def __init__(self, fd: int, cap_bytes: int) -> None:
        self._fd = fd
        self._cap = cap_bytes
        self._written = 0
        self._tail = ""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:  # type: ignore[override]
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self._tail = (self._tail + text)[-2 * STDOUT_TAIL_CHARS:]
        if self._written < self._cap and text:
            data = text.encode("utf-8", "replace")[: self._cap - self._written]
            try:
                os.write(self._fd, data)
                self._written += len(data)
            except OSError:
                self._written = self._cap
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def getvalue(self) -> str:
        return tail(self._tail)


def _redirect_output(workdir: str, cap_bytes: int) -> TailWriter:
    fd = os.open(os.path.join(workdir, OUTPUT_FILE), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(null)
    os.close(fd)
    writer = TailWriter(1, cap_bytes)
    sys.stdout = sys.stderr = writer
    sys.stdin = io.StringIO()
    return writer


def _was_denied(exc: BaseException) -> bool:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, SandboxDenied):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def ping(payload: Any) -> Any:
    """A target that returns its payload: health checks and overhead measurements."""
    return payload


def resolve_target(target: str) -> Callable[[Any], Any]:
    module_name, sep, func_name = target.partition(":")
    if not sep or not module_name or not func_name:
        raise ValueError(f"sandbox target must look like 'package.module:function', got {target!r}")
    func = getattr(importlib.import_module(module_name), func_name)
    if not callable(func):
        raise TypeError(f"sandbox target {target!r} is not callable")
    return func


def encode(outcome: dict[str, Any]) -> bytes:
    """Pickle an outcome; an unpicklable value becomes an ``error`` outcome instead."""
    try:
        body = pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # the evaluator returned something that cannot cross processes
        fallback = {key: outcome.get(key) for key in ("stdout", "denied_actions", "wall_s")}
        fallback.update(status="error", value=None, error_type=type(exc).__name__,
                        message=f"the evaluator's return value cannot be pickled: {exc}"[:_MAX_MESSAGE],
                        traceback="")
        body = pickle.dumps(fallback, protocol=pickle.HIGHEST_PROTOCOL)
    return HEADER.pack(len(body)) + body


def run_child(request: dict[str, Any], send: Callable[[bytes], None]) -> None:
    """Run one request in this (already separate) process and send its outcome."""
    started = time.perf_counter()
    denied: list[str] = []
    writer: TailWriter | None = None
    limits: dict[str, Any] = request["limits"]
    workdir: str = request["workdir"]
    outcome: dict[str, Any]
    try:
        os.chdir(workdir)
        writer = _redirect_output(workdir, min(1 << 20, int(limits["file_size_mb"]) << 19))
        os.environ["TMPDIR"] = workdir
        tempfile.tempdir = workdir
        sys.dont_write_bytecode = True
        if hasattr(signal, "SIGXFSZ"):  # an oversized write raises OSError instead of killing us
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        if request.get("sys_path"):  # the caller's import path now, not the one the zygote started with
            sys.path[:] = list(request["sys_path"])
        func = resolve_target(request["target"])
        apply_rlimits(limits["memory_mb"], limits["cpu_s"], limits["file_size_mb"], limits["max_processes"])
        install_policy(workdir, network=bool(limits["network"]), max_processes=int(limits["max_processes"]),
                       record=lambda what: denied.append(what) if len(denied) < 20 else None)
        value = func(pickle.loads(request["payload_pickle"]))
        outcome = {"status": "ok", "value": value, "error_type": None, "message": "", "traceback": ""}
    except MemoryError as exc:
        outcome = {"status": "oom", "value": None, "error_type": "MemoryError",
                   "message": (str(exc) or "out of memory")[:_MAX_MESSAGE], "traceback": ""}
    except BaseException as exc:  # the candidate may raise anything, SystemExit included
        outcome = {"status": "denied" if _was_denied(exc) else "error", "value": None,
                   "error_type": type(exc).__name__, "message": str(exc)[:_MAX_MESSAGE],
                   "traceback": tail(traceback.format_exc(), _MAX_TRACEBACK)}
    outcome["stdout"] = writer.getvalue() if writer is not None else ""
    outcome["denied_actions"] = denied[:20]
    outcome["wall_s"] = time.perf_counter() - started
    send(encode(outcome))


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def fork_entry(request: dict[str, Any], result_fd: int) -> None:
    """Body of a forked child (zygote or direct fork): run, send, and leave without cleanup."""
    code = 0
    try:
        run_child(request, lambda data: write_all(result_fd, data))
    except BaseException:  # nothing may escape into the forking process's code
        code = 70
    finally:
        os._exit(code)


def spawn_entry(request: dict[str, Any], conn: Any) -> None:
    """Body of a ``spawn`` child (platforms without fork)."""
    run_child(request, conn.send_bytes)
    conn.close()
