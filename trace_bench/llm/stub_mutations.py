"""How the stub policy changes a value: feedback-sized numeric steps, code literals, number lists.

A stub run should separate trainers by how they search, so proposals are neither random noise nor
the answer: they follow the feedback's direction with a step whose size is drawn around what the
feedback says (so it undershoots or overshoots), and code and number lists change a little at a
time.  Reaching an optimum therefore takes several steps and rewards trainers that keep their best
state, explore several proposals or validate before accepting.

:func:`feedback_hint` reads the feedback a prompt carries: a direction (``increase``/``decrease``,
``too high``/``too low``) and, where given, a distance (``off by 1.5``).  Lines are combined, so a
batched feedback (``ID [0]: ... ID [1]: ...``) gives the average push.
"""

from __future__ import annotations

import io
import random
import re
import tokenize
from dataclasses import dataclass

_UP = re.compile(r"\b(increase|too (?:low|small))\b", re.I)
_DOWN = re.compile(r"\b(decrease|too (?:high|large|big))\b", re.I)
_DISTANCE = re.compile(r"\boff by (\d+(?:\.\d+)?(?:e-?\d+)?)", re.I)
_NUMBER = r"-?\d+(?:\.\d+)?(?:e-?\d+)?"
NUMBER_LIST = re.compile(rf"\s*\[\s*{_NUMBER}(?:\s*,\s*{_NUMBER})*\s*\]\s*")
OVERSHOOT = (0.2, 1.6)
"""A step is the feedback's distance times a factor drawn from this range (mean 0.9)."""


@dataclass(frozen=True)
class Hint:
    """Where the feedback pushes a value: ``direction`` +1, -1 or 0; ``distance`` when stated."""

    direction: int = 0
    distance: float | None = None


def feedback_hint(text: str) -> Hint:
    """The push a feedback text gives; lines without a direction are ignored."""
    pushes: list[float] = []
    distances: list[float] = []
    for line in text.splitlines():
        up, down = bool(_UP.search(line)), bool(_DOWN.search(line))
        if up == down:
            continue
        sign = 1.0 if up else -1.0
        found = _DISTANCE.search(line)
        distance = float(found.group(1)) if found else None
        if distance is not None:
            distances.append(distance)
        pushes.append(sign * (distance if distance is not None else 1.0))
    total = sum(pushes)
    if not pushes or total == 0:
        return Hint()
    distance = sum(distances) / len(distances) if distances else None
    return Hint(1 if total > 0 else -1, distance)


def numeric_step(value: float, hint: Hint, rng: random.Random, *, share: float = 1.0,
                 scale: float = 0.5) -> float:
    """``value`` moved along the hint: ``share`` of the stated distance times a random factor, or
    a random-size step in the hinted direction, or a random step when there is no hint."""
    if hint.direction and hint.distance is not None:
        return value + hint.direction * hint.distance * share * rng.uniform(*OVERSHOOT)
    width = max(1.0, abs(value) * scale)
    if hint.direction:
        return value + hint.direction * abs(rng.gauss(0.0, width))
    return value + rng.gauss(0.0, width)


def _format_number(new: float, integer: bool) -> str:
    return str(int(round(new))) if integer else repr(round(new, 4))


def mutate_number_list(text: str, rng: random.Random, scale: float = 0.3) -> str | None:
    """A list of numbers shown as text (``[1.5, 1.0]``) with every number moved a little."""
    if not NUMBER_LIST.fullmatch(text):
        return None

    def move(match: re.Match[str]) -> str:
        value = float(match.group(0))
        return _format_number(value + rng.gauss(0.0, scale * max(1.0, abs(value))), integer=False)

    return re.sub(_NUMBER, move, text)


def mutate_code_literal(code: str, rng: random.Random) -> str | None:
    """``code`` with one numeric literal changed (ints by 1 or 2, floats by about 0.3); literals
    inside strings, docstrings and comments are left alone.  None when there is none or the code
    does not tokenize."""
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(code).readline) if t.type == tokenize.NUMBER]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    tokens = [t for t in tokens if re.fullmatch(r"\d+(?:\.\d*)?|\.\d+", t.string)]
    if not tokens:
        return None
    token = rng.choice(tokens)
    if re.fullmatch(r"\d+", token.string):
        old = int(token.string)
        new_text = str(abs(old + rng.choice((-2, -1, 1, 2))))
        if new_text == token.string:
            new_text = str(old + 1)
    else:
        old_float = float(token.string)
        new_text = _format_number(abs(old_float + rng.gauss(0.0, 0.3 * max(1.0, old_float))), integer=False)
    lines = code.splitlines(keepends=True)
    (row, start), (_, end) = token.start, token.end
    line = lines[row - 1]
    lines[row - 1] = line[:start] + new_text + line[end:]
    return "".join(lines)
