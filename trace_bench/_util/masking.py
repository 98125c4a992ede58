"""Secret masking at the boundary where data leaves the process (files, logs, UI).

Masking is by *value*: the values of environment variables whose names look secret, and
strings with known key shapes (``sk-...``, bearer tokens).  Key *names* such as ``max_tokens``
or ``token_totals`` are never touched, so token counts stay numbers.
"""

from __future__ import annotations

import os
import re
import threading

MASK = "***"
_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)", re.I)
_NOT_SECRET_NAMES = re.compile(r"(_ENV|_PATH|_FILE|_URL|_MODEL|_BASE|TOKENIZERS_PARALLELISM)$", re.I)
_KEY_PATTERNS = re.compile(
    r"(sk-(?:proj-|or-v1-|ant-)?[A-Za-z0-9_\-]{16,}"
    r"|dtn_[A-Za-z0-9_\-]{16,}"
    r"|hf_[A-Za-z0-9]{20,}"
    r"|AIza[0-9A-Za-z_\-]{30,}"
    r"|(?<=Bearer )[A-Za-z0-9_\-\.]{16,})"
)
_MIN_SECRET_LENGTH = 8
#: A key registered by the run (not found by its variable's name) may be shorter: from 4 characters
#: it is masked where it stands as a whole token (``key=abc123,`` but not ``xabc123y``), so a short
#: key does not blank every word that happens to contain it.  Literals that files are made of never.
_MIN_KEY_LENGTH = 4
_LITERALS = frozenset({"true", "false", "null", "none", "yes", "no", "nan", "inf"})
_TOKEN_CHARS = "A-Za-z0-9_\\-"

_extra: set[str] = set()
_short: dict[str, re.Pattern[str]] = {}
_lock = threading.Lock()


def secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(name)) and not _NOT_SECRET_NAMES.search(name)


def register_secret(value: str | None) -> None:
    """Mask ``value`` wherever it appears from now on (e.g. a per-run gateway token); a value of
    4 to 7 characters wherever it stands as a whole token."""
    if not value or len(value) < _MIN_KEY_LENGTH or value.lower() in _LITERALS:
        return
    with _lock:
        if len(value) >= _MIN_SECRET_LENGTH:
            _extra.add(value)
        elif value not in _short:
            _short[value] = re.compile(f"(?<![{_TOKEN_CHARS}]){re.escape(value)}(?![{_TOKEN_CHARS}])")


_cache: tuple[object, int, list[str]] | None = None


def _environment_snapshot() -> object:
    """A cheap identity of the current environment (C-level copy of the raw byte mapping), so the
    values are recomputed only when the environment changed; masking runs on every written file."""
    data = getattr(os.environ, "_data", None)
    return frozenset(data.items()) if isinstance(data, dict) else tuple(os.environ.items())


def secret_values() -> list[str]:
    global _cache
    snapshot = _environment_snapshot()
    with _lock:
        cached = _cache
        extra_count = len(_extra)
        if cached is not None and cached[1] == extra_count and cached[0] == snapshot:
            return cached[2]
        extra = set(_extra)
    values = {v for k, v in os.environ.items() if secret_name(k) and v and len(v) >= _MIN_SECRET_LENGTH}
    ordered = sorted(values | extra, key=len, reverse=True)  # longest first: a secret containing another
    with _lock:
        _cache = (snapshot, extra_count, ordered)
    return ordered


#: every key shape above starts with (or follows) one of these: text without any skips the regex
_KEY_MARKERS = ("sk-", "dtn_", "hf_", "AIza", "Bearer ")


def mask_secrets(text: str) -> str:
    for value in secret_values():
        if value in text:
            text = text.replace(value, MASK)
    if _short:
        for value, pattern in list(_short.items()):
            if value in text:
                text = pattern.sub(MASK, text)
    if not any(marker in text for marker in _KEY_MARKERS):
        return text  # the substring checks run in C; the regex would scan every position
    return _KEY_PATTERNS.sub(MASK, text)
