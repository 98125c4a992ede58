"""Preflight: prove the key and the model with cheap requests before a real run's first job.

Without it a wrong key, a mistyped model or a server that is down failed every job one by one
(16 s a job) and the run still said "Run complete".  Before the first job of a real run, each
distinct target the roles resolve to (exactly as :mod:`trace_bench.llm.providers` will: config,
then the original's environment variables) is checked:

- an OpenAI-compatible endpoint (a ``base_url``, OpenAI's own API): ``GET /models`` asked twice,
  without a key and with it.  A listing that needs the key, names the model and takes the key
  proves both, at no cost.  A listing anyone may read (llama.cpp serves ``/models`` publicly while
  its completions need ``--api-key``) proves nothing about the key, so a one-token chat completion
  follows; so it does when there is no listing.  A model the listing does not name, when it names
  others, is refused with the names it lists: a server that answers any name (llama.cpp) would
  otherwise run the whole matrix under a model name that never answered.  ``llm.any_model: true``
  accepts it with a warning and checks with the completion instead.
- OpenRouter (whose model list is public) and every other provider LiteLLM routes itself
  (``anthropic/...``): a one-token completion, LiteLLM's in a child process, so the driver never
  imports LiteLLM (2 s).

A 401/403, a 404 for the model, a listing without the model or an endpoint that cannot be reached
raises :class:`PreflightError` (exit 2, one line naming the variable or the endpoint and what to
do; a key is never printed).  A 5xx, a 429 or a 400 passes (the endpoint is there and took the
key: jobs retry or report it).  Plain ``urllib`` for the OpenAI-compatible requests.  What the
requests spent is returned, for the run's events: it is never part of a job's spend, and it is
priced only with ``llm.prices`` (``cost_known`` false otherwise: the price map is LiteLLM's).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any

from trace_bench._util.errors import ConfigError
from trace_bench.config.model_names import ROLES
from trace_bench.store.models import Preflight as Check  # what a check found and spent is the run's event

OPENAI_API = "https://api.openai.com/v1"
OPENROUTER_API = "https://openrouter.ai/api/v1"
_PING = [{"role": "user", "content": "ping"}]
#: the variable the LiteLLM check's child process reads the key from
KEY_VARIABLE = "TRACE_BENCH_PREFLIGHT_KEY"


class PreflightError(ConfigError):
    """A real run's provider refused the key, does not know the model or cannot be reached; the
    message is about the endpoint and the variable, never about the config file."""

    def __init__(self, reason: str, hint: str | None = None) -> None:
        super().__init__(reason, key_path="preflight", hint=hint)

    def with_file(self, file: str | None) -> ConfigError:
        return self


@dataclass(frozen=True)
class Target:
    """One distinct thing to check.  ``key`` is never shown; ``key_variable`` names it."""

    endpoint: str
    model: str
    litellm_model: str
    key_variable: str
    key: str | None = field(repr=False, compare=False, hash=False)
    openai_compatible: bool = True
    list_models: bool = True


def targets(llm: dict[str, Any]) -> list[Target]:
    """The distinct (endpoint, model, key variable) of the roles, in role order."""
    from trace_bench.llm.providers import key_variable, resolve_key, role_endpoint

    found: dict[tuple[str, str, str], Target] = {}
    for role in ROLES:
        endpoint = role_endpoint(llm, role)
        provider, base_url, model, key_env = endpoint.provider, endpoint.base_url, endpoint.model, endpoint.key_env
        variable = key_variable(key_env, provider)
        key = resolve_key(key_env, provider)
        prefix = model.split("/", 1)[0] if "/" in model else "openai"
        if provider == "openrouter" or prefix == "openrouter":
            target = Target(base_url or OPENROUTER_API, model.removeprefix("openrouter/"), model, variable, key,
                            list_models=False)
        elif base_url:
            target = Target(base_url.rstrip("/"), model.removeprefix("openai/"), model, variable, key)
        elif prefix == "openai":
            target = Target(OPENAI_API, model.removeprefix("openai/"), model, variable, key)
        else:  # a provider LiteLLM resolves itself
            target = Target(f"{prefix} (LiteLLM)", model, model, variable, key, openai_compatible=False)
        found.setdefault((target.endpoint, target.model, target.key_variable), target)
    return list(found.values())


def run_preflight(llm: dict[str, Any], *, timeout_s: float = 10.0) -> list[Check]:
    """Check every target; :class:`PreflightError` for the first that fails."""
    timeout_s = min(timeout_s, float(llm.get("timeout_s") or timeout_s))
    return [check_target(target, timeout_s, llm.get("prices") or {}, any_model=bool(llm.get("any_model")))
            for target in targets(llm)]


def check_target(target: Target, timeout_s: float, prices: dict[str, Any] | None = None,
                 any_model: bool = False) -> Check:
    check = Check(endpoint=target.endpoint, model=target.model, key_variable=target.key_variable)
    started = time.perf_counter()
    try:
        if not target.openai_compatible:
            _litellm_ping(target, check, timeout_s, prices)
        else:
            listed, public = _list_models(target, check, timeout_s) if target.list_models else (None, False)
            if listed and target.model not in listed:
                _unlisted(target, check, sorted(listed), any_model)
            if listed is None or public or target.model not in listed:
                _ping(target, check, timeout_s, prices)
    finally:
        check.latency_s = round(time.perf_counter() - started, 6)
    return check


def _unlisted(target: Target, check: Check, names: list[str], any_model: bool) -> None:
    shown = ", ".join(names[:12]) + (f" and {len(names) - 12} more" if len(names) > 12 else "")
    if not any_model:
        raise PreflightError(f"{target.endpoint} does not list model {target.model!r} (it lists: {shown})",
                             hint="fix llm.model (or the role's model); for a server that answers any model "
                                  "name, set llm.any_model: true")
    check.warning = (f"{target.endpoint} does not list model {target.model!r} (it lists: {shown}); llm.any_model "
                     "accepts it: the server answers any name, and the run records this one")


def _headers(target: Target, with_key: bool = True) -> dict[str, str]:
    # as the jobs' client sends it: a server that needs no key gets a placeholder
    headers = {"Content-Type": "application/json", "User-Agent": "trace-bench-preflight"}
    if with_key:
        headers["Authorization"] = f"Bearer {target.key or 'no-key'}"
    return headers


def _http(target: Target, check: Check, method: str, path: str, body: dict[str, Any] | None,
          timeout_s: float, with_key: bool = True) -> tuple[int, Any]:
    """(status, parsed JSON or None); an unreachable endpoint raises :class:`PreflightError`."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(target.endpoint + path, data=data, method=method,
                                     headers=_headers(target, with_key))
    check.requests += 1
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:  # noqa: S310 - the configured endpoint
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as exc:
        status, raw = exc.code, exc.read()
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise PreflightError(f"cannot reach {target.endpoint} ({reason})",
                             hint="start the server or fix llm.base_url; --no-preflight skips this check") from None
    try:
        parsed = json.loads(raw) if raw else None
    except ValueError:
        parsed = None
    check.status = status
    return status, parsed


