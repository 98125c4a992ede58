"""Scoring a free-form reply with reasoning-gym's own verifier.

The guide's only job beyond calling ``score_answer`` is to find the final answer in the reply:
the content of the last ``<answer>`` tag, else what follows the last ``Answer:`` marker, else the
last line.  The feedback says which of these was used, so an optimizer can learn the format.
"""

from __future__ import annotations

import re
from typing import Any

from trace_bench.tasks.guide import Guide

_TAG = re.compile(r"<answer>(.*?)</answer>", re.S | re.I)
_MARKER = re.compile(r"(?:final\s+)?answer\s*:", re.I)


def extract_answer(response: Any, *, multiline: bool = False) -> tuple[str | None, str]:
    """(answer or None, how it was found).  ``multiline`` keeps every line after the marker."""
    text = "" if response is None else str(response)
    tags = _TAG.findall(text)
    if tags:
        return _clean(tags[-1]), "the last <answer> tag"
    markers = list(_MARKER.finditer(text))
    if markers:
        rest = text[markers[-1].end():].strip()
        if not multiline:
            rest = rest.splitlines()[0] if rest else ""
        return _clean(rest), "the text after the last 'Answer:'"
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return None, "an empty reply"
    return _clean("\n".join(lines) if multiline else lines[-1]), "the last line (no 'Answer:' line found)"


def _clean(text: str) -> str:
    text = text.strip()
    for wrapper in ("**", "`", "*"):
        if len(text) > 2 * len(wrapper) and text.startswith(wrapper) and text.endswith(wrapper):
            text = text[len(wrapper):-len(wrapper)].strip()
    return text


def _shown(text: Any, limit: int = 600) -> str:
    text = str(text)
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


class VerifierGuide(Guide):
    """``reference`` is the reasoning-gym entry (question, answer, metadata) the item came from."""

    def __init__(self, dataset: Any, *, multiline: bool = False) -> None:
        self.dataset = dataset
        self.multiline = multiline

    def get_feedback(self, query: Any, response: Any, reference: Any = None,
                     **kwargs: Any) -> tuple[float, str]:
        if not isinstance(reference, dict) or "answer" not in reference:
            raise ValueError("VerifierGuide needs the reasoning-gym entry as reference")
        answer, source = extract_answer(response, multiline=self.multiline)
        score = float(self.dataset.score_answer(answer, reference)) if answer is not None else 0.0
        if score >= 1.0:
            return 1.0, f"Correct (answer taken from {source})."
        if answer is None:
            return 0.0, f"No answer found: the reply was empty. Expected {_shown(reference['answer'])}."
        partial = f" (verifier partial credit {score:.2f})" if score > 0 else ""
        return score, (f"Incorrect{partial}: the answer taken from {source} was {_shown(answer)}; "
                       f"expected {_shown(reference['answer'])}.")

    def __deepcopy__(self, memo: dict[int, Any]) -> VerifierGuide:
        return VerifierGuide(self.dataset, multiline=self.multiline)  # the dataset is read-only: share it
