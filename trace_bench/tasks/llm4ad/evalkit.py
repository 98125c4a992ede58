"""Helpers shared by the two halves of every LLM4AD evaluator.

Each task module has a *solve* half, a sandbox target (``solve(payload) -> plain data``) that
loads the candidate and runs it on the task's instances, and a *trusted* half
(``evaluate(payload, run) -> dict``, in the job process) that calls ``run(target, payload)``
to get that data, validates it against instances it generates itself and computes the score:
``{"score": float, "instance_scores": [...], "summary": str, "worst": str?, "objectives": {...}?}``.
Constructive tasks return the candidate's *decisions*; the trusted half replays them through
the same simulation (:class:`Recorder` / :class:`Replay`), so scores are bit-identical to a
direct run and a candidate that patches anything in its own process changes only its decisions.

Failures are raised, and the guide maps the exception *type name* to a phase: ``SyntaxError``
(compile), :class:`MissingEntryError` and :class:`CandidateLoadError` (load),
:class:`InvalidSolution` (validate), anything else (run).  Only numpy and the standard library
are imported here, so the sandbox zygote stays small.
"""

from __future__ import annotations

import linecache
import math
import random
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from trace_bench._util.errors import TraceBenchError

FAILURE_SCORE = -1_000_000.0  # the original Trace-Bench's sentinel for a failed evaluation
CANDIDATE_FILENAME = "<candidate>"


class MissingEntryError(TraceBenchError):
    """The program does not define the entry function."""


class CandidateLoadError(TraceBenchError):
    """Running the program's top level (imports, definitions) raised."""


class InvalidSolution(TraceBenchError):
    """The heuristic ran but produced an invalid solution (a repeated node, an overflowing bin, ...)."""


def candidate_namespace() -> dict[str, Any]:
    """Globals a candidate starts with: numpy and math, as LLM4AD templates assume."""
    return {"__name__": "candidate", "__builtins__": __builtins__, "np": np, "numpy": np, "math": math}


def load_candidate(program: Any, entry: str) -> Callable[..., Any]:
    """Compile and run ``program``; return its ``entry`` function.

    ``SyntaxError`` propagates unchanged (the guide reports it as a compile error with the
    line); other top-level exceptions become :class:`CandidateLoadError` chained to the cause.
    """
    if not isinstance(program, str) or not program.strip():
        raise CandidateLoadError("the program is empty or not text")
    # Unseeded randomness in a candidate must not make its score differ between evaluations or runs.
    random.seed(0)
    np.random.seed(0)
    # Tracebacks through the candidate then show its source lines, which is what an LLM can fix.
    linecache.cache[CANDIDATE_FILENAME] = (len(program), None, program.splitlines(True), CANDIDATE_FILENAME)
    code = compile(program, CANDIDATE_FILENAME, "exec")
    namespace = candidate_namespace()
    try:
        exec(code, namespace)
    except Exception as exc:
        raise CandidateLoadError(f"running the program's top level raised {type(exc).__name__}: {exc}") from exc
    func = namespace.get(entry)
    if not callable(func):
        defined = sorted(k for k, v in namespace.items() if callable(v) and not k.startswith("_") and k not in
                         ("np", "numpy", "math"))
        hint = f" (it defines: {', '.join(defined)})" if defined else ""
        raise MissingEntryError(f"the program must define a function named '{entry}'{hint}")
    return func


def open_candidate(payload: dict[str, Any]) -> Any:
    """In a sandbox target that never runs candidate code: the :class:`~trace_bench.sandbox.rpc.CandidateProxy`
    to the candidate's own process, or the load failure that process reported, raised as the exception
    type the guide maps to that phase (``SyntaxError``, :class:`MissingEntryError`, :class:`CandidateLoadError`)."""
    from trace_bench.sandbox.rpc import CandidateGone, CandidateProxy  # not on the zygote's import path

    try:
        proxy = CandidateProxy(payload)
    except CandidateGone as exc:
        raise CandidateLoadError(str(exc)) from None
    if not proxy.ready:
        kind, message = str(proxy.failure.get("kind") or ""), str(proxy.failure.get("message") or "")
        errors: dict[str, type[Exception]] = {"SyntaxError": SyntaxError, "MissingEntryError": MissingEntryError}
        raise errors.get(kind, CandidateLoadError)(message or "the candidate could not be loaded")
    return proxy


def as_int(value: Any, what: str) -> int:
    """A heuristic's answer as a Python int, or :class:`InvalidSolution` saying what was wrong."""
    if isinstance(value, (bool, np.bool_)):
        raise InvalidSolution(f"{what} must be an integer index, got a boolean")
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)) and math.isfinite(value) and float(value).is_integer():
        return int(value)
    raise InvalidSolution(f"{what} must be an integer index, got {type(value).__name__}: {value!r:.60}")


def finite(value: float, what: str) -> float:
    value = float(value)
    if not math.isfinite(value):
        raise InvalidSolution(f"{what} is not finite ({value})")
    return value


