"""DSPy answers read as leniently as every other trainer reads its LLM's: an answer that does not
parse is a failed proposal, not a failed job.

DSPy's adapters raise ``AdapterParseError`` when an answer lacks the ``[[ ## field ## ]]``
sections (and is no JSON object either); MIPROv2's instruction proposer, COPRO, SIMBA and a native
program's predictors let it end ``compile``, so one rambling answer of a small model failed the
whole job.  :func:`lenient_adapter` parses like DSPy's ``ChatAdapter`` (with its JSON fallback) and,
where both fail, fills each output field from the raw answer: a text field gets the whole answer,
another type its empty value (``0``, ``False``, ``[]``, ``{}``; else None).  The proposal is then
a candidate like any other: the library evaluates it and it scores what it scores (a garbled
instruction, a wrong answer).  Each such answer is counted (``on_unparsed``) and the job records
how many there were.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

_MARKER = re.compile(r"\[\[\s*##\s*\w+\s*##\s*\]\]")
_EMPTY = (str, int, float, bool, list, dict, tuple, set)


def fallback_fields(signature: Any, completion: str) -> dict[str, Any]:
    """Each output field of ``signature`` from an answer no adapter could parse."""
    text = _MARKER.sub("", completion or "").strip()
    fields: dict[str, Any] = {}
    for name, field in signature.output_fields.items():
        annotation = getattr(field, "annotation", str)
        if annotation is str or annotation is None:
            fields[name] = text
        elif annotation in _EMPTY:
            fields[name] = annotation()
        else:
            fields[name] = None
    return fields


def lenient_adapter(on_unparsed: Callable[[str], None]) -> Any:
    """A ``dspy.ChatAdapter`` that never raises ``AdapterParseError``; ``on_unparsed`` gets the
    start of each answer it had to fill in."""
    import dspy
    from dspy.utils.exceptions import AdapterParseError

    class LenientAdapter(dspy.ChatAdapter):
        def parse(self, signature: Any, completion: str) -> dict[str, Any]:
            try:
                return dict(super().parse(signature, completion))
            except AdapterParseError:
                pass
            try:
                return dict(dspy.JSONAdapter().parse(signature, completion))
            except Exception:  # noqa: BLE001 - not JSON either
                pass
            on_unparsed(str(completion)[:200])
            return fallback_fields(signature, completion)

        def __call__(self, lm: Any, lm_kwargs: dict[str, Any], signature: Any, demos: list[dict[str, Any]],
                     inputs: dict[str, Any]) -> list[dict[str, Any]]:
            try:
                return list(super().__call__(lm, lm_kwargs, signature, demos, inputs))
            except AdapterParseError as exc:  # an empty answer, refused before parsing
                response = str(getattr(exc, "lm_response", "") or "")
                on_unparsed(response[:200])
                return [fallback_fields(signature, response)]

    return LenientAdapter()
