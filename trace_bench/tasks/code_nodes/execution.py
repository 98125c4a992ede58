"""opto's trainable code nodes, made to run optimizer-written code in the sandbox.

opto defines a trainable bundle's function by ``exec``-ing the code parameter in the process that
calls it (``FunModule.fun``).  :func:`install` changes three methods of ``FunModule`` in this
process: while the code parameter still holds the task author's own source, opto runs it as
before (it is the task's code, trusted like the rest of the task module), and checks that what
crosses it is plain data; once an optimizer changed it, ``fun`` returns a
:class:`SandboxedFunction` with the new code's signature (read from its source, never run here),
and each call of it is one sandboxed call (:mod:`.target`) whose plain-data answer becomes the
node's output.  Everything opto does around the call (graph, feedback, ``ExecutionError`` with
the failing line commented) stays as it was, so every trainer, ours, opto's own and the external
ones, goes through it unchanged.

Two failures of an optimizer's version are the candidate's, scored like any error of its code (the
task's failure score, the error in the feedback), never a failure of the job: a signature the task's
call does not fit (opto binds the call before it runs the function, so :func:`install` also wraps
that binding: the call is bound as the task's own function declares it and fails, when it runs, with
the binding's ``TypeError``), and an output longer than :data:`OUTPUT_MAX_CHARS` characters as text
(the output is shown to the optimizer in its next prompt: a 12 MB output made a 24 M-character prompt).
"""

from __future__ import annotations

import builtins
import functools
import hashlib
import inspect
import os
import threading
from collections import OrderedDict
from typing import Any

from trace_bench._util.errors import TraceBenchError
from trace_bench.sandbox import SandboxLimits, SandboxResult, codec, run_sandboxed
from trace_bench.tasks.code_nodes import signature as signatures
from trace_bench.tasks.code_nodes.support import CodeNodeUnsupported, Context, context_of

TARGET_MODULE = "trace_bench.tasks.code_nodes.target"
TARGET = f"{TARGET_MODULE}:call"
LIMITS = SandboxLimits(wall_s=10.0, memory_mb=1024)
CODE_MAX_CHARS = 200_000  # an optimizer's proposal longer than this is an error of the proposal
# What a rewritten function's output may add to the optimizer's next prompt (its value as text, as the
# optimizer shows it and a guide's feedback quotes it): a longer output is an error of the function.
OUTPUT_MAX_CHARS = 10_000
_CONTEXT = "_trace_bench_sandbox_context"
_PLAIN = "trainable code runs in the sandbox, so what it takes and returns must be plain data (None, bool, int, " \
         "float, str, bytes, lists, tuples, dicts, sets, numeric numpy arrays)"


class CodeFailure(TraceBenchError):
    """The sandboxed code failed; ``kind`` is ``syntax``, ``definition``, ``missing`` or ``error``."""

    def __init__(self, kind: str, error_type: str, message: str, line: int | None = None, traceback: str = "") -> None:
        super().__init__(f"{error_type}: {message}")
        self.kind, self.error_type, self.message, self.line, self.traceback = kind, error_type, message, line, traceback

    def exception(self) -> Exception:
        """The code's exception as the builtin type it named, else a RuntimeError naming it."""
        kind = getattr(builtins, self.error_type, None)
        if isinstance(kind, type) and issubclass(kind, Exception) and kind is not CodeNodeUnsupported:
            try:
                error = kind(self.message)
            except Exception:  # noqa: BLE001 - a builtin with another constructor (UnicodeError, ...)
                error = RuntimeError(f"{self.error_type}: {self.message}")
        else:
            error = RuntimeError(f"{self.error_type}: {self.message}")
        error.candidate_error_type = self.error_type  # type: ignore[attr-defined]
        return error


def bound_object(module: Any) -> Any:
    """The object a method-bundle is bound to (opto binds it through ``functools.partial``), or None."""
    forward = module.__dict__.get("forward")
    if isinstance(forward, functools.partial) and forward.args:
        first = forward.args[0]
        return getattr(first, "_data", None)
    return None


def _context(module: Any) -> Context:
    context = module.__dict__.get(_CONTEXT)
    if context is None:
        context = context_of(module, bound=bound_object(module) is not None)
        module.__dict__[_CONTEXT] = context
    return context


def _without_self(module: Any, args: tuple[Any, ...]) -> tuple[bool, list[Any]]:
    owner = bound_object(module)
    if args and owner is not None and args[0] is owner:
        return True, list(args[1:])
    return False, list(args)


def _check_plain(module: Any, what: str, value: Any) -> None:
    try:
        codec.encode(value)
    except codec.CodecError as exc:
        label = getattr(module._fun, "__qualname__", "a trainable function")
        raise CodeNodeUnsupported(f"trainable function {label}: {what} is not plain data ({exc}); {_PLAIN}") from None


