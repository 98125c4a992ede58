"""The model's own tokenizer, where one is available offline, for the harness's token bounds.

OpenAI's models are counted with ``tiktoken``'s encoding of the model (``o200k_base`` for
``gpt-4o``/``gpt-5``/``o*``, ``cl100k_base`` for ``gpt-4``/``gpt-3.5``), read from
``TIKTOKEN_CACHE_DIR`` or from the copies LiteLLM bundles; nothing is ever downloaded (an encoding
that is not on disk means no tokenizer).  Only for OpenAI's own API (and OpenRouter's ``openai/``
models, whose usage OpenAI counts): a model name on another endpoint (a proxy, a local server
answering to ``gpt-4o-mini``) says nothing about the tokenizer behind it.  Everything else gets
the byte bound of :mod:`trace_bench.llm.tokens`.

Loading an encoding costs 0.2-0.5 s once per process; a real run whose models use one loads it in
the job template (:func:`preload_tokenizers`), so no job pays for it at its first call.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

from trace_bench.llm.tokens import TokenCounter

OPENAI_HOSTS = ("api.openai.com",)
_LOCK = threading.Lock()


def official_openai(model: str, base_url: str | None, provider: str | None) -> str | None:
    """The OpenAI model name behind ``model`` when its calls reach OpenAI's own API (directly or
    through OpenRouter), else None."""
    name = model
    if provider == "openrouter" or name.startswith("openrouter/"):
        name = name.removeprefix("openrouter/")
        return name.split("/", 1)[1] if name.startswith("openai/") else None
    if base_url and not any(host in base_url for host in OPENAI_HOSTS):
        return None
    if "/" in name:
        prefix, name = name.split("/", 1)
        if prefix != "openai":
            return None
    return name


def _cache_dirs() -> list[Path]:
    dirs = [Path(os.environ[name]) for name in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR") if os.environ.get(name)]
    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.origin:
        dirs.append(Path(spec.origin).parent / "litellm_core_utils" / "tokenizers")
    return dirs


def _local_copy(url: str) -> Path | None:
    key = hashlib.sha1(url.encode()).hexdigest()  # noqa: S324 - tiktoken's own cache key
    for directory in _cache_dirs():
        if (directory / key).is_file():
            return directory / key
    return None


@lru_cache(maxsize=8)
def _encoding(name: str) -> Any:
    """tiktoken's encoding ``name`` from a local copy, or None."""
    try:
        import tiktoken
        import tiktoken.load
        import tiktoken_ext.openai_public as public
    except ImportError:
        return None
    constructor = getattr(public, name, None)
    if constructor is None:
        return None
    original = public.load_tiktoken_bpe
    missing: list[str] = []

    def local_only(url: str, expected_hash: str | None = None) -> Any:
        path = _local_copy(url)
        if path is None:
            missing.append(url)
            raise FileNotFoundError(url)
        return tiktoken.load.load_tiktoken_bpe(str(path), expected_hash)

    with _LOCK:  # the constructor reads the loader from its module: swapped for this call only
        public.load_tiktoken_bpe = local_only
        try:
            return tiktoken.Encoding(**constructor())
        except Exception:  # no local copy, or one that does not match its hash
            return None
        finally:
            public.load_tiktoken_bpe = original


def tokenizer_for(model: str, base_url: str | None = None, provider: str | None = None) -> TokenCounter | None:
    """A function counting ``model``'s tokens in a text, or None when no tokenizer is at hand."""
    name = official_openai(model, base_url, provider)
    if name is None:
        return None
    try:
        import tiktoken.model
    except ImportError:
        return None
    try:
        encoding_name = tiktoken.model.encoding_name_for_model(name)
    except KeyError:
        return None
    encoding = _encoding(encoding_name)
    if encoding is None:
        return None
    return lambda text: len(encoding.encode(text, disallowed_special=()))


def preload_tokenizers(names: tuple[str, ...] = ("o200k_base", "cl100k_base")) -> None:
    """Load the encodings once (the job template of a real run on OpenAI's API)."""
    for name in names:
        _encoding(name)
