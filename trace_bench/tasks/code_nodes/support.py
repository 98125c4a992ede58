"""Whether a trainable function can run in the sandbox, judged from the task author's own version.

An optimizer's rewrite runs in the sandbox with its arguments (plain data), builtins, importable
modules and a ``self`` that has no attributes.  So a task whose original function needs more
cannot have its rewrites run there, and says so once, clearly, before anything runs
(:class:`CodeNodeUnsupported`): a function that reads attributes of ``self`` (an agent's other
nodes, an LLM client, another method or bundle), or a global of its module that is neither plain
data nor a module (a helper function, a class, another bundle).  Plain-data globals it reads are
sent along with each call; the modules of its scope are imported again in the sandbox by name
(where the sandbox can import them: public packages, not the task's own modules).
"""

from __future__ import annotations

import ast
import dis
import inspect
import textwrap
import types
from dataclasses import dataclass, field
from typing import Any

from trace_bench._util.errors import TraceBenchError
from trace_bench.sandbox import codec

GLOBALS_MAX_BYTES = 1 << 20


class CodeNodeUnsupported(TraceBenchError, RuntimeError):
    """A trainable code node that cannot run in the sandbox (the message says why and what to do)."""

    job_status = "failed"


@dataclass(frozen=True)
class Context:
    """What a sandboxed call of the function gets besides its arguments."""

    globals: dict[str, Any] = field(default_factory=dict)
    modules: dict[str, str] = field(default_factory=dict)


def global_names(code: types.CodeType) -> set[str]:
    """Names the function loads as globals (its nested functions and comprehensions included)."""
    names: set[str] = set()
    for instruction in dis.get_instructions(code):
        if instruction.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
            names.add(str(instruction.argval))
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            names |= global_names(constant)
    return names


def _uses_first_argument(source: str, name: str) -> bool:
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return False
    functions = [node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if not functions:
        return False
    return any(isinstance(node, ast.Name) and node.id == name for node in ast.walk(functions[0]))


def context_of(module: Any, *, bound: bool) -> Context:
    """The context of a trainable FunModule's calls, or :class:`CodeNodeUnsupported`."""
    original = module._fun
    label = getattr(original, "__qualname__", getattr(original, "__name__", "the trainable function"))
    parameters = list(inspect.signature(original).parameters)
    if bound and parameters and _uses_first_argument(module.info.get("source") or "", parameters[0]):
        raise CodeNodeUnsupported(
            f"trainable function {label} uses `{parameters[0]}`: trainable code runs in the sandbox, where "
            f"`{parameters[0]}` has no attributes (no other node, method, bundle or client of the agent); pass "
            "what the function needs as arguments, or make the node non-trainable")
    scope = {**original.__globals__, **(module._ldict or {})}
    # every module the task's code had at hand: public code, imported again by name in the sandbox
    context = Context(modules={name: value.__name__ for name, value in scope.items()
                               if isinstance(value, types.ModuleType) and not name.startswith("__")})
    unsupported = []
    for name in sorted(global_names(original.__code__)):
        if name not in scope or name in context.modules:
            continue  # a builtin, a module, or a name that fails the same way in the sandbox as here
        value = scope[name]
        try:
            codec.encode(value)
        except codec.CodecError:
            unsupported.append(f"{name} ({type(value).__name__})")
            continue
        context.globals[name] = value
    if unsupported:
        raise CodeNodeUnsupported(
            f"trainable function {label} uses {', '.join(unsupported)} from its module: trainable code runs in the "
            "sandbox, which gets only plain data (numbers, text, lists, dicts, numpy arrays) and modules; define "
            "helpers inside the function or pass values as arguments")
    if len(codec.encode(context.globals)) > GLOBALS_MAX_BYTES:
        raise CodeNodeUnsupported(f"trainable function {label} uses more than {GLOBALS_MAX_BYTES} bytes of globals; "
                                  "pass large data as arguments")
    return context
