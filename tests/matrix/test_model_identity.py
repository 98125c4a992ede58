"""Two different models never share a job id, whichever backend or variable picked the model."""

from __future__ import annotations

import pytest

from trace_bench.config.models import parse_config
from trace_bench.llm.providers import resolve_model
from trace_bench.matrix.identity import llm_identity

REAL = {"mode": "real", "tasks": ["internal:numeric_param"], "trainers": ["PrioritySearch"]}
ENV = ("TRACE_DEFAULT_LLM_BACKEND", "TRACE_CUSTOMLLM_MODEL", "TRACE_LITELLM_MODEL", "DEFAULT_LITELLM_MODEL")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("backend, variable", [("CustomLLM", "TRACE_CUSTOMLLM_MODEL"),
                                               ("LiteLLM", "TRACE_LITELLM_MODEL"),
                                               ("LiteLLM", "DEFAULT_LITELLM_MODEL")])
def test_the_model_a_variable_picks_is_part_of_the_identity(monkeypatch: pytest.MonkeyPatch, backend: str,
                                                             variable: str) -> None:
    monkeypatch.setenv("TRACE_DEFAULT_LLM_BACKEND", backend)
    identities, called = [], []
    for model in ("model-a", "model-b"):
        monkeypatch.setenv(variable, model)
        identities.append(llm_identity(parse_config(REAL)))
        called.append(resolve_model(None, None, None))
    assert called == ["model-a", "model-b"], "the providers call the model the variable names"
    assert [i["model"] for i in identities] == called, "job identity records the model really called"
    assert identities[0] != identities[1]


def test_the_config_model_wins_over_every_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRACE_DEFAULT_LLM_BACKEND", "CustomLLM")
    monkeypatch.setenv("TRACE_CUSTOMLLM_MODEL", "from-env")
    config = parse_config({**REAL, "llm": {"model": "from-config"}})
    assert llm_identity(config)["model"] == "from-config" == resolve_model("from-config", None, None)
