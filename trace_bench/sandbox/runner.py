"""``run_sandboxed``: run a trusted evaluator on untrusted input in a disposable child process.

Modes (``TRACE_BENCH_SANDBOX_MODE`` forces one, for debugging and tests):

- ``zygote`` (default on POSIX): children are forked from a small warm template process
  (:mod:`trace_bench.sandbox.zygote`); a few ms per call.
- ``fork``: the caller forks itself; used when the zygote cannot start.  Same protections,
  but the child is a copy of the caller (bigger, and it sees the caller's memory).
- ``spawn`` (platforms without fork, e.g. Windows): a fresh interpreter per call via
  ``multiprocessing``; slow, and without rlimits, process groups or network namespaces.

Linux gets every protection; other POSIX systems lack network namespaces.  The parent is
never affected by what the child does: it only reads one framed result from a pipe, kills the
child's process group on timeout, and removes the child's temporary directory afterwards.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import asdict
from typing import Any

from trace_bench.processes import die_with_parent, kill_process_group
from trace_bench.sandbox import server
from trace_bench.sandbox.child import HEADER, OUTPUT_FILE, fork_entry, spawn_entry
from trace_bench.sandbox.guard import isolate_network
from trace_bench.sandbox.limits import SandboxLimits, SandboxResult, tail
from trace_bench.sandbox.zygote import STATUS

MODE_ENV = "TRACE_BENCH_SANDBOX_MODE"
_STATUS_WAIT_S = 5.0
_DEFAULT_LIMITS = SandboxLimits()


def sandbox_mode() -> str:
    forced = os.environ.get(MODE_ENV, "").strip().lower()
    if forced in ("zygote", "fork", "spawn"):
        return forced
    return "zygote" if hasattr(os, "fork") and hasattr(os, "killpg") else "spawn"


def _read_until(fd: int, deadline: float | None) -> tuple[bytes, bool]:
    """Read ``fd`` to EOF; returns (data, timed_out)."""
    chunks: list[bytes] = []
    poller = select.poll() if hasattr(select, "poll") else None
    if poller is not None:
        poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
    while True:
        remaining = None if deadline is None else deadline - time.monotonic()
        if remaining is not None and remaining <= 0:
            return b"".join(chunks), True
        if poller is not None:
            ready = poller.poll(None if remaining is None else max(1, int(remaining * 1000)))
        else:  # pragma: no cover - no poll()
            ready = select.select([fd], [], [], remaining)[0]
        if not ready:
            continue
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks), False
        chunks.append(chunk)


def _decode(data: bytes) -> dict[str, Any] | None:
    if len(data) < HEADER.size:
        return None
    (length,) = HEADER.unpack(data[: HEADER.size])
    if len(data) - HEADER.size != length:
        return None
    try:
        outcome = pickle.loads(data[HEADER.size:])
    except Exception:
        return None
    return outcome if isinstance(outcome, dict) and "status" in outcome else None


def _output_tail(workdir: str) -> str:
    try:
        with open(os.path.join(workdir, OUTPUT_FILE), "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 8000))
            return tail(fh.read().decode("utf-8", "replace"))
    except OSError:
        return ""


def _classify(status: int | None, cpu_s: float, limits: SandboxLimits) -> tuple[str, str | None, str]:
    """(status, error_type, message) for a child that ended without sending a result."""
    if status is None or not hasattr(os, "WIFSIGNALED"):
        return "crash", None, "the sandbox child ended without a result"
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        if sig == getattr(signal, "SIGXCPU", -1) or (sig == signal.SIGKILL and cpu_s >= limits.effective_cpu_s):
            return "timeout", None, f"CPU time limit of {limits.effective_cpu_s:g}s exceeded"
        if sig == signal.SIGKILL:
            return "oom", None, "killed by SIGKILL (most likely the out-of-memory killer)"
        return "crash", None, f"the sandbox child died from signal {name}"
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else status
    return "crash", None, f"the sandbox child exited with code {code} without a result"


def run_sandboxed(target: str, payload: dict[str, Any], limits: SandboxLimits = _DEFAULT_LIMITS) -> SandboxResult:
    """Run ``target(payload)`` (``"package.module:function"``, our trusted code) in a sandbox child.

    The payload must be picklable; the function's return value comes back in ``result.value``.
    Never raises for anything the child does; raises ``ValueError``/``TypeError`` for a
    malformed target or an unpicklable payload (caller bugs).
    """
    if not isinstance(target, str) or target.count(":") != 1 or not all(target.split(":")):
        raise ValueError(f"sandbox target must look like 'package.module:function', got {target!r}")
    try:  # the payload travels as opaque bytes: only the child, on the caller's import path, unpickles it
        blob = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:
        raise TypeError(f"sandbox payload cannot be pickled: {exc}") from exc
    started = time.monotonic()
    workdir = tempfile.mkdtemp(prefix="trace-bench-sandbox-")
    request = {"target": target, "payload_pickle": blob, "workdir": workdir,
               "sys_path": [p for p in sys.path if isinstance(p, str)],
               "limits": {**asdict(limits), "cpu_s": limits.effective_cpu_s}}
    try:
        body = pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL)
        mode = sandbox_mode()
        if mode == "spawn":
            result = _run_spawn(request, limits, started)
        else:
            result = None
            if mode == "zygote":
                with contextlib.suppress(server.ZygoteUnavailable):
                    result = _run_forked(request, body, limits, started, use_zygote=True)
            if result is None:
                try:
                    result = _run_forked(request, body, limits, started, use_zygote=False)
                except OSError as exc:  # fork itself failed (process table full, out of memory)
                    result = SandboxResult("crash", error_type=type(exc).__name__,
                                           message=f"could not start a sandbox child: {exc}")
        if not result.stdout:
            result.stdout = _output_tail(workdir)
        result.wall_s = time.monotonic() - started
        return result
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _launch_zygote(body: bytes, result_w: int, status_w: int, network: bool) -> int:
    for attempt in range(2):  # a zygote that died (e.g. killed from outside) is restarted once
        handle = server.get_zygote(network)
        try:
            return handle.launch(body, [result_w, status_w])
        except server.ZygoteUnavailable:
            server.discard(handle)
            if attempt:
                raise
    raise server.ZygoteUnavailable("unreachable")  # pragma: no cover


def _fork_child(request: dict[str, Any], result_w: int, network: bool) -> int:
    env = server.zygote_environment()
    pid = os.fork()
    if pid == 0:
        try:
            os.environ.clear()  # no API keys or tokens for the candidate, as with the zygote
            os.environ.update(env)
            os.setpgid(0, 0)
            die_with_parent()
            if not network:
                isolate_network()
            os.closerange(3, result_w)
            os.closerange(result_w + 1, max(1 << 16, os.sysconf("SC_OPEN_MAX")))
        except BaseException:
            os._exit(71)
        fork_entry(request, result_w)
    with contextlib.suppress(OSError):
        os.setpgid(pid, pid)
    return pid


def _run_forked(request: dict[str, Any], body: bytes, limits: SandboxLimits, started: float,
                *, use_zygote: bool) -> SandboxResult:
    result_r, result_w = os.pipe()
    status_r, status_w = os.pipe() if use_zygote else (-1, -1)
    pid = -1
    try:
        if use_zygote:
            pid = _launch_zygote(body, result_w, status_w, limits.network)
        else:
            pid = _fork_child(request, result_w, limits.network)
    finally:
        os.close(result_w)
        if status_w >= 0:
            os.close(status_w)
        if pid < 0:
            os.close(result_r)
            if status_r >= 0:
                os.close(status_r)
    deadline = started + limits.wall_s
    wait_status: int | None = None
    cpu_s = 0.0
    try:
        data, timed_out = _read_until(result_r, deadline)
        outcome = None if timed_out else _decode(data)
        if outcome is not None and status_r < 0:
            wait_status, cpu_s, _ = _wait_exit(pid, status_r, None)  # reap our own child; it is exiting
        elif outcome is None:
            if not timed_out:  # EOF without a result: dying, or it closed the pipe and kept running
                wait_status, cpu_s, timed_out = _wait_exit(pid, status_r, deadline)
            if timed_out:
                kill_process_group(pid)
                _wait_exit(pid, status_r, time.monotonic() + _STATUS_WAIT_S)  # gone before its dir is removed
    finally:
        os.close(result_r)
        if status_r >= 0:
            os.close(status_r)
    if timed_out:
        return SandboxResult("timeout", message=f"wall-clock limit of {limits.wall_s:g}s exceeded")
    if outcome is None:
        status, error_type, message = _classify(wait_status, cpu_s, limits)
        return SandboxResult(status, error_type=error_type, message=message)  # type: ignore[arg-type]
    return _from_outcome(outcome)


def _wait_exit(pid: int, status_r: int, deadline: float | None) -> tuple[int | None, float, bool]:
    """(wait status, CPU seconds, still running at the deadline) of a sandbox child.

    A zygote child's status arrives on ``status_r``; our own forked child (``status_r < 0``) is
    reaped here, polling only when a deadline is given (the rare path: no result came).
    """
    if status_r >= 0:
        data, timed_out = _read_until(status_r, deadline)
        if len(data) < STATUS.size:
            return None, 0.0, timed_out
        status, cpu_s = STATUS.unpack(data[: STATUS.size])
        return status, cpu_s, False
    while True:
        done, status, usage = os.wait4(pid, 0 if deadline is None else os.WNOHANG)
        if done == pid:
            return status, usage.ru_utime + usage.ru_stime, False
        if deadline is not None and time.monotonic() >= deadline:
            return None, 0.0, True
        time.sleep(0.005)


def _from_outcome(outcome: dict[str, Any]) -> SandboxResult:
    return SandboxResult(
        status=outcome.get("status", "crash"), value=outcome.get("value"), error_type=outcome.get("error_type"),
        message=str(outcome.get("message") or ""), traceback=str(outcome.get("traceback") or ""),
        stdout=str(outcome.get("stdout") or ""), denied_actions=list(outcome.get("denied_actions") or []),
    )


def _run_spawn(request: dict[str, Any], limits: SandboxLimits, started: float) -> SandboxResult:
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=spawn_entry, args=(request, sender), daemon=True)
    process.start()
    sender.close()
    try:
        remaining = max(0.0, started + limits.wall_s - time.monotonic())
        if not receiver.poll(remaining):
            if process.is_alive():
                process.kill()
                process.join(_STATUS_WAIT_S)
                return SandboxResult("timeout", message=f"wall-clock limit of {limits.wall_s:g}s exceeded")
        try:
            outcome = _decode(receiver.recv_bytes())
        except (EOFError, OSError):
            outcome = None
    finally:
        receiver.close()
    process.join(_STATUS_WAIT_S)
    if outcome is None:
        code = process.exitcode
        status = None if code is None else (-code if code < 0 else code << 8)  # as a POSIX wait status
        verdict, error_type, message = _classify(status, 0.0, limits)
        return SandboxResult(verdict, error_type=error_type, message=message)  # type: ignore[arg-type]
    return _from_outcome(outcome)


def capabilities() -> dict[str, Any]:
    """Which protections this platform gives (starts the zygote to find out about namespaces)."""
    mode = sandbox_mode()
    info: dict[str, Any] = {"mode": mode, "process_group_kill": mode != "spawn", "audit_hook": True,
                            "rlimits": mode != "spawn", "network_namespace": False}
    if mode == "zygote":
        with contextlib.suppress(server.ZygoteUnavailable):
            info["network_namespace"] = bool(server.get_zygote(False).info.get("network_namespace"))
    return info


def warm_up() -> None:
    """Start the zygote now (e.g. while a job builds its problem), not on the first evaluation."""
    if sandbox_mode() == "zygote":
        with contextlib.suppress(server.ZygoteUnavailable):
            server.get_zygote(False)
