"""How the stub policy changes a value: feedback-sized numeric steps, code literals, number lists.

A stub run should separate trainers by how they search, so proposals are neither random noise nor
the answer: they follow the feedback's direction with a step whose size is drawn around what the
feedback says (so it undershoots or overshoots), and code and number lists change a little at a
time.  Approaching an optimum therefore takes several steps and rewards trainers that keep their
best state, explore several proposals or validate before accepting.

The stub never lands on the value the feedback points at (:func:`keep_off`): a proposal stays at
least a tenth of the step, and never less than :data:`RESOLUTION` of the value's size, away from
it (an integer, at least one unit).  So every trainer approaches an optimum and none reaches it:
trainers do not tie at the optimum, and their order in a stub run comes from how they search.

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
OVERSHOOT = (0.2, 2.3)
"""A step is the feedback's distance times a factor drawn from this range (mean 1.25): about one
proposal in seven overshoots so far that it is worse than the value it replaces, as a model's
proposals sometimes are, so trainers that validate before accepting have something to reject."""
MISS_SHARE = 0.1
"""A proposal misses the value the feedback points at by at least this share of the step."""
RESOLUTION = 1e-4
"""... and by at least this share of that value's size (at least 1): the stub's precision."""


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
                 scale: float = 0.5, factor: float | None = None) -> float:
    """``value`` moved along the hint: ``share`` of the stated distance times a random factor (or
    ``factor``, when one draw serves every number of a proposal), or a random-size step in the
    hinted direction, or a random step when there is no hint."""
    if hint.direction and hint.distance is not None:
        drawn = rng.uniform(*OVERSHOOT) if factor is None else factor
        step = hint.distance * share * drawn
        # never a move finer than the stub's resolution: several numbers that each move a hair could
        # otherwise cancel their errors out, step after step, until their output hits a target exactly
        step = max(step, RESOLUTION * max(1.0, abs(value)) * (1.0 + drawn))
        return value + hint.direction * step
    width = max(1.0, abs(value) * scale)
    if hint.direction:
        return value + hint.direction * abs(rng.gauss(0.0, width))
    return value + rng.gauss(0.0, width)


def implied_target(value: float, hint: Hint, share: float = 1.0) -> float | None:
    """The value the feedback points at for this number (its share of the stated distance), or
    None when the feedback states no distance."""
    if not hint.direction or hint.distance is None:
        return None
    return value + hint.direction * hint.distance * share


def keep_off(new: float, target: float, step: float, rng: random.Random, *, integer: bool = False,
             current: float | None = None) -> float:
    """``new`` moved out of the stub's miss around ``target`` (see the module docstring): to the
    side it was on (either side, by a draw, when it sits exactly on it), at one to two times the
    miss.  For an integer the miss is one unit, taken towards ``current`` unless that is where the
    value already is."""
    if integer:
        goal = round(target)
        if round(new) != goal:
            return float(round(new))
        if current is None:
            return float(goal + (1 if rng.random() < 0.5 else -1))
        back = -1 if current < goal else 1  # one unit back towards the current value
        shifted = goal + back
        if shifted == round(current):  # that is where it already is: one unit past the target instead
            shifted = goal - back
        return float(shifted)
    miss = max(MISS_SHARE * abs(step), RESOLUTION * max(1.0, abs(target)))
    if abs(new - target) >= miss:
        return new
    side = 1.0 if new > target else -1.0 if new < target else (1.0 if rng.random() < 0.5 else -1.0)
    return target + side * miss * rng.uniform(1.0, 2.0)


def numeric_proposal(value: float, hint: Hint, rng: random.Random, *, share: float = 1.0, scale: float = 0.5,
                     integer: bool = False, factor: float | None = None) -> float | int:
    """A proposal for a number: :func:`numeric_step`, kept off the value the feedback points at."""
    new = numeric_step(value, hint, rng, share=share, scale=scale, factor=factor)
    target = implied_target(value, hint, share)
    if target is not None:
        new = keep_off(new, target, target - value, rng, integer=integer, current=value)
    return int(round(new)) if integer else new


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
