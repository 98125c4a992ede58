"""Boolean-expression questions in BBEH's ``boolean_expressions`` style, and where they come from.

``load_examples`` reads the real BBEH task file when one is given (``eval_kwargs.data_file``, or
``./bbeh/benchmark_tasks/bbeh_boolean_expressions/task.json`` like the original suite); without
one it generates seeded questions ("not ( True ) and False is") whose targets are computed by
:func:`evaluate`, a small parser with Python's precedence (``not`` > ``and`` > ``or``), never
``eval``.  The metadata of a problem says which source was used.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

DEFAULT_TASK_FILE = Path("bbeh") / "benchmark_tasks" / "bbeh_boolean_expressions" / "task.json"


def _random_expression(rng: random.Random, depth: int) -> str:
    if depth <= 0 or rng.random() < 0.25:
        atom = rng.choice(("True", "False"))
        return f"not {atom}" if rng.random() < 0.3 else atom
    if rng.random() < 0.2:
        return f"not ( {_random_expression(rng, depth - 1)} )"
    left, right = _random_expression(rng, depth - 1), _random_expression(rng, depth - 1)
    if rng.random() < 0.5:
        left = f"( {left} )"
    return f"{left} {rng.choice(('and', 'or'))} {right}"


def evaluate(expression: str) -> bool:
    """The truth value of a space-separated expression of True/False, not, and, or and parentheses."""
    tokens = expression.replace("(", " ( ").replace(")", " ) ").split()
    if tokens and tokens[-1] == "is":
        tokens = tokens[:-1]
    position = 0

    def peek() -> str | None:
        return tokens[position] if position < len(tokens) else None

    def take(expected: str | None = None) -> str:
        nonlocal position
        token = peek()
        if token is None or (expected is not None and token != expected):
            raise ValueError(f"malformed boolean expression at token {position}: {expression!r}")
        position += 1
        return token

    def disjunction() -> bool:
        value = conjunction()
        while peek() == "or":
            take()
            value = conjunction() or value
        return value

    def conjunction() -> bool:
        value = negation()
        while peek() == "and":
            take()
            value = negation() and value
        return value

    def negation() -> bool:
        if peek() == "not":
            take()
            return not negation()
        token = take()
        if token == "(":
            value = disjunction()
            take(")")
            return value
        if token not in ("True", "False"):
            raise ValueError(f"unexpected token {token!r} in {expression!r}")
        return token == "True"

    result = disjunction()
    if peek() is not None:
        raise ValueError(f"trailing tokens in {expression!r}")
    return result


def generate(count: int, seed: int) -> list[dict[str, str]]:
    rng = random.Random(f"bbeh-boolean|{seed}")
    examples: list[dict[str, str]] = []
    seen: set[str] = set()
    while len(examples) < count:
        question = f"{_random_expression(rng, rng.choice((2, 3)))} is"
        if question not in seen:
            seen.add(question)
            examples.append({"question": question, "answer": str(evaluate(question))})
    return examples


def read_task_file(path: str | Path) -> list[dict[str, str]]:
    """Rows of a BBEH ``task.json`` (``{"examples": [{"input", "target"}]}``) or a JSONL of such rows."""
    text = Path(path).expanduser().read_text(encoding="utf-8")
    if str(path).endswith(".jsonl"):
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    else:
        data = json.loads(text)
        rows = data.get("examples", []) if isinstance(data, dict) else data
    return [{"question": str(r["input"]), "answer": str(r["target"])} for r in rows]


def load_examples(count: int, seed: int, data_file: str | None = None) -> tuple[list[dict[str, str]], str]:
    """``count`` examples in a seeded order and a description of their source."""
    path = Path(data_file) if data_file else DEFAULT_TASK_FILE
    if data_file or path.exists():
        if not path.exists():
            raise FileNotFoundError(f"eval_kwargs.data_file {str(path)!r} does not exist")
        rows = read_task_file(path)
        random.Random(f"bbeh-order|{seed}").shuffle(rows)
        return rows[:count], f"file {path}"
    return generate(count, seed), "generated (seeded; BBEH boolean_expressions style)"


def split(rows: list[dict[str, Any]], n_train: int, n_val: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    n_train = min(n_train, len(rows))
    return rows[:n_train], rows[n_train:n_train + n_val]
