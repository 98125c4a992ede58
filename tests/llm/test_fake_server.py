"""The fake OpenAI-compatible server: streaming as the openai SDK consumes it, /stats bookkeeping,
the package-level import, and the ``trace-bench fake-llm`` command."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import urllib.error
import urllib.request
from typing import Any

import pytest

from trace_bench.llm.fake_server import FakeLLMServer

openai = pytest.importorskip("openai")

MESSAGES = [{"role": "user", "content": "Say something."}]
REPLY = "The answer is  forty-two,\nsaid the server."


def _client(url: str) -> Any:
    return openai.OpenAI(base_url=url, api_key="unused", max_retries=0)


def _get(url: str, key: str | None = None) -> dict[str, Any]:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"} if key else {})
    with urllib.request.urlopen(request) as response:  # noqa: S310 - loopback only
        return json.loads(response.read())


def test_the_openai_sdk_receives_streamed_chunks_with_usage_last() -> None:
    with FakeLLMServer(script=[REPLY]) as server:
        chunks = list(_client(server.url).chat.completions.create(
            model="fake-model", messages=MESSAGES, stream=True, stream_options={"include_usage": True}))
        plain = _client(server.url).chat.completions.create(model="fake-model", messages=MESSAGES)
    content = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert len(content) > 3, "the text arrives in several deltas"
    assert "".join(content) == REPLY == plain.choices[0].message.content
    assert chunks[0].choices[0].delta.role == "assistant"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert all(c.usage is None for c in chunks[:-1])
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    usage = chunks[-1].usage
    assert (usage.prompt_tokens, usage.completion_tokens) == (plain.usage.prompt_tokens, plain.usage.completion_tokens)
    assert usage.total_tokens == plain.usage.total_tokens > 0


def test_streamed_stub_replies_carry_exact_usage_and_n_choices() -> None:
    with FakeLLMServer(seed=4) as streamed, FakeLLMServer(seed=4) as plain:
        chunks = list(_client(streamed.url).chat.completions.create(
            model="fake-model", messages=MESSAGES, n=2, stream=True, stream_options={"include_usage": True}))
        reference = _client(plain.url).chat.completions.create(model="fake-model", messages=MESSAGES, n=2)
    texts = {0: "", 1: ""}
    for chunk in chunks:
        for choice in chunk.choices:
            texts[choice.index] += choice.delta.content or ""
    assert [texts[0], texts[1]] == [c.message.content for c in reference.choices]
    assert chunks[-1].usage.completion_tokens == reference.usage.completion_tokens
    assert streamed.stats()["completion_tokens"] == plain.stats()["completion_tokens"]


def test_without_include_usage_no_chunk_carries_usage() -> None:
    with FakeLLMServer(script=[REPLY]) as server:
        chunks = list(_client(server.url).chat.completions.create(model="fake-model", messages=MESSAGES,
                                                                  stream=True))
    assert chunks and all(c.choices for c in chunks) and all(c.usage is None for c in chunks)


def test_stats_count_every_request_consistently_with_by_status() -> None:
    with FakeLLMServer(api_key="k") as server:
        assert _get(server.url + "/models", key="k")["data"][0]["id"] == "fake-model"
        client = openai.OpenAI(base_url=server.url, api_key="k", max_retries=0)
        client.chat.completions.create(model="fake-model", messages=MESSAGES)
        with pytest.raises(openai.AuthenticationError):
            openai.OpenAI(base_url=server.url, api_key="wrong", max_retries=0).chat.completions.create(
                model="fake-model", messages=MESSAGES)
        stats = _get(server.url + "/stats")
        after = server.stats()
    assert stats["requests"] == 4 == sum(stats["by_status"].values())
    assert stats["by_status"] == {"200": 3, "401": 1}
    assert stats["ok"] == 1 and stats["max_in_flight"] == 1
    assert after["requests"] == sum(after["by_status"].values()) == 4


def test_a_key_protected_server_refuses_a_wrong_key_on_every_route_but_stats() -> None:
    with FakeLLMServer(api_key="k") as server:
        for key in (None, "wrong"):
            with pytest.raises(urllib.error.HTTPError) as refused:
                _get(server.url + "/models", key=key)
            assert refused.value.code == 401
        assert _get(server.url + "/stats")["by_status"] == {"401": 2, "200": 1}


def test_a_server_with_known_models_lists_them_and_answers_404_for_others() -> None:
    with FakeLLMServer(models=["a", "b"]) as server:
        assert [m["id"] for m in _get(server.url + "/models")["data"]] == ["a", "b"]
        client = openai.OpenAI(base_url=server.url, api_key="unused", max_retries=0)
        assert client.chat.completions.create(model="b", messages=MESSAGES).choices
        with pytest.raises(openai.NotFoundError, match="model 'c' not found"):
            client.chat.completions.create(model="c", messages=MESSAGES)


def test_package_import_is_lazy_and_works() -> None:
    code = ("import sys, trace_bench.llm\n"
            "assert 'trace_bench.llm.fake_server' not in sys.modules and 'http.server' not in sys.modules\n"
            "from trace_bench.llm import FakeLLMServer\n"
            "from trace_bench.llm.fake_server import FakeLLMServer as Direct\n"
            "assert FakeLLMServer is Direct\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_the_command_serves_streams_to_the_sdk() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "trace_bench", "fake-llm", "--port", "0", "--seed", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()  # the URL is the first line, printed once it listens
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1"), url
        chunks = list(_client(url).chat.completions.create(model="fake-model", messages=MESSAGES, stream=True))
        assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        stats = _get(url + "/stats")
        assert stats["requests"] == 2 and stats["by_status"] == {"200": 2}
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _post(url: str, body: dict[str, Any], key: str | None = None) -> tuple[int, dict[str, Any]]:
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {key}"} if key else {})}
    request = urllib.request.Request(f"{url}/chat/completions", data=json.dumps(body).encode(), headers=headers)
    try:
        with urllib.request.urlopen(request) as response:  # noqa: S310 - loopback only
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_max_tokens_cuts_the_answer_as_a_provider_does() -> None:
    long = "word " * 200
    with FakeLLMServer(script=[long]) as server:
        _, free = _post(server.url, {"model": "m", "messages": MESSAGES})
        _, cut = _post(server.url, {"model": "m", "messages": MESSAGES, "max_tokens": 7})
    assert free["choices"][0]["finish_reason"] == "stop" and free["usage"]["completion_tokens"] == 250
    assert cut["choices"][0]["finish_reason"] == "length" and cut["usage"]["completion_tokens"] == 7
    assert long.startswith(cut["choices"][0]["message"]["content"])


def test_a_public_model_list_a_revoked_key_and_a_spent_quota() -> None:
    with FakeLLMServer(api_key="right", public_models=True, refuse_after=1) as server:
        assert [m["id"] for m in _get(f"{server.url}/models")["data"]] == ["fake-model"], "no key needed"
        assert _post(server.url, {"model": "m", "messages": MESSAGES})[0] == 401, "completions need it"
        assert _post(server.url, {"model": "m", "messages": MESSAGES}, key="right")[0] == 200
        status, body = _post(server.url, {"model": "m", "messages": MESSAGES}, key="right")
        assert (status, body["error"]["message"]) == (401, "the key was revoked"), "after one completion"
        server.reinstate()
        assert _post(server.url, {"model": "m", "messages": MESSAGES}, key="right")[0] == 200
    with FakeLLMServer(refuse_after=0, refusal="quota") as server:
        status, body = _post(server.url, {"model": "m", "messages": MESSAGES})
    assert (status, body["error"]["code"]) == (429, "insufficient_quota")


def test_unparseable_answers_and_a_denser_tokenizer() -> None:
    with FakeLLMServer(unparseable_rate=1.0, token_factor=1.5) as server:
        _, answer = _post(server.url, {"model": "m", "messages": [{"role": "user", "content": "x" * 40}],
                                       "max_tokens": 100})
    text = answer["choices"][0]["message"]["content"]
    assert "{" not in text and "<" not in text and "```" not in text, "in no format a caller asks for"
    assert answer["usage"]["prompt_tokens"] == 24  # ("user: " + 40 characters: ceil(46 / 4) + 4) * 1.5
    assert answer["usage"]["completion_tokens"] == math.ceil(math.ceil(len(text) / 4) * 1.5)


def test_an_answer_whose_client_gave_up_is_served_and_counted_abandoned() -> None:
    with FakeLLMServer(latency=0.5) as server:
        client = openai.OpenAI(base_url=server.url, api_key="unused", max_retries=0, timeout=0.1)
        with pytest.raises(openai.APITimeoutError):
            client.chat.completions.create(model="fake-model", messages=MESSAGES)
        from tests.waiting import wait_until

        stats = wait_until(lambda: (lambda s: s if s["ok"] == 1 and s["in_flight"] == 0 else None)(server.stats()),
                           what="the abandoned request served")
    assert stats["abandoned"] == 1 and stats["completion_tokens"] > 0