def summarize(instance_scores: Sequence[float], *, label: str, higher_is_better: bool,
              fmt: str = ".4f") -> dict[str, Any]:
    """Score fields shared by every evaluator: mean, per-instance values and the worst instances."""
    values = [float(v) for v in instance_scores]
    mean = float(np.mean(values)) if values else float("nan")
    order = sorted(range(len(values)), key=lambda i: values[i], reverse=not higher_is_better)
    worst = ", ".join(f"#{i} ({values[i]:{fmt}})" for i in order[:3])
    return {"mean": mean, "instance_scores": values,
            "worst": f"worst instances by {label}: {worst}" if values else ""}


class Recorder:
    """Wraps the candidate's function in the sandbox and remembers every answer it gave."""

    def __init__(self, func: Callable[..., Any]) -> None:
        self.func = func
        self.answers: list[Any] = []

    def __call__(self, *args: Any) -> Any:
        answer = self.func(*args)
        self.answers.append(answer)
        return answer

    def decisions(self) -> list[int]:
        """The answers as plain ints (the simulation validated each with :func:`as_int` already)."""
        return [as_int(answer, "a decision") for answer in self.answers]


class Replay:
    """Stands in for the candidate in the trusted replay: answers with the recorded decisions."""

    def __init__(self, decisions: Any) -> None:
        if not isinstance(decisions, list):
            raise InvalidSolution(f"the decisions of an instance must be a list, got {type(decisions).__name__}")
        self.decisions = decisions
        self.position = 0

    def __call__(self, *args: Any) -> Any:
        if self.position >= len(self.decisions):
            raise InvalidSolution("the candidate's recorded decisions end before the instance is solved")
        decision = self.decisions[self.position]
        self.position += 1
        return decision

    def finish(self) -> None:
        if self.position != len(self.decisions):
            raise InvalidSolution("the candidate's recorded decisions go on after the instance is solved")


def per_instance(solution: Any, count: int, what: str = "decisions") -> list[Any]:
    """The sandbox's answer as one entry per instance, or :class:`InvalidSolution`."""
    if not isinstance(solution, list) or len(solution) != count:
        got = f"{len(solution)} entries" if isinstance(solution, list) else type(solution).__name__
        raise InvalidSolution(f"expected {what} for {count} instances, got {got}")
    return solution


def replay_all(solution: Any, count: int, simulate: Callable[[Replay, int], Any]) -> list[Any]:
    """Run ``simulate(replay, index)`` for each instance on its recorded decisions."""
    results = []
    for index, decisions in enumerate(per_instance(solution, count)):
        replay = Replay(decisions)
        results.append(simulate(replay, index))
        replay.finish()
    return results


Play = Callable[[Callable[..., Any], Any], Any]
"""A constructive task's simulation: ``play(decide, instance)`` asks ``decide`` at each step and returns
the instance's value (tour length, bins used, ...), raising :class:`InvalidSolution` on a bad decision."""


def constructive(task: Any, data: Callable[[dict[str, Any]], Sequence[Any]], play: Play, *, label: str,
                 higher_is_better: bool, summary: Callable[[float, list[Any], Sequence[Any], dict[str, Any]], str],
                 fmt: str = ".4f", wrap: Callable[[Callable[..., Any]], Callable[..., Any]] = lambda func: func,
                 ) -> tuple[Callable[[dict[str, Any]], list[list[int]]], Callable[[dict[str, Any], Any], dict[str, Any]]]:
    """The two halves of a constructive task, ``(solve, evaluate)``, for its module to bind by those names.

    ``solve`` (the sandbox target) plays each instance of ``data(payload)`` with a :class:`Recorder`
    around the candidate's ``task.entry`` (through ``wrap``, where the task turns its answer into a
    decision) and returns the decisions; ``evaluate`` (trusted) calls it through ``run``, replays the
    decisions on instances it generates itself and scores the mean of the values ``play`` returns
    (negated where lower is better), with ``summary(mean, values, instances, payload)``.
    """
    target = f"{task.evaluator.partition(':')[0]}:solve"

    def solve(payload: dict[str, Any]) -> list[list[int]]:
        decide = wrap(load_candidate(payload["program"], task.entry))
        decisions = []
        for instance in data(payload):
            recorder = Recorder(decide)
            play(recorder, instance)
            decisions.append(recorder.decisions())
        return decisions

    def evaluate(payload: dict[str, Any], run: Any) -> dict[str, Any]:
        instances = data(payload)
        values = replay_all(run(target, payload), len(instances), lambda replay, i: play(replay, instances[i]))
        stats = summarize(values, label=label, higher_is_better=higher_is_better, fmt=fmt)
        mean = stats["mean"]
        return {"score": mean if higher_is_better else -mean, "instance_scores": values, "worst": stats["worst"],
                "summary": summary(mean, values, instances, payload)}

    return solve, evaluate


def dims(payload: dict[str, Any], *names: str) -> list[int]:
    """An instance generator's arguments as the payload carries them: seed, n_instances, then ``names``."""
    return [int(payload[name]) for name in ("seed", "n_instances", *names)]


def rng(seed: int, salt: int = 0) -> np.random.Generator:
    """The instance generator of a task: a function of (seed, salt) only."""
    return np.random.default_rng([int(seed) & 0xFFFFFFFF, int(salt)])


def distance_matrix(points: np.ndarray) -> np.ndarray:
    diff = points[:, None, :] - points[None, :, :]
    return np.sqrt((diff**2).sum(-1))
