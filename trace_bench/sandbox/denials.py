"""Reward-hacking signals: every sandboxed call that ran into a boundary, told to whoever listens.

A candidate that tries to escape (a write outside its directory, a socket, a new process, a
forged result frame) or that runs past its limits leaves a trace here as the call ends: its *kind*
(``SandboxResult.denial`` where the sandbox names it; otherwise read from the call's status), the
target, and whether the code caught the refusal itself.  Refused system calls (sockets, processes,
SysV IPC, any call the seccomp filter refuses) are counted from the sandbox's own record
(``SandboxResult.refused``, kept by the call's supervisor), so a refusal the code catches and hides
is counted too.  So are, in the strong mode, writes outside the call's writable directories
(``SandboxResult.write_attempts``: each was on the supervisor's record before the kernel refused it,
:mod:`.attempts`), and a result whose record the code closed or tampered with.  In the weak mode, the audit hook's
``denied_actions`` add what it refused.  The job process subscribes (:func:`listen`) and writes each one to its
``events.jsonl``; :func:`counts` gives this process's totals per kind for its record.  Nothing here
changes what a call returns.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: what a refusal the code caught is about, by words of the audit hook's description
_CAUGHT_KINDS = (("network", "network"), ("socket", "network"), ("process", "process"), ("writing", "file"),
                 (" on ", "file"))
#: a status without a typed denial: the boundary it means
_STATUS_KINDS = {"timeout": "timeout", "oom": "memory", "denied": "syscall"}
_ERROR_KINDS = {"CorruptResult": "forged_result", "ResultTooLarge": "result_too_large"}
DETAIL_CHARS = 300


@dataclass(frozen=True)
class Denial:
    """One boundary a call ran into."""

    kind: str
    target: str
    status: str
    caught: bool
    detail: str
    count: int = 1


_LOCK = threading.Lock()
_COUNTS: Counter[str] = Counter()
_LISTENERS: list[Callable[[Denial], None]] = []


def kind_of(result: Any) -> str | None:
    """The boundary a :class:`~trace_bench.sandbox.limits.SandboxResult` ran into, or None: its typed
    ``denial`` where it has one, else what its status and error type mean."""
    typed = getattr(result, "denial", None)
    if typed:
        return str(typed)
    status = str(getattr(result, "status", ""))
    if status in _STATUS_KINDS:
        return _STATUS_KINDS[status]
    if status == "error":
        return _ERROR_KINDS.get(str(getattr(result, "error_type", "") or ""))
    return None


def caught_kind(action: str) -> str:
    lowered = f" {action.lower()} "
    return next((kind for word, kind in _CAUGHT_KINDS if word in lowered), "syscall")


def _recorded(result: Any) -> dict[str, dict[str, int]]:
    """The supervisor's record of refused system calls, by denial kind, then by name."""
    from trace_bench.sandbox.refusals import kind_of as refusal_kind

    grouped: dict[str, dict[str, int]] = {}
    for name, count in (getattr(result, "refused", None) or {}).items():
        grouped.setdefault(refusal_kind(str(name)), {})[str(name)] = int(count)
    return grouped


def denials_of(target: str, result: Any) -> list[Denial]:
    """The denials one call's result records: the one that ended it, and each refusal it caught (one
    entry per kind of refused system call, with its count)."""
    status = str(getattr(result, "status", ""))
    found = []
    kind = kind_of(result)
    recorded = _recorded(result)
    if kind is not None:
        detail = f"{getattr(result, 'error_type', '') or ''}: {getattr(result, 'message', '') or ''}".strip(": ")
        found.append(Denial(kind, target, status, False, detail[:DETAIL_CHARS]))
    for refused_kind, names in sorted(recorded.items()):
        count = sum(names.values()) - (1 if refused_kind == kind and status == "denied" else 0)
        if count > 0:  # the refusal that ended the call is in the record too, and counted above
            listed = ", ".join(f"{name} x{n}" for name, n in sorted(names.items()))
            found.append(Denial(refused_kind, target, status, True, f"refused by seccomp: {listed}"[:DETAIL_CHARS],
                                count))
    found.extend(_writes(target, result, status, kind))
    for action in getattr(result, "denied_actions", None) or []:
        found.append(Denial(caught_kind(str(action)), target, status, True, str(action)[:DETAIL_CHARS]))
    return found


def _writes(target: str, result: Any, status: str, kind: str | None) -> list[Denial]:
    """The supervisor's record of writes outside the call's directories (strong mode), as file denials."""
    found = []
    attempts = int(getattr(result, "write_attempts", 0) or 0)
    count = attempts - (1 if kind == "file" and status == "denied" else 0)  # the uncaught one is counted above
    if count > 0:
        paths = ", ".join(getattr(result, "write_attempt_paths", None) or [])
        found.append(Denial("file", target, status, True, f"writes outside the sandbox directory x{attempts}: "
                            f"{paths}"[:DETAIL_CHARS], count))
    if getattr(result, "write_record_closed", False):
        found.append(Denial("file", target, status, True, "the code closed (or tampered with) the sandbox's "
                            "record of its writes: later attempts went unrecorded"))
    return found


def note(target: str, result: Any) -> None:
    """Record the denials of one finished call and tell every listener (a listener's error is its
    own: it never reaches the caller of the sandbox)."""
    found = denials_of(target, result)
    if not found:
        return
    with _LOCK:
        for denial in found:
            _COUNTS[denial.kind] += denial.count
        listeners = list(_LISTENERS)
    for denial in found:
        for listener in listeners:
            try:
                listener(denial)
            except Exception:  # noqa: BLE001, S110 - an audit must never change a call's outcome
                pass


def listen(listener: Callable[[Denial], None]) -> Callable[[], None]:
    """Call ``listener`` with every denial from now on; returns the function that stops it."""
    with _LOCK:
        _LISTENERS.append(listener)

    def stop() -> None:
        with _LOCK:
            if listener in _LISTENERS:
                _LISTENERS.remove(listener)

    return stop


def counts() -> dict[str, int]:
    """Denials per kind in this process so far (a job process runs one job)."""
    with _LOCK:
        return dict(sorted(_COUNTS.items()))
