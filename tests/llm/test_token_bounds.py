"""The harness's token estimates are bounds: never below what a provider counts.

With the model's own tokenizer where one is at hand (OpenAI's models on OpenAI's API), else the
text's UTF-8 bytes; both plus the chat format's overhead.  A real run on OpenAI's API loads the
tokenizers once in its job template.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from trace_bench.config.loader import parse_config
from trace_bench.llm.providers import build_backend
from trace_bench.llm.tokens import (
    MESSAGE_OVERHEAD,
    REQUEST_OVERHEAD,
    estimate_prompt_tokens,
    prompt_token_bound,
)
from trace_bench.runner.warm import TOKENIZERS, peek_preload, preload_for

MESSAGES = [{"role": "system", "content": "You optimize parameters. Answer in JSON."},
            {"role": "user", "content": "x = 3.14159265358979; the feedback says: too high by 0.25 (ε ≈ 1e-3)."}]


def test_the_byte_bound_is_above_any_byte_level_count_and_the_four_characters_rule() -> None:
    text_bytes = sum(len(m["content"].encode()) for m in MESSAGES)
    assert prompt_token_bound(MESSAGES) == text_bytes + MESSAGE_OVERHEAD * len(MESSAGES) + REQUEST_OVERHEAD
    # the rule of thumb undercounts digit-heavy text: a cut-off call used to be charged below the bill
    assert prompt_token_bound(MESSAGES) > 2 * estimate_prompt_tokens(MESSAGES)


def test_openai_models_on_openais_api_are_counted_with_their_tokenizer() -> None:
    pytest.importorskip("tiktoken")
    official = build_backend({"model": "gpt-4o-mini"}, "optimizer", 0)
    elsewhere = build_backend({"model": "gpt-4o-mini", "base_url": "http://127.0.0.1:9/v1"}, "optimizer", 0)
    bound = official.prompt_bound(MESSAGES)
    if official._counter is None:
        pytest.skip("no local copy of o200k_base (LiteLLM's bundled encodings are missing)")
    counted = sum(official._counter(m["content"]) for m in MESSAGES)
    # OpenAI documents 3 tokens a message and 3 for the reply on top of the contents
    assert counted + 3 * len(MESSAGES) + 3 <= bound == counted + MESSAGE_OVERHEAD * len(MESSAGES) + REQUEST_OVERHEAD
    assert bound < elsewhere.prompt_bound(MESSAGES) == prompt_token_bound(MESSAGES), \
        "a model name on another endpoint says nothing about its tokenizer"


def test_a_real_run_on_openais_api_loads_the_tokenizers_in_its_template(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    for llm, expected in (("{model: gpt-4o-mini}", True), ("{provider: openrouter, model: openai/gpt-4o}", True),
                          ("{model: gpt-4o-mini, base_url: 'http://127.0.0.1:9/v1'}", False),
                          ("{model: anthropic/claude-3-5-haiku-20241022}", False)):
        config.write_text(f"mode: real\ntasks: [internal:numeric_param]\nllm: {llm}\n")
        assert (TOKENIZERS in peek_preload(config)) is expected, llm
        loaded = parse_config({"mode": "real", "tasks": ["internal:numeric_param"], "llm": yaml.safe_load(llm)})
        assert (TOKENIZERS in preload_for(loaded)) is expected, llm
    config.write_text("tasks: [internal:numeric_param]\nllm: {model: gpt-4o-mini}\n")
    assert TOKENIZERS not in peek_preload(config), "a stub run counts with the stub's own rule"