class _Answers:
    """Answers of sandboxed calls by (code, arguments, globals, job), encoded: a call is a pure function
    of those (a fresh process each time, its randomness seeded from them), so a trainer that
    evaluates the same code on the same example again pays no second call."""

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self.entries: OrderedDict[bytes, bytes] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: bytes) -> bytes | None:
        with self.lock:
            value = self.entries.get(key)
            if value is not None:
                self.entries.move_to_end(key)
            return value

    def put(self, key: bytes, value: bytes) -> None:
        with self.lock:
            self.entries[key] = value
            while len(self.entries) > self.size:
                self.entries.popitem(last=False)


_CACHE = _Answers()


class SandboxedFunction:
    """Stands for an optimizer's version of a trainable function: calling it runs it in the sandbox."""

    def __init__(self, module: Any, code: str, parsed: signatures.Parsed, context: Context) -> None:
        self.module, self.code, self.context = module, code, context
        self.__name__ = self.__qualname__ = parsed.name
        self.__signature__ = parsed.signature
        self.binding_error = ""

    def fit_call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """Make opto's binding of this call succeed even when the new signature does not fit it: the call
        is then bound as the task's own function declares it, and fails, when it runs, with the binding's
        ``TypeError`` (an error of the candidate, in its feedback)."""
        try:
            self.__signature__.bind(*args, **kwargs)
            return
        except TypeError as exc:
            keywords = f", keywords {', '.join(kwargs)}" if kwargs else ""
            positional = len(_without_self(self.module, args)[1])
            self.binding_error = (f"{self.__name__}{self.__signature__} cannot be called as the task calls it "
                                  f"({positional} argument(s){keywords}): {exc}; keep the function's signature")
        try:
            original = inspect.signature(self.module._fun)
            original.bind(*args, **kwargs)
            self.__signature__ = original
        except (TypeError, ValueError):
            self.__signature__ = inspect.Signature([inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL),
                                                    inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD)])

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.binding_error:
            raise CodeFailure("error", "TypeError", self.binding_error)
        return _bounded(self._call(*args, **kwargs))

    def _call(self, *args: Any, **kwargs: Any) -> Any:
        bound, plain = _without_self(self.module, args)
        kwargs = {key: value for key, value in kwargs.items() if value is not signatures.SANDBOX_DEFAULT}
        plain = [value for value in plain if value is not signatures.SANDBOX_DEFAULT]
        _check_plain(self.module, "an argument", [plain, kwargs])
        payload = {"code": self.code, "name": self.__name__, "args": plain, "kwargs": kwargs, "bound": bound,
                   "globals": self.context.globals, "modules": self.context.modules}
        key = hashlib.sha256(codec.encode(payload) + os.environ.get("TRACE_BENCH_JOB_ID", "").encode()).digest()
        payload["seed"] = int.from_bytes(key[:4], "big")
        cached = _CACHE.get(key)
        if cached is None:
            result = run_sandboxed(TARGET, payload, LIMITS)
            if not result.ok:  # a limit hit may depend on the machine's load: asked again next time
                return _answer(result)
            cached = codec.encode(result.value)
            _CACHE.put(key, cached)
        return _answer(SandboxResult("ok", value=codec.decode(cached)))

    def __repr__(self) -> str:
        return f"<sandboxed trainable function {self.__name__}>"


def _bounded(value: Any) -> Any:
    """``value``, unless it is longer than :data:`OUTPUT_MAX_CHARS` characters as text (then an error)."""
    if value is None or isinstance(value, (bool, float)):
        return value
    try:
        size = len(str(value))
    except (ValueError, RecursionError, MemoryError):  # a huge int or a deep structure: too large to show
        size = OUTPUT_MAX_CHARS + 1
    if size > OUTPUT_MAX_CHARS:
        raise CodeFailure("error", "ValueError", f"the function returned a value of {size:,} characters as text; a "
                                                 f"trainable function's output may be at most {OUTPUT_MAX_CHARS:,} "
                                                 "(the optimizer reads it in its next prompt)")
    return value


def _answer(result: SandboxResult) -> Any:
    if not result.ok:
        if result.status == "timeout":
            raise CodeFailure("error", "TimeoutError", f"the function did not return within {LIMITS.wall_s:g} s "
                                                       f"(the sandbox's limit): {result.message}")
        if result.status == "oom":
            raise CodeFailure("error", "RuntimeError", f"the function ran out of memory (the sandbox allows "
                                                       f"{LIMITS.memory_mb} MB)")
        if result.status == "denied":
            raise CodeFailure("error", "PermissionError", f"the sandbox refused an operation ({result.message}); "
                                                          "trainable code may not write files, start processes or use "
                                                          "the network")
        raise CodeFailure("error", "RuntimeError", f"the sandboxed call failed: {result.describe()}")
    answer = result.value
    if not isinstance(answer, dict) or answer.get("kind") not in ("ok", "syntax", "definition", "missing", "error"):
        raise CodeFailure("error", "RuntimeError", "the sandboxed call gave a malformed answer")
    if answer["kind"] == "ok":
        return answer.get("value")
    line = answer.get("line")
    raise CodeFailure(str(answer["kind"]), str(answer.get("error_type") or "Exception")[:100],
                      str(answer.get("message") or "")[:2000], line if isinstance(line, int) else None,
                      str(answer.get("traceback") or "")[:4000])


