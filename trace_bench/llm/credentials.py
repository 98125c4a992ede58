"""Credentials of a real-mode run, checked before any job starts.

Without this a run with no API key ran every job until the provider answered ``Missing
credentials`` (about 16 s a job).  The check resolves each role's model, endpoint and key exactly
as :mod:`trace_bench.llm.providers` will (config, then the original's environment variables) and
names the variable to set.  An endpoint on this machine (loopback, such as the fake server or a
local vLLM) may need no key.  ``llm.cache: replay`` never calls a provider and needs none.

:func:`register_keys` makes every key the run uses a secret of the masking layer, by value: the
masker knows secret-looking variable *names* and key *shapes*, but the variable ``api_key_env``
names is a secret whatever it is called, and a provider or proxy may echo it into an answer.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from trace_bench._util.errors import ConfigError
from trace_bench.config.model_names import ROLES
from trace_bench.config.models import LLMConfig

_LITELLM_OWN = ("openai", "openrouter")


def is_loopback_url(url: str | None) -> bool:
    """True for an http(s) URL whose host is this machine (localhost, 127.0.0.0/8, ::1)."""
    if not url:
        return False
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return False
    if not host:
        return False
    if host.lower() == "localhost" or host.lower().endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _named_key_variables(llm: LLMConfig) -> list[str]:
    """The variables ``llm.api_key_env`` and the roles' ``api_key_env`` name, sorted."""
    named = {llm.api_key_env} | {settings.api_key_env for settings in llm.roles.values()}
    return sorted(name for name in named if name)


def register_keys(llm: LLMConfig | Mapping[str, Any] | None) -> None:
    """Mask, from now on in this process, the value of every variable ``llm.api_key_env`` and each
    role's ``api_key_env`` name, whatever the name, and the key each role sends (the original's
    fallbacks, ``OPENAI_API_KEY`` and the like, when no variable is named).  Called by the driver
    before its preflight and by every process that builds a real session, before its first call;
    the gateway and the in-process external trainers share their job's process.  A key of 4 to 7
    characters is masked where it stands as a whole token (:func:`~trace_bench._util.masking.register_secret`)."""
    from trace_bench._util.masking import register_secret
    from trace_bench.llm.providers import resolve_key, role_endpoint

    llm = LLMConfig.of(llm)
    for name in _named_key_variables(llm):
        register_secret(os.environ.get(name))
    for role in ROLES:
        with contextlib.suppress(Exception):  # a malformed section: the validation reports it
            endpoint = role_endpoint(llm, role)
            register_secret(resolve_key(endpoint.key_env, endpoint.provider))


def _litellm_missing(model: str) -> list[str]:
    """Key variables LiteLLM needs for a provider it resolves itself (``anthropic/...``)."""
    try:
        import litellm
    except ImportError:  # pragma: no cover - litellm is a core dependency
        return []
    found = litellm.validate_environment(model=model)
    if found.get("keys_in_environment"):
        return []
    return [k for k in found.get("missing_keys") or [] if k.endswith(("_KEY", "_TOKEN"))]


def missing_credentials(llm: LLMConfig | Mapping[str, Any]) -> list[str]:
    """One message per distinct missing credential among the roles (empty when all are there)."""
    from trace_bench.llm.providers import key_variable, resolve_key, role_endpoint

    llm = LLMConfig.of(llm)
    problems: dict[str, str] = {}
    for role in ROLES:
        endpoint = role_endpoint(llm, role)
        provider, base_url, model, key_env = endpoint.provider, endpoint.base_url, endpoint.model, endpoint.key_env
        if is_loopback_url(base_url):
            continue
        prefix = model.split("/", 1)[0] if "/" in model else "openai"
        if not key_env and not base_url and prefix not in _LITELLM_OWN and provider in (None, prefix):
            missing = _litellm_missing(model)
            if missing:
                variable = " or ".join(missing)
                problems.setdefault(variable, f"{variable} is not set (model {model}, role {role})")
            continue
        if not resolve_key(key_env, provider):
            variable = key_variable(key_env, provider)
            where = f"endpoint {base_url}" if base_url else f"model {model}"
            problems.setdefault(variable, f"{variable} is not set ({where}, role {role})")
    return list(problems.values())


def unset_key_variables(config: Any) -> list[str]:
    """Warnings for a real run whose ``api_key_env`` (of ``llm`` or a role) names a variable that
    is not set, where :func:`check_credentials` lets it pass (an endpoint on this machine may need
    no key): a typo in the name, or a shell that never exported it."""
    if config.mode != "real" or config.llm.cache == "replay":
        return []
    return [f"llm.api_key_env names {name}, which is not set: requests go out without a key (export it, or "
            "remove api_key_env for a server that needs none)"
            for name in _named_key_variables(config.llm) if not os.environ.get(name)]


def check_credentials(config: Any) -> None:
    """ConfigError naming the missing variable(s) when a real-mode run could not call its provider."""
    if config.mode != "real" or config.llm.cache == "replay":
        return
    problems = missing_credentials(config.llm)
    if problems:
        raise ConfigError(f"real mode needs an API key: {'; '.join(problems)}", key_path="llm",
                          hint="export the variable, or name another one with llm.api_key_env; a server that "
                               "needs no key can be given any value")
