"""Build a job's :class:`LLMSession` from the run's ``llm`` and ``budget`` config.

Stub mode answers every role with the stub policy (no network, no key).  Real mode builds one
provider backend per role (``llm.roles`` may give the agent a different model than the
optimizer); see :mod:`trace_bench.llm.providers`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from trace_bench.llm.backend import Backend, StubBackend
from trace_bench.llm.budget import Budget, Spent
from trace_bench.llm.session import EventSink, LLMSession
from trace_bench.llm.stub import StubPolicy

ROLES = ("optimizer", "agent", "judge")


def build_budget(budget: dict[str, Any] | None, carried: Spent | None = None) -> Budget:
    budget = budget or {}
    return Budget(
        llm_calls=budget.get("llm_calls"), tokens=budget.get("tokens"), usd=budget.get("usd"),
        wall_s=budget.get("wall_s"), carried=carried or Spent(),
    )


def build_session(
    *,
    mode: str,
    llm: dict[str, Any] | None,
    budget: dict[str, Any] | None,
    seed: int,
    events: EventSink | None = None,
    carried: Spent | None = None,
    stub_candidates: Sequence[Any] = (),
    job_id: str = "",
) -> LLMSession:
    llm = llm or {}
    if mode == "stub":
        policy = StubPolicy(seed=seed, candidates=list(stub_candidates))
        backend = StubBackend(policy)
        backends: dict[str, Backend] = {role: backend for role in ROLES}
        return LLMSession(backends, budget=build_budget(budget, carried), events=events)
    from trace_bench.llm.providers import build_real_session

    return build_real_session(llm=llm, budget=build_budget(budget, carried), seed=seed, events=events, job_id=job_id)


def stub_policy_of(session: LLMSession) -> StubPolicy | None:
    backend = session.backends.get("optimizer")
    return getattr(backend, "policy", None)
