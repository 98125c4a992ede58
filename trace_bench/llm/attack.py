"""A hostile provider: every code it is asked to change comes back carrying attack code.

For the attack suite (tests/sandbox) and for anyone who audits the sandbox with their own attacks:
``trace-bench fake-llm --attack FILE`` (or ``FakeLLMServer(attacks=...)``) answers like the stub
policy, in the format each optimizer parses (OptoPrime/OPRO JSON suggestions, TextGrad tags,
OpenEvolve diffs and rewrites, gepa fences, DSPy fields), except that a proposal for a value that
is code (it holds a ``def``) is that code with an attack injected as the first statements of its
first function, so the attack runs wherever and whenever the harness runs the proposal, and the
function then goes on as before (or returns what the attack returns).  An agent asked to write a
function (``def name(...)`` in its prompt) answers with that function holding only the attack.

``FILE``: Python statements (one attack), or JSON: a list of ``{"name": str, "code": str}``
(attacks used in turn, one per proposal) where an entry with ``"replace": true`` and a
``"function"`` name is a whole function that replaces the function of that name (an honest
proposal, e.g. a reference solution), and an entry with ``"replace": true`` and a ``"matching"``
text replaces, whole, any value that holds that text (code that defines no function, e.g. a PAL
program).
"""

from __future__ import annotations

import ast
import itertools
import json
import random
import re
import textwrap
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trace_bench.llm.stub import StubPolicy, Variable
from trace_bench.llm.stub_mutations import Hint

_DEF = re.compile(r"^(?P<indent>[ \t]*)(?:async[ \t]+)?def[ \t]+(?P<name>\w+)[ \t]*\((?P<args>[^)]*)\)[^:\n]*:", re.M)


@dataclass(frozen=True)
class Attack:
    """``code``: statements injected at the top of a function's body (or, with ``replace``, the whole
    function that replaces ``function``, or the whole value that replaces one holding ``matching``)."""

    name: str
    code: str
    replace: bool = False
    function: str = ""
    matching: str = ""


def load_attacks(path: str | Path) -> list[Attack]:
    text = Path(path).read_text(encoding="utf-8")
    try:
        entries = json.loads(text)
    except ValueError:
        return [Attack(Path(path).stem, text)]
    if not isinstance(entries, list) or not entries:
        raise ValueError(f"{path}: an attack file is Python statements or a JSON list of attacks")
    return [Attack(str(e.get("name") or f"attack{i}"), str(e["code"]), bool(e.get("replace")), str(e.get("function") or ""),
                   str(e.get("matching") or "")) for i, e in enumerate(entries)]


def _first_function(program: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return min(functions, key=lambda n: n.lineno) if functions else None


def inject(program: str, attack: str) -> str | None:
    """``program`` with ``attack`` as the first statements of its first function (after its docstring);
    None when the program defines no function."""
    function = _first_function(program)
    if function is None or not function.body:
        return None
    first = function.body[0]
    is_docstring = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
        and isinstance(first.value.value, str)
    anchor = function.body[1] if is_docstring and len(function.body) > 1 else first
    if anchor.lineno == function.lineno:  # a body on the def's own line: nowhere to put a block
        return None
    lines = program.splitlines(keepends=True)
    if is_docstring and len(function.body) == 1:
        at, indent = (first.end_lineno or first.lineno), " " * first.col_offset
    else:
        at, indent = anchor.lineno - 1, " " * anchor.col_offset
    if not program.endswith("\n") and at >= len(lines):
        lines[-1] += "\n"
    block = textwrap.indent(textwrap.dedent(attack).strip("\n") + "\n", indent)
    return "".join(lines[:at]) + block + "".join(lines[at:])


def replace_function(program: str, name: str, source: str) -> str | None:
    """``program`` with the top-level function ``name`` replaced by ``source``; None when it has none."""
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            lines = program.splitlines(keepends=True)
            start = (node.decorator_list[0].lineno if node.decorator_list else node.lineno) - 1
            return "".join(lines[:start]) + textwrap.dedent(source).strip("\n") + "\n" + "".join(lines[node.end_lineno:])
    return None


@dataclass
class AttackPolicy(StubPolicy):
    """The stub policy whose proposals for code carry the attacks, in turn."""

    attacks: Sequence[Attack] = field(default_factory=list)
    _turn: Any = field(default=None, init=False, repr=False)
    _turn_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.attacks:
            raise ValueError("an attack policy needs at least one attack")
        self._turn = itertools.cycle(self.attacks)

    def _next(self) -> Attack:
        with self._turn_lock:
            return next(self._turn)

    def _whole(self, current: str) -> bool:
        return any(attack.matching and attack.matching in current for attack in self.attacks)

    def attacked(self, current: str) -> str | None:
        """The attacked version of a code value, or None when it is not code (nor a value a whole-value
        attack matches)."""
        if "def " not in current and not self._whole(current):
            return None
        for _ in range(len(self.attacks)):
            attack = self._next()
            if attack.matching:
                changed = attack.code if attack.matching in current else None
            elif "def " not in current:
                changed = None
            elif attack.replace:
                changed = replace_function(current, attack.function, attack.code)
            else:
                changed = inject(current, attack.code)
            if changed is not None:
                return changed
        return None

    def _propose(self, variable: Variable, rng: random.Random, hint: Hint | None = None, share: float = 1.0,
                 factor: float | None = None) -> Any:
        code = variable.type == "code" or "def " in variable.value or self._whole(variable.value)
        attacked = self.attacked(variable.value) if code else None
        return attacked if attacked is not None else super()._propose(variable, rng, hint, share, factor)

    def propose_text(self, current: str, name: str, rng: random.Random, hint: Hint | None = None) -> str | None:
        attacked = self.attacked(current)
        return attacked if attacked is not None else super().propose_text(current, name, rng, hint)

    def _agent(self, messages: list[dict[str, Any]]) -> str:
        """An agent asked to write a function answers with it holding the attack."""
        prompt = "\n".join(str(m.get("content", "")) for m in messages)
        matches = list(_DEF.finditer(prompt))
        match = matches[-1] if matches else None
        if match is None:
            return super()._agent(messages)
        stub = f"def {match.group('name')}({match.group('args')}):\n    pass\n"
        return f"```python\n{self.attacked(stub) or stub}```"
