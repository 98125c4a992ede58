"""What candidates output: the text of every finished call that ran candidate code, told to whoever listens.

A call's output is what its code printed (the tail the sandbox keeps) and the strings in the plain
data it returned.  A checker's call (which runs no candidate code and returns the trusted verdict)
tells nothing.  The job's audit listens and searches this text for held-out items, decoded as well
(:mod:`trace_bench.integrity`): a candidate that prints or returns hidden answers, plainly or
encoded, is found there even when its state holds none.  Each call tells at most
:data:`MAX_CALL_CHARS` characters.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

MAX_CALL_CHARS = 64_000
MAX_STRINGS = 2_000

Listener = Callable[[str, str], None]  # (target, text)
_LOCK = threading.Lock()
_LISTENERS: list[Listener] = []


def _strings(value: Any, budget: int) -> list[str]:
    """Strings inside a plain-data value (keys, items), depth first, within ``budget`` characters."""
    found: list[str] = []
    stack = [value]
    while stack and budget > 0 and len(found) < MAX_STRINGS:
        item = stack.pop()
        if isinstance(item, str):
            found.append(item[:budget])
            budget -= len(found[-1])
        elif isinstance(item, bytes):
            found.append(item[:budget].decode("utf-8", "replace"))
            budget -= len(found[-1])
        elif isinstance(item, Mapping):
            stack.extend(v for pair in item.items() for v in pair)
        elif isinstance(item, (list, tuple, set, frozenset)):
            stack.extend(item)
    return found


def text_of(result: Any) -> str:
    """The output of one call: its output tail and the strings of its value, bounded."""
    parts = [str(getattr(result, "stdout", "") or "")[:MAX_CALL_CHARS]]
    if getattr(result, "ok", False):
        parts += _strings(getattr(result, "value", None), MAX_CALL_CHARS - len(parts[0]))
    return "\n".join(part for part in parts if part)[:MAX_CALL_CHARS]


def note(target: str, result: Any) -> None:
    """Tell every listener what a call that ran candidate code output (a listener's error is its own)."""
    with _LOCK:
        listeners = list(_LISTENERS)
    if not listeners:
        return
    text = text_of(result)
    if not text.strip():
        return
    for listener in listeners:
        try:
            listener(target, text)
        except Exception:  # noqa: BLE001, S110 - an audit must never change a call's outcome
            pass


def listen(listener: Listener) -> Callable[[], None]:
    """Call ``listener`` with every call's output from now on; returns the function that stops it."""
    with _LOCK:
        _LISTENERS.append(listener)

    def stop() -> None:
        with _LOCK:
            if listener in _LISTENERS:
                _LISTENERS.remove(listener)

    return stop
