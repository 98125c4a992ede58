"""Build a job's :class:`LLMSession` from the run's ``llm`` and ``budget`` blocks (the job's
specification holds them typed; a mapping, the block as JSON, is validated into its model).

Stub mode answers every role with the stub policy (no network, no key).  Real mode builds one
provider backend per role (``llm.roles`` may give the agent a different model than the
optimizer); see :mod:`trace_bench.llm.providers`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from trace_bench.config.model_names import ROLES
from trace_bench.config.models import BudgetConfig, LLMConfig
from trace_bench.llm.backend import Backend, StubBackend
from trace_bench.llm.budget import Budget
from trace_bench.llm.session import EventSink, LLMSession
from trace_bench.llm.sinks import SpendSink
from trace_bench.llm.stub import StubPolicy
from trace_bench.store.models import Spend


def build_budget(limits: BudgetConfig | Mapping[str, Any] | None, carried: Spend | None = None) -> Budget:
    """A job's :class:`Budget` from the config's block and what earlier attempts spent."""
    if not isinstance(limits, BudgetConfig):
        limits = BudgetConfig.model_validate(dict(limits or {}))
    return Budget(limits, carried=carried or Spend())


def build_session(
    *,
    mode: str,
    llm: LLMConfig | Mapping[str, Any] | None,
    budget: BudgetConfig | Mapping[str, Any] | None,
    seed: int,
    events: EventSink | None = None,
    carried: Spend | None = None,
    stub_candidates: Sequence[Any] = (),
    stub_answers: Mapping[str, str] | None = None,
    job_id: str = "",
    cache_path: str | None = None,
    journal: SpendSink | None = None,
) -> LLMSession:
    """``journal`` receives each training-phase call before it is sent and when it settled."""
    llm = LLMConfig.of(llm)
    if mode == "stub":
        policy = StubPolicy(seed=seed, candidates=list(stub_candidates), answers=dict(stub_answers or {}))
        backend = StubBackend(policy)
        backends: dict[str, Backend] = {role: backend for role in ROLES}
        session = LLMSession(backends, budget=build_budget(budget, carried), events=events)
        session.offline = True  # the stub answers before it is charged: budgets are checked exactly
    else:
        from trace_bench.llm.credentials import register_keys
        from trace_bench.llm.providers import build_real_session

        register_keys(llm)  # before any call: an answer that echoes the key is masked in every file of the job
        session = build_real_session(llm=llm, budget=build_budget(budget, carried), seed=seed, events=events,
                                     job_id=job_id)
    session.journal = journal
    if llm.cache != "off" and mode == "real":
        from trace_bench.llm.cache import LLMCache

        path = llm.cache_path or cache_path
        if not path:
            raise ValueError("llm.cache is on but no cache path is known")
        session.call_wrapper = LLMCache(path, llm.cache).wrapper()
        session.key_salt = f"|seed={seed}"  # jobs with other seeds draw their own samples
    return session


def stub_policy_of(session: LLMSession) -> StubPolicy | None:
    backend = session.backends.get("optimizer")
    return getattr(backend, "policy", None)