def _definition_error(module: Any, exc: BaseException, error_type: str, message: str, line: int | None) -> Exception:
    """The ``ExecutionError`` opto raises when a code parameter does not define its function."""
    from opto.trace.bundle import ExecutionError
    from opto.trace.nodes import ExceptionNode

    base = f"({error_type}) {message}."
    code = str(module.parameter._data)
    module.info["error_comment"] = (module.generate_comment(code, base, line, 1) if line else code) + f"\n{base}"
    module.info["traceback"] = f"{error_type} in trainable code definition.\n{module.info['error_comment']}"
    node = ExceptionNode(exc, inputs={"code": module.parameter},
                         description=f"[exception] The code parameter {module.parameter.py_name} has an error.",
                         name="exception_" + module.parameter.py_name, info=module.info)
    return ExecutionError(node)


def sandboxed(module: Any, code: Any) -> SandboxedFunction:
    """The function an optimizer's code defines, to be called in the sandbox (opto's errors otherwise)."""
    if not isinstance(code, str) or len(code) > CODE_MAX_CHARS:
        what = f"{len(code)} characters long" if isinstance(code, str) else f"a {type(code).__name__}"
        error = ValueError(f"the code is {what}: it must be the source of a function, at most {CODE_MAX_CHARS} "
                           "characters")
        raise _definition_error(module, error, "ValueError", str(error), None)
    try:
        parsed = signatures.parse(code)
    except SyntaxError as exc:
        raise _definition_error(module, exc, "SyntaxError", str(exc.msg), exc.lineno) from None
    except (signatures.NoFunction, RecursionError, MemoryError, ValueError) as exc:
        raise _definition_error(module, exc, type(exc).__name__, str(exc), None) from None
    return SandboxedFunction(module, code, parsed, _context(module))


def call_sandboxed(module: Any, function: SandboxedFunction, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``FunModule.sync_call_fun`` for a sandboxed function: the output, or the exception as opto keeps it."""
    try:
        return function(*args, **kwargs)
    except CodeFailure as failure:
        error = failure.exception()
        if failure.kind in ("syntax", "definition", "missing"):
            raise _definition_error(module, error, failure.error_type, failure.message, failure.line) from None
        if not module.catch_execution_error:
            raise error from None
        base = f"({failure.error_type}) {failure.message}."
        commented = module.generate_comment(function.code, base, failure.line, 1) if failure.line else function.code
        module.info["error_comment"] = f"{commented}\n{base}"
        module.info["traceback"] = failure.traceback or base
        return error


def call_original(module: Any, original_call: Any, function: Any, args: tuple[Any, ...],
                  kwargs: dict[str, Any]) -> Any:
    """The task author's own code, run as opto runs it; what crosses it must be plain data, or its
    rewrites could not run in the sandbox (said once, before any rewrite runs)."""
    _context(module)
    _check_plain(module, "an argument", [_without_self(module, args)[1], kwargs])
    output = original_call(module, function, *args, **kwargs)
    if not isinstance(output, Exception):
        _check_plain(module, "its return value", output)
    return output


def install() -> None:
    """Patch opto's ``FunModule`` in this process (idempotent)."""
    from opto.trace.bundle import FunModule

    if getattr(FunModule, "_trace_bench_sandboxed", False):
        return
    original_fun = FunModule.fun
    original_call = FunModule.sync_call_fun
    original_wrap = FunModule._wrap_inputs

    def fun(self: Any) -> Any:
        if self.parameter is None:
            return self._fun
        code = self.parameter._data
        if isinstance(code, str) and code == self.info.get("source"):
            return original_fun.fget(self)
        return sandboxed(self, code)

    def sync_call_fun(self: Any, function: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(function, SandboxedFunction):
            return call_sandboxed(self, function, args, kwargs)
        if self.parameter is not None:
            return call_original(self, original_call, function, args, kwargs)
        return original_call(self, function, *args, **kwargs)

    def wrap_inputs(self: Any, function: Any, args: Any, kwargs: Any) -> Any:
        if isinstance(function, SandboxedFunction):
            function.fit_call(tuple(args), dict(kwargs))
        return original_wrap(self, function, args, kwargs)

    FunModule.fun = property(fun, doc=original_fun.__doc__)
    FunModule.sync_call_fun = sync_call_fun
    FunModule._wrap_inputs = wrap_inputs
    FunModule._trace_bench_sandboxed = True
