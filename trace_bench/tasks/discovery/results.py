"""An evaluator's result as a score, metrics and feedback, by the peers' own rules (job side).

**The score** is the rule OpenEvolve and SkyDiscover rank programs by: ``combined_score`` when the
result has one (a number, or text that reads as one), else the average of its numeric metrics
(booleans and NaN left out; a numeric ``error`` counts, as it does for them; OpenEvolve's MAP-Elites
feature dimensions left out where the folder's config is OpenEvolve's), so their failure shape
``{"error": 0.0}`` scores 0.0.  A result with no number at all, a non-finite score, an evaluation
that timed out and a program ShinkaEvolve's ``correct.json`` calls incorrect are failed evaluations:
the task's failure score (0.0 for task folders unless their config declares another, what the
peers give them), with feedback saying what happened.

**Metrics**: every finite number (booleans as 0/1) is kept with the job.  **Feedback**: the score,
the metrics, text values and artifacts, except wall-clock metrics (``eval_time``,
``execution_time_mean``, ``runtime_s``, ...) and ShinkaEvolve's private metrics: they are recorded
but never shown to the optimizer, because a number that changes from run to run in its prompt makes
two runs of one config differ and a replay miss its cache.  A task folder may ask for timing in the
feedback (``trace_bench.timing_in_feedback: true``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

_TIMING = re.compile(r"(?:^|[_.\-])(?:time|times|timing|elapsed|duration|runtime|latency|seconds|secs|sec|ms|"
                     r"wall|wallclock|walltime|timestamp)(?:[_.\-]|$)|time$", re.I)
_DURATION = re.compile(r"\b\d+(?:\.\d+)?\s?(?:s|ms|sec|secs|seconds)\b")
PRIVATE_PREFIX = "private."


def is_timing(name: str) -> bool:
    """Whether a metric's name says it measures wall-clock time (see the module doc)."""
    return bool(_TIMING.search(name))


def mask_durations(text: str) -> str:
    """``1.23s`` and the like replaced by ``<time>``: output tails shown as feedback stay the same
    from one run to the next."""
    return _DURATION.sub("<time>", text)


def fitness(metrics: Mapping[str, Any], features: tuple[str, ...] = ()) -> tuple[float | None, list[str]]:
    """The peers' score of ``metrics`` and, when it is an average, the names averaged (see the
    module doc); ``(None, [])`` when there is no number to score.  ``features``: OpenEvolve's MAP-Elites
    dimensions (``database.feature_dimensions``), left out of the average as OpenEvolve leaves them
    out, unless nothing else is left."""
    if "combined_score" in metrics:
        try:
            return float(metrics["combined_score"]), []
        except (TypeError, ValueError):
            pass
    values = {str(k): float(v) for k, v in metrics.items()
              if isinstance(v, (int, float)) and not isinstance(v, bool) and not math.isnan(float(v))}
    if not values:
        return None, []
    kept = {k: v for k, v in values.items() if k not in features} or values
    return math.fsum(kept.values()) / len(kept), sorted(kept)


@dataclass
class Outcome:
    """What one evaluation says: ``failed`` is empty for a scored evaluation, else why it failed."""

    score: float | None
    metrics: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    failed: str = ""
    status: str = "ok"


def _metrics_and_notes(raw: Mapping[str, Any], artifacts: Any, timing: bool) -> tuple[dict[str, float], list[str]]:
    metrics: dict[str, float] = {}
    notes: list[str] = []
    for key, value in raw.items():
        if isinstance(value, bool) or (isinstance(value, (int, float)) and math.isfinite(float(value))):
            metrics[str(key)] = float(value)
        elif isinstance(value, str) and (timing or not is_timing(str(key))):
            notes.append(f"{key}: {value[:500]}")
    if isinstance(artifacts, Mapping):
        for key, text in artifacts.items():
            if not timing and is_timing(str(key)):
                continue
            text = str(text)[:2000]
            notes.append(text if key in ("summary", "feedback", "text_feedback") else f"{key}: {text}")
    elif artifacts:
        notes.append(str(artifacts)[:2000])
    return metrics, notes


def interpret(value: Any, *, timing_in_feedback: bool = False, features: tuple[str, ...] = ()) -> Outcome:
    """The outcome of an evaluator's result: a ``{"metrics", "artifacts"}`` mapping from the sandbox
    (plus ``timed_out`` and ShinkaEvolve's ``correct``), or a split evaluator's ``score()`` dict;
    ``features`` as :func:`fitness` takes them."""
    if not isinstance(value, Mapping):
        return Outcome(None, failed=f"the evaluator's result is not a mapping ({type(value).__name__})",
                       status="invalid")
    if "metrics" in value and isinstance(value.get("metrics"), Mapping) and set(value) <= {
            "metrics", "artifacts", "timed_out", "correct"}:
        raw, artifacts = value["metrics"], value.get("artifacts")
    else:
        raw, artifacts = {k: v for k, v in value.items() if k != "artifacts"}, value.get("artifacts")
    metrics, notes = _metrics_and_notes(raw, artifacts, timing_in_feedback)
    score, averaged = fitness(raw, features)
    # a timed-out evaluation depends on the machine's load: never cached (status "timeout"); it keeps
    # a score only where the peers keep one (an earlier cascade stage's)
    timed_out = bool(value.get("timed_out"))
    if timed_out and "combined_score" not in raw:
        return Outcome(None, metrics, notes, failed="the evaluation timed out", status="timeout")
    if value.get("correct") is False:
        return Outcome(None, metrics, notes, failed="the evaluator marked the program incorrect (correct.json)",
                       status="timeout" if timed_out else "invalid")
    if score is None:
        return Outcome(None, metrics, notes, status="invalid",
                       failed="the evaluator's result has no combined_score and no numeric metric to average "
                              "(OpenEvolve and SkyDiscover score it 0.0)")
    if not math.isfinite(score):
        return Outcome(None, metrics, notes, failed=f"the evaluator's combined_score is not finite ({score})",
                       status="invalid")
    if averaged:
        notes.insert(0, f"(no combined_score reported: the average of {', '.join(averaged)}, as OpenEvolve and "
                        "SkyDiscover score it)")
    metrics["combined_score"] = score
    if timed_out:
        notes.insert(0, "(a later evaluation stage timed out: the score is the earlier stages')")
    return Outcome(score, metrics, notes, status="timeout" if timed_out else "ok")


def shown_metrics(metrics: Mapping[str, float], timing_in_feedback: bool) -> dict[str, float]:
    """The metrics the feedback lists: not the score itself, not private or (unless asked) timing ones."""
    return {k: v for k, v in metrics.items() if k != "combined_score" and not k.startswith(PRIVATE_PREFIX)
            and (timing_in_feedback or not is_timing(k))}
