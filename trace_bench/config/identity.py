"""A job's LLM identity: what makes two runs' LLM behaviour different (DESIGN §5).

The job id hashes it, so changing the model or the mode changes the job id; transport (base URL,
keys, timeouts, retries, concurrency) is left out on purpose, so moving a run to another endpoint
of the same model keeps its ids.  The identity is built from the config by one rule
(:meth:`LLMIdentity.of`) and embedded, frozen, in every job's specification; the model each role
calls is read from it by one rule too (:meth:`LLMIdentity.role_models`).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from trace_bench._util.keyed import KeyedModel
from trace_bench.config.model_names import ROLES, Role, configured_model
from trace_bench.config.models import LLMConfig


class RoleIdentity(BaseModel):
    """What a role's own settings change in its behaviour (unset: the run's)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    model: str | None = None
    provider: str | None = None
    temperature: float | None = None


class LLMIdentity(KeyedModel):
    """The mode, and in real mode the provider, the model (the one a role without its own calls,
    resolved from the original's environment variables when the config names none), the sampling
    temperature and each configured role's own.  Outside real mode the mode alone is the identity:
    it is written ``{"mode": "stub"}``, and read by key like the mapping it was (``identity["model"]``)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    mode: str | None = None
    provider: str | None = None
    model: str | None = None
    temperature: float | None = None
    roles: dict[Role, RoleIdentity] = Field(default_factory=dict)

    @model_serializer(mode="wrap")
    def _mode_alone_outside_real(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        if self.mode != "real":
            return {"mode": self.mode} if self.mode else {}
        data: dict[str, Any] = handler(self)
        return data

    @classmethod
    def of(cls, mode: str, llm: LLMConfig) -> LLMIdentity:
        """The identity of a run of ``mode`` with the ``llm`` block."""
        if mode != "real":
            return cls(mode=mode)
        roles = {role: RoleIdentity(model=settings.model, provider=settings.provider,
                                    temperature=settings.temperature)
                 for role, settings in sorted(llm.roles.items())}  # a role without a model calls ``model``
        # the models a job will really call, also when they come from the original's environment
        # variables (CustomLLM included): the same rule the providers use
        return cls(mode="real", provider=llm.provider, model=configured_model(llm.model),
                   temperature=llm.temperature, roles=roles)

    def role_models(self, mode: str = "") -> dict[str, str]:
        """The model each role calls: the role's own, else the run's; outside real mode the mode
        (``stub``) for every role (``mode``: the job's, for an identity written without one)."""
        if self.mode != "real":
            return {role: self.mode or mode or "stub" for role in ROLES}
        default = self.model or ""
        return {role: (self.roles[role].model if role in self.roles else None) or default for role in ROLES}
