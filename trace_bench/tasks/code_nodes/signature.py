"""The name and signature of a trainable function, read from its source without running it.

opto binds a call's arguments against the function's signature before it runs the function
(``FunModule._wrap_inputs``), so the job needs the signature of code that only the sandbox may
run.  The source is parsed (never compiled or executed here); default values that are literals
are read as such, any other default is :data:`SANDBOX_DEFAULT` and the sandbox evaluates it.
"""

from __future__ import annotations

import ast
import inspect
import re
from dataclasses import dataclass

from trace_bench._util.errors import TraceBenchError

_FIRST_DEF = re.compile(r"\s*def\s+(\w+)")  # how opto finds the function a code parameter defines


class _SandboxDefault:
    """A default value only the sandbox can compute: the argument is left out of the call."""

    def __repr__(self) -> str:
        return "<default computed in the sandbox>"

    def __deepcopy__(self, memo: dict[int, object]) -> _SandboxDefault:
        return self


SANDBOX_DEFAULT = _SandboxDefault()


@dataclass(frozen=True)
class Parsed:
    name: str
    signature: inspect.Signature


class NoFunction(TraceBenchError):
    """The code defines no function opto would find (opto reports this as an error of the code)."""


def _default(node: ast.expr | None) -> object:
    if node is None:
        return inspect.Parameter.empty
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return SANDBOX_DEFAULT


def _signature(function: ast.FunctionDef | ast.AsyncFunctionDef) -> inspect.Signature:
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    parameters = []
    for index, (arg, default) in enumerate(zip(positional, defaults, strict=True)):
        kind = inspect.Parameter.POSITIONAL_ONLY if index < len(args.posonlyargs) else \
            inspect.Parameter.POSITIONAL_OR_KEYWORD
        parameters.append(inspect.Parameter(arg.arg, kind, default=_default(default)))
    if args.vararg is not None:
        parameters.append(inspect.Parameter(args.vararg.arg, inspect.Parameter.VAR_POSITIONAL))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        parameters.append(inspect.Parameter(arg.arg, inspect.Parameter.KEYWORD_ONLY, default=_default(default)))
    if args.kwarg is not None:
        parameters.append(inspect.Parameter(args.kwarg.arg, inspect.Parameter.VAR_KEYWORD))
    return inspect.Signature(parameters)


def parse(code: str) -> Parsed:
    """The function opto would take from ``code`` (the first ``def``), with its signature.

    ``SyntaxError`` when the code does not parse; :class:`NoFunction` when it defines no such
    function at its top level.
    """
    match = _FIRST_DEF.search(code)
    if match is None:
        raise NoFunction("the code defines no function (it must start with `def`)")
    name = match.group(1)
    tree = ast.parse(code, "<trainable code>")
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return Parsed(name, _signature(node))
    raise NoFunction(f"the code does not define the function {name!r} at its top level")