def _refused(target: Target, status: int, parsed: Any) -> None:
    if status in (401, 403):
        detail = _error_text(parsed) or ("unauthorized" if status == 401 else "forbidden")
        where = f"{target.endpoint} (model {target.model})"
        if target.key is None:
            raise PreflightError(f"{where} answered {status} ({detail}) and {target.key_variable} is not set",
                                 hint=f"export {target.key_variable} with a valid key, or name another variable "
                                      "with llm.api_key_env")
        raise PreflightError(f"{where} refused the key in {target.key_variable}: {status} {detail}",
                             hint=f"set {target.key_variable} to a valid key for this endpoint (or name another "
                                  "variable with llm.api_key_env)")
    if status == 404:
        raise PreflightError(f"{target.endpoint} does not know model {target.model!r} (404"
                             f"{': ' + _error_text(parsed) if _error_text(parsed) else ''})",
                             hint="fix llm.model (or the role's model); --no-preflight skips this check")


def _error_text(parsed: Any) -> str:
    if isinstance(parsed, dict):
        inner = parsed.get("error", parsed)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return " ".join(inner["message"].split())[:300]
        if isinstance(inner, str):
            return " ".join(inner.split())[:300]
    return ""


def _listing(status: int, parsed: Any) -> set[str] | None:
    if status != 200 or not isinstance(parsed, dict) or not isinstance(parsed.get("data"), list):
        return None
    return {str(item.get("id")) for item in parsed["data"] if isinstance(item, dict)}


