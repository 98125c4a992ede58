"""What every external-library trainer shares.

- :class:`GatewayLink`: the job's loopback gateway for one library run.  Libraries get its
  ``base_url``/``api_key`` and a model name whose suffix names the role (the gateway meters the
  call under that role); nothing global (env vars, library settings) is touched.
- The budget rule: a budget stop reaches a library as an HTTP 429 it may swallow or wrap, so
  :meth:`GatewayLink.guard` re-raises the recorded :class:`~trace_bench.llm.errors.BudgetExhausted`
  in the job thread once the library returns or fails, and :meth:`GatewayLink.check` (called in
  every evaluation callback) stops a library that keeps evaluating without LLM calls.
- :class:`StepTracker`: per-candidate curve steps from a library's stream of evaluations.
- :class:`TextParameter`: a trainable parameter seen as text, the currency of every library
  (DSPy instructions, TextGrad variables, OpenEvolve programs, gepa candidates).  Non-string
  values travel as Python literals and are coerced back to the original type.
"""

from __future__ import annotations

import ast
import re
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from trace_bench.trainers.context import EvalResult, TrainerContext
from trace_bench.trainers.state import State, state_key

MODEL_PREFIX = "openai/"


def gateway_model(role: str = "optimizer") -> str:
    """A LiteLLM-style model name the gateway maps to ``role`` (the session picks the real model)."""
    return f"{MODEL_PREFIX}trace-bench-{role}"


class GatewayLink:
    """The job's gateway, opened for one library run (a context manager)."""

    def __init__(self, ctx: TrainerContext) -> None:
        from trace_bench.llm.gateway import start_gateway

        self.ctx = ctx
        self.gateway = start_gateway(ctx.session, phase="train")

    @property
    def base_url(self) -> str:
        return self.gateway.base_url

    @property
    def api_key(self) -> str:
        return self.gateway.api_key

    def check(self) -> None:
        """Raise ``BudgetExhausted`` when the gateway refused a call or the wall budget is spent."""
        self.gateway.raise_if_exhausted()
        self.ctx.check_budget()

    @contextmanager
    def guard(self) -> Iterator[None]:
        """Run a library call; a budget stop it swallowed or wrapped is re-raised afterwards."""
        try:
            yield
        except Exception:
            self.gateway.raise_if_exhausted()
            raise
        self.gateway.raise_if_exhausted()

    def close(self) -> None:
        self.gateway.close()

    def __enter__(self) -> GatewayLink:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


@dataclass
class TextParameter:
    """One trainable parameter as text: ``index`` into the state, a stable readable ``name``."""

    index: int
    name: str
    kind: str  # "code", "str" or "literal"
    description: str
    original: Any

    def to_text(self, value: Any) -> str:
        return value if isinstance(value, str) else repr(value)

    def from_text(self, text: str) -> Any:
        """The value for ``text``; ``ValueError`` when a literal parameter gets a non-literal."""
        if self.kind != "literal":
            return text
        try:
            value = ast.literal_eval(text.strip())
        except (ValueError, SyntaxError) as exc:
            raise ValueError(f"{self.name} must be a Python literal like {self.original!r}, got {text[:80]!r}") from exc
        template = type(self.original)
        if template is float and isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if template is int and isinstance(value, float) and value.is_integer():
            return int(value)
        if template is not type(value) and self.original is not None:
            raise ValueError(f"{self.name} must be a {template.__name__}, got {type(value).__name__}")
        return value


def _friendly_name(node: Any) -> str:
    py_name = str(getattr(node, "py_name", "") or "param")
    if py_name.startswith("__code"):
        match = re.search(r"def\s+(\w+)", str(node.data))
        return match.group(1) if match else "code"
    return re.sub(r"\d+$", "", py_name) or py_name


def text_parameters(ctx: TrainerContext) -> list[TextParameter]:
    """Every trainable parameter of the job as a :class:`TextParameter` (names unique, stable)."""
    found: list[TextParameter] = []
    seen: dict[str, int] = {}
    for index, node in enumerate(ctx.parameters):
        name = _friendly_name(node)
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:
            name = f"{name}_{seen[name]}"
        value = node.data
        kind = "code" if str(node.py_name).startswith("__code") else "str" if isinstance(value, str) else "literal"
        description = str(getattr(node, "description", "") or "").replace("[ParameterNode] ", "").strip()
        found.append(TextParameter(index, name, kind, description, value))
    return found


def texts_of(parameters: list[TextParameter], state: State) -> dict[str, str]:
    return {p.name: p.to_text(state[p.index]) for p in parameters}


def state_from_texts(parameters: list[TextParameter], base: State, texts: Mapping[str, str]) -> State:
    """``base`` with the named parameters replaced; ``ValueError`` when a text is not a valid value."""
    state = list(base)
    for parameter in parameters:
        if parameter.name in texts:
            state[parameter.index] = parameter.from_text(str(texts[parameter.name]))
    return state


def evaluate_texts(ctx: TrainerContext, parameters: list[TextParameter], base: State, texts: Mapping[str, str],
                   dataset: dict[str, list[Any]]) -> tuple[State | None, EvalResult | None, str]:
    """Score a text candidate on ``dataset``: ``(state, result, error)``; an invalid candidate has
    no state and its error message is the feedback a library learns from."""
    try:
        state = state_from_texts(parameters, base, texts)
    except ValueError as exc:
        return None, None, str(exc)
    return state, ctx.evaluate(state, dataset), ""


def failure_score(ctx: TrainerContext) -> float:
    """The score a candidate that is not even a valid value gets: the task's failure score (its
    declared ``failure_score``, else the bottom of its ``score_range``, else far below any score)."""
    return float(ctx.problem.failure_score)


def summarize_feedback(feedbacks: list[str], limit: int = 3, width: int = 400) -> str:
    picked = [f.strip()[:width] for f in feedbacks if f and f.strip()][:limit]
    return " | ".join(picked) if picked else "no feedback"


class StepTracker:
    """Turns a library's stream of rollouts into per-candidate steps: a step is reported when
    the evaluated state changes (a candidate's batch is done) and once more at the end."""

    def __init__(self, ctx: TrainerContext) -> None:
        self.ctx = ctx
        self._lock = threading.Lock()
        self._key: str | None = None
        self._state: State | None = None
        self._scores: list[float] = []

    def record(self, state: State, score: float) -> None:
        with self._lock:
            key = state_key(state)
            if key != self._key:
                self._flush()
                self._key, self._state = key, list(state)
            self._scores.append(score)

    def _flush(self) -> None:
        if self._state is not None and self._scores:
            self.ctx.report_step(self._state, sum(self._scores) / len(self._scores), batch=len(self._scores))
        self._scores = []

    def finish(self) -> None:
        with self._lock:
            self._flush()
            self._key, self._state = None, None
