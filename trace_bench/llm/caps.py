"""``llm.max_tokens`` as a hard cap on every request, whoever builds it.

Optimizers and libraries send their own completion limit (OptoPrime and TextGrad ask for 4,096
tokens; DSPy, gepa and OpenEvolve through the gateway ask for what they like).  A config's
``llm.max_tokens`` (or a role's) bounds them all: a request is sent with the lower of the
caller's value and the cap, or with the cap when the caller gave none, so a slow local model
cannot generate for minutes past what the run allows, and a call cut off in flight is charged at
most the cap (:mod:`trace_bench.llm.session`).
"""

from __future__ import annotations

from typing import Any

LIMIT_KEYS = ("max_tokens", "max_completion_tokens")


def capped(params: dict[str, Any], cap: int | None) -> dict[str, Any]:
    """``params`` with every completion limit at most ``cap`` (``max_tokens: cap`` added when the
    caller set none); unchanged when there is no cap."""
    if cap is None:
        return params
    out = dict(params)
    given = False
    for key in LIMIT_KEYS:
        value = out.get(key)
        if value is None:
            continue
        given = True
        try:
            out[key] = min(int(value), int(cap))
        except (TypeError, ValueError):  # not a number: the provider would refuse it; send the cap
            out[key] = int(cap)
    if not given:
        out["max_tokens"] = int(cap)
    return out


def completion_limit(params: dict[str, Any]) -> int | None:
    """The completion limit a request carries (None: the provider's own default)."""
    limits = []
    for key in LIMIT_KEYS:
        try:
            if params.get(key) is not None:
                limits.append(int(params[key]))
        except (TypeError, ValueError):
            continue
    return min(limits) if limits else None