def _list_models(target: Target, check: Check, timeout_s: float) -> tuple[set[str] | None, bool]:
    """``(model ids the endpoint lists, whether it lists them without a key)``; ids None when it has
    no listing (then a completion decides).  Asked without the key first: a listing anyone can read
    proves nothing about the key."""
    check.method = "models"
    status, parsed = _http(target, check, "GET", "/models", None, timeout_s, with_key=False)
    public = _listing(status, parsed)
    if public is not None:
        return public, True
    status, parsed = _http(target, check, "GET", "/models", None, timeout_s)
    if status in (401, 403):
        _refused(target, status, parsed)
    return _listing(status, parsed), False


def _ping(target: Target, check: Check, timeout_s: float, prices: dict[str, Any] | None) -> None:
    """A one-token completion: the key, the endpoint and the model in one request."""
    check.method = "completion"
    status, parsed = _http(target, check, "POST", "/chat/completions",
                           {"model": target.model, "messages": _PING, "max_tokens": 1}, timeout_s)
    _refused(target, status, parsed)
    if status == 200 and isinstance(parsed, dict):
        usage = parsed.get("usage") or {}
        _charge(check, target.litellm_model, _count(usage.get("prompt_tokens")),
                _count(usage.get("completion_tokens")), prices)
    elif status != 200:
        check.note = f"{status} {_error_text(parsed)}".strip()  # the endpoint answered and took the key


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _litellm_ping(target: Target, check: Check, timeout_s: float, prices: dict[str, Any] | None) -> None:
    """A one-token completion through LiteLLM, for a provider it resolves itself, in a child
    process (:mod:`trace_bench.llm.preflight_litellm`): the driver never imports LiteLLM.  The key
    goes to the child in its environment, never on its command line."""
    check.method = "completion"
    check.requests += 1
    env = dict(os.environ)
    if target.key:
        env[KEY_VARIABLE] = target.key
    request = json.dumps({"model": target.model, "timeout_s": timeout_s})
    try:
        child = subprocess.run([sys.executable, "-m", "trace_bench.llm.preflight_litellm"], input=request,
                               capture_output=True, text=True, env=env, timeout=timeout_s + 60, check=False)
        answer = json.loads(child.stdout.strip().splitlines()[-1])
    except (subprocess.TimeoutExpired, ValueError, IndexError, OSError) as exc:
        check.note = f"the check could not run ({type(exc).__name__}); the jobs will report the provider's answer"
        return
    status, kind, message = answer.get("status"), answer.get("kind"), str(answer.get("message") or "")
    check.status = status
    if kind == "auth":
        _refused(target, status or 401, {"error": message})
    elif kind == "not_found":
        _refused(target, 404, {"error": message})
    elif kind == "connection":
        raise PreflightError(f"cannot reach {target.endpoint} for model {target.model} ({message})",
                             hint="check the network and the provider; --no-preflight skips this check")
    elif kind == "other":
        check.note = message
    else:
        _charge(check, target.model, _count(answer.get("prompt_tokens")), _count(answer.get("completion_tokens")),
                prices)


def _charge(check: Check, model: str, prompt: int, completion: int, prices: dict[str, Any] | None) -> None:
    """The check's tokens, priced with ``llm.prices`` only (LiteLLM's price map would cost the
    driver LiteLLM's import): otherwise ``cost_known`` is false."""
    from trace_bench.llm.pricing import configured_price

    check.prompt_tokens += prompt
    check.completion_tokens += completion
    price = configured_price(model, prices)
    if price is None:
        check.cost_known = False
    elif prompt or completion:
        check.cost_usd += (prompt * float(price["input_per_mtok"]) + completion * float(price["output_per_mtok"])) / 1e6


def skip_reason(config: Any) -> str | None:
    """Why a run has no preflight (None: it has one)."""
    if config.mode != "real":
        return "stub mode"
    if config.llm.cache == "replay":
        return "replay from the cache"
    return None
