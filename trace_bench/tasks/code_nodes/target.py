"""Sandbox target: define one trainable function from its source and call it on plain data.

Runs inside the sandbox (:func:`trace_bench.sandbox.run_sandboxed`), once per call of a trainable
code node whose code an optimizer wrote.  It imports nothing of opto or of the task: the function
gets its arguments, Python's builtins, what the sandbox can import, the plain-data globals and
modules the task author's own version of the function used, and, for a method, a stand-in
``self`` that has no attributes.  Everything it returns is a small dict of plain data; the job
decides what it means (:mod:`.execution`).
"""

from __future__ import annotations

import builtins
import importlib
import linecache
import random
import sys
import traceback
import types
from typing import Any

from trace_bench.sandbox import codec

CODE_FILE = "<trainable code>"
_MESSAGE_CHARS = 2000
_TRACEBACK_CHARS = 4000
SELF_HINT = ("trainable code runs in the sandbox, where `self` has no attributes; the function may use only its "
             "arguments, Python's builtins and modules it imports")
NAME_HINT = ("trainable code runs in the sandbox: it sees its arguments, builtins, the modules it imports and the "
             "plain-data globals the task's original function used; define helpers inside the function")


class SandboxedSelf:
    """What ``self`` is inside the sandbox: any attribute is an ``AttributeError`` that says why."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"self.{name} is not available: {SELF_HINT}")

    def __repr__(self) -> str:
        return "<self (no attributes in the sandbox)>"


def _line(exc: BaseException) -> int | None:
    if isinstance(exc, SyntaxError) and exc.filename == CODE_FILE:
        return exc.lineno
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == CODE_FILE:
            line = frame.lineno
    return line


def _failure(kind: str, exc: BaseException) -> dict[str, Any]:
    message = str(exc)
    if isinstance(exc, NameError):
        message = f"{message} ({NAME_HINT})"
    frames = [frame for frame in traceback.extract_tb(exc.__traceback__) if frame.filename == CODE_FILE]
    text = "".join(traceback.format_list(frames)) + "".join(traceback.format_exception_only(type(exc), exc))
    return {"kind": kind, "error_type": type(exc).__name__, "message": message[:_MESSAGE_CHARS],
            "line": _line(exc), "traceback": text[-_TRACEBACK_CHARS:]}


def _names(code: Any) -> set[str]:
    names = set(code.co_names)
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            names |= _names(constant)
    return names


def _namespace(payload: dict[str, Any], used: set[str]) -> dict[str, Any]:
    """Builtins, the globals sent along, and the modules of the task's scope that the code names
    (imported only then: importing a large package the code never uses would cost every call)."""
    namespace: dict[str, Any] = {"__name__": "__trainable__", "__builtins__": builtins}
    for alias, module in dict(payload.get("modules") or {}).items():
        if alias not in used:
            continue
        try:
            namespace[str(alias)] = importlib.import_module(str(module))
        except Exception:  # noqa: BLE001 - not importable here: using it is a NameError that says why
            continue
    namespace.update(dict(payload.get("globals") or {}))
    return namespace


def _seed(seed: int) -> None:
    """A call is a function of its inputs: its randomness is seeded from them (and the job), by the job."""
    random.seed(seed)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(seed % (2**32))


def call(payload: dict[str, Any]) -> dict[str, Any]:
    """``{"kind": "ok", "value"}``, or ``{"kind": "syntax" | "definition" | "missing" | "error", ...}``."""
    code, name = str(payload["code"]), str(payload["name"])
    linecache.cache[CODE_FILE] = (len(code), None, code.splitlines(True), CODE_FILE)
    try:
        compiled = compile(code, CODE_FILE, "exec")
    except SyntaxError as exc:
        return _failure("syntax", exc)
    namespace = _namespace(payload, _names(compiled))
    _seed(int(payload.get("seed") or 0))
    try:
        exec(compiled, namespace)  # noqa: S102 - this sandboxed process exists to run it
    except BaseException as exc:  # noqa: B036 - the code may raise anything at its top level
        return _failure("definition", exc)
    function = namespace.get(name)
    if not callable(function):
        return {"kind": "missing", "error_type": "KeyError", "line": None, "traceback": "",
                "message": f"the code does not define a function named {name!r}"}
    args = list(payload.get("args") or [])
    if payload.get("bound"):
        args.insert(0, SandboxedSelf())
    try:
        value = function(*args, **dict(payload.get("kwargs") or {}))
        if isinstance(value, types.CoroutineType):  # an async def: run it here (asyncio only then)
            import asyncio

            value = asyncio.run(value)
    except BaseException as exc:  # noqa: B036 - SystemExit and KeyboardInterrupt are the code's errors too
        return _failure("error", exc)
    try:
        codec.encode(value)
    except codec.CodecError as exc:
        return {"kind": "error", "error_type": "TypeError", "line": None, "traceback": "",
                "message": f"the function returned {type(value).__name__}, which is not plain data ({exc}); "
                           "trainable code runs in the sandbox and must return None, bool, int, float, str, bytes, "
                           "lists, tuples, dicts, sets or numeric numpy arrays"}
    return {"kind": "ok", "value": value}
