"""What a task builds for one job: the *problem* contract.

A task module's ``build_trace_problem(**eval_kwargs)`` returns a mapping with the keys below
(the original Trace-Bench contract).  :meth:`Problem.from_mapping` validates it once, so every
trainer sees the same normalised object.  Datasets are ``{"inputs": [...], "infos": [...]}``
aligned by index.

Failures never score well: a rollout whose trainable code raised, or whose output the guide could
not score, gets :attr:`Problem.failure_score`: the task's declared ``failure_score``, else the
bottom of its declared ``score_range``, else :data:`DEFAULT_FAILURE_SCORE`, far below any score a
task reports.  Both keys may sit at the top level or in ``metadata``.

A guide that raises or returns a non-finite score fails the job (``task_error``, see
:mod:`trace_bench.tasks.guide`) unless the task opts in with ``score_guide_errors: true`` (top level
or ``metadata``); a guide rejects one output on purpose by raising ``OutputRejected``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from trace_bench._util.errors import TraceBenchError
from trace_bench.tasks.guide import GuideFailures

REQUIRED_KEYS = ("param", "guide", "train_dataset")
DEFAULT_FAILURE_SCORE = -1e9
"""The score of a failed rollout on a task that declares neither ``failure_score`` nor the bottom
of its ``score_range`` (finite, so means and CSV cells stay numbers)."""


class ProblemError(TraceBenchError, ValueError):
    """A task returned something that is not a valid problem."""


Dataset = dict[str, list[Any]]


def _check_dataset(name: str, value: Any, *, task_id: str, required: bool) -> Dataset | None:
    if value is None:
        if required:
            raise ProblemError(f"{task_id}: problem has no {name}")
        return None
    if not isinstance(value, dict):
        raise ProblemError(f"{task_id}: {name} must be a dict with 'inputs' and 'infos', got {type(value).__name__}")
    inputs = value.get("inputs")
    infos = value.get("infos", value.get("info"))
    if inputs is None or infos is None:
        raise ProblemError(f"{task_id}: {name} needs both 'inputs' and 'infos'")
    inputs, infos = list(inputs), list(infos)
    if len(inputs) != len(infos):
        raise ProblemError(f"{task_id}: {name} has {len(inputs)} inputs but {len(infos)} infos")
    if required and not inputs:
        raise ProblemError(f"{task_id}: {name} is empty")
    if not inputs:
        return None
    return {"inputs": inputs, "infos": infos}


def _stub_answers(value: Any, task_id: str) -> dict[str, str]:
    """``stub_answers``: a mapping question -> answer, or (question, answer) pairs."""
    if value is None:
        return {}
    pairs = value.items() if isinstance(value, dict) else value
    try:
        return {str(question): str(answer) for question, answer in pairs}
    except (TypeError, ValueError):
        raise ProblemError(f"{task_id}: stub_answers must map questions to answers") from None


def _number(value: Any, what: str, task_id: str, *, allow_infinite: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ProblemError(f"{task_id}: {what} must be a number, got {value!r}")
    number = float(value)
    if math.isnan(number) or (math.isinf(number) and not allow_infinite):
        raise ProblemError(f"{task_id}: {what} must be a finite number, got {value!r}")
    return number


def _score_range(value: Any, task_id: str) -> tuple[float, float] | None:
    """``[low, high]``; ``None`` for a side means unbounded (e.g. ``[None, 0]`` for -|error|)."""
    if value is None:
        return None
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or len(value) != 2:
        raise ProblemError(f"{task_id}: score_range must be [low, high], got {value!r}")
    low = -math.inf if value[0] is None else _number(value[0], "score_range low", task_id, allow_infinite=True)
    high = math.inf if value[1] is None else _number(value[1], "score_range high", task_id, allow_infinite=True)
    if not low < high:
        raise ProblemError(f"{task_id}: score_range must have low < high, got {list(value)}")
    return low, high


@dataclass
class Problem:
    """A validated problem; ``param`` is an opto ``ParameterNode`` or ``trace.Module``."""

    task_id: str
    param: Any
    guide: Any
    train_dataset: Dataset
    validate_dataset: Dataset | None = None
    test_dataset: Dataset | None = None
    optimizer_kwargs: dict[str, Any] = field(default_factory=dict)
    objective_config: Any = None
    metadata: dict[str, Any] = field(default_factory=dict)
    stub_candidates: list[Any] = field(default_factory=list)
    #: question text -> gold answer, for the stub agent of a prompt task (``trace_bench.llm.stub_agent``)
    stub_answers: dict[str, str] = field(default_factory=dict)
    extras: dict[str, Any] = field(default_factory=dict)
    score_range: tuple[float, float] | None = None
    declared_failure_score: float | None = None
    #: the task's opt-in: its guide's exceptions and non-finite scores are scored as failures
    score_guide_errors: bool = False
    guide_failures: GuideFailures = field(default_factory=GuideFailures, repr=False)

    @classmethod
    def from_mapping(cls, raw: Any, task_id: str) -> Problem:
        if isinstance(raw, Problem):
            return raw
        if not isinstance(raw, dict):
            raise ProblemError(f"{task_id}: build_trace_problem must return a dict, got {type(raw).__name__}")
        missing = [k for k in REQUIRED_KEYS if raw.get(k) is None]
        if missing:
            raise ProblemError(f"{task_id}: problem is missing required key(s): {', '.join(missing)}")
        known = {
            "param", "guide", "train_dataset", "validate_dataset", "validation_dataset", "test_dataset",
            "optimizer_kwargs", "objective_config", "metadata", "stub_candidates", "score_range", "failure_score",
            "score_guide_errors", "stub_answers",
        }
        validate = raw.get("validate_dataset", raw.get("validation_dataset"))
        optimizer_kwargs = raw.get("optimizer_kwargs") or {}
        if not isinstance(optimizer_kwargs, dict):
            raise ProblemError(f"{task_id}: optimizer_kwargs must be a dict")
        metadata = raw.get("metadata") or {}
        if not isinstance(metadata, dict):
            raise ProblemError(f"{task_id}: metadata must be a dict")
        score_range = _score_range(raw.get("score_range", metadata.get("score_range")), task_id)
        failure = raw.get("failure_score", metadata.get("failure_score"))
        failure = None if failure is None else _number(failure, "failure_score", task_id)
        opt_in = raw.get("score_guide_errors", metadata.get("score_guide_errors", False))
        if not isinstance(opt_in, bool):
            raise ProblemError(f"{task_id}: score_guide_errors must be true or false, got {opt_in!r}")
        if failure is not None and score_range is not None and failure > score_range[0]:
            raise ProblemError(f"{task_id}: failure_score {failure:g} is above the bottom of score_range "
                               f"{score_range[0]:g}; a failure must never beat a valid answer")
        from trace_bench.tasks.code_nodes import check_problem
        from trace_bench.tasks.code_nodes.support import CodeNodeUnsupported

        try:
            check_problem(raw["param"])  # optimizer-written code of trainable functions runs sandboxed
        except CodeNodeUnsupported as exc:
            raise ProblemError(f"{task_id}: {exc}") from None
        return cls(
            task_id=task_id,
            param=raw["param"],
            guide=raw["guide"],
            train_dataset=_check_dataset("train_dataset", raw["train_dataset"], task_id=task_id, required=True),  # type: ignore[arg-type]
            validate_dataset=_check_dataset("validate_dataset", validate, task_id=task_id, required=False),
            test_dataset=_check_dataset("test_dataset", raw.get("test_dataset"), task_id=task_id, required=False),
            optimizer_kwargs=dict(optimizer_kwargs),
            objective_config=raw.get("objective_config"),
            metadata=dict(metadata),
            stub_candidates=list(raw.get("stub_candidates") or []),
            stub_answers=_stub_answers(raw.get("stub_answers"), task_id),
            extras={k: v for k, v in raw.items() if k not in known},
            score_range=score_range,
            declared_failure_score=failure,
            score_guide_errors=opt_in,
        )

    @property
    def failure_score(self) -> float:
        """What a failed rollout scores (see the module docstring)."""
        if self.declared_failure_score is not None:
            return self.declared_failure_score
        if self.score_range is not None and math.isfinite(self.score_range[0]):
            return self.score_range[0]
        return DEFAULT_FAILURE_SCORE

    @property
    def selection_split(self) -> str:
        """Which split chooses the best state: validation when present, else train."""
        return "validate" if self.validate_dataset else "train"

    @property
    def selection_dataset(self) -> Dataset:
        return self.validate_dataset or self.train_dataset
