"""Text hidden in common encodings, decoded so the leakage scan can read it.

An optimizer that wants held-out answers in its state without the audit noticing writes them
encoded: base64 or hex (of the text, or of its zlib, gzip or raw-deflate compression), reversed, or
with JSON/Python string escapes (``\\u0041``, ``\\x41``).  :func:`decodings` finds such runs in a text and
returns what they decode to, labelled with the encodings peeled off (``base64+zlib``), a few layers
deep.  Only text that decodes to mostly printable characters is kept, and every step is bounded, so
a state full of random-looking strings costs the audit little.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import re
import zlib
from collections.abc import Iterator

MIN_ENCODED_CHARS = 16  # a shorter run of base64 or hex letters is too likely an ordinary word
MAX_DECODED_CHARS = 1 << 20  # what one run may decode to (a compression bomb stops here)
MAX_RUNS = 2000  # encoded runs tried per text
MAX_DEPTH = 3  # layers of encoding peeled off (base64 of zlib of hex ...)
MAX_TOTAL_CHARS = 8 << 20  # decoded text per call of decodings()

_BASE64 = re.compile(r"[A-Za-z0-9+/_-]{" + str(MIN_ENCODED_CHARS) + r",}={0,2}")
_HEX = re.compile(r"(?:[0-9a-fA-F]{2}){" + str(MIN_ENCODED_CHARS // 2) + r",}")
_ESCAPE = re.compile(r"\\(?:u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|U[0-9a-fA-F]{8}|[nrt\"'\\/])")


def _text(data: bytes) -> str | None:
    """``data`` as text if it is mostly printable UTF-8, else None."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not text:
        return None
    printable = sum(1 for char in text if char.isprintable() or char in "\n\r\t")
    return text if printable >= 0.9 * len(text) else None


def _inflated(data: bytes) -> Iterator[tuple[str, bytes]]:
    """``data`` decompressed, where it is zlib, gzip or raw deflate (bounded)."""
    for label, wbits in (("zlib", 15), ("gzip", 31), ("deflate", -15)):
        try:
            inflater = zlib.decompressobj(wbits)
            out = inflater.decompress(data, MAX_DECODED_CHARS)
        except zlib.error:
            continue
        if out:
            yield label, out


def _binary_runs(text: str) -> Iterator[tuple[str, bytes]]:
    """Runs of ``text`` that are base64 or hex, decoded to bytes."""
    tried = 0
    for match in _HEX.finditer(text):
        if tried >= MAX_RUNS:
            return
        tried += 1
        try:
            yield "hex", binascii.unhexlify(match.group(0))
        except (binascii.Error, ValueError):
            pass
    for match in _BASE64.finditer(text):
        if tried >= MAX_RUNS:
            return
        tried += 1
        run = match.group(0)
        if re.fullmatch(r"[0-9a-fA-F]+", run.rstrip("=")):
            continue  # hex, decoded above
        padded = run + "=" * (-len(run) % 4)
        for decode in (base64.b64decode, base64.urlsafe_b64decode):
            try:
                yield "base64", decode(padded)
                break
            except (binascii.Error, ValueError):
                continue


def _layers(text: str, depth: int) -> Iterator[tuple[str, str]]:
    if depth >= MAX_DEPTH:
        return
    for label, data in _binary_runs(text):
        found = [(label, data), *((f"{label}+{inner}", out) for inner, out in _inflated(data))]
        for name, raw in found:
            decoded = _text(raw[:MAX_DECODED_CHARS])
            if decoded is None:
                continue
            yield name, decoded
            for inner, deeper in _layers(decoded, depth + 1):
                yield f"{name}+{inner}", deeper


def decodings(text: str) -> list[tuple[str, str]]:
    """(encoding, decoded text) for what ``text`` hides: the whole text reversed, its string escapes
    resolved, and every base64 or hex run (compressed or not) that decodes to text, up to
    :data:`MAX_DEPTH` layers; bounded to :data:`MAX_TOTAL_CHARS` in all."""
    found: list[tuple[str, str]] = [("reversed", text[::-1])]
    if _ESCAPE.search(text):
        try:
            found.append(("escaped", codecs.decode(text.encode("utf-8", "backslashreplace"), "unicode_escape")))
        except (UnicodeDecodeError, ValueError):
            pass
    total = sum(len(t) for _, t in found)
    seen: set[str] = set()
    for label, decoded in _layers(text, 0):
        if decoded in seen:
            continue
        seen.add(decoded)
        total += len(decoded)
        if total > MAX_TOTAL_CHARS:
            break
        found.append((label, decoded))
    return found
