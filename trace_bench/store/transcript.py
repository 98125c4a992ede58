"""The transcript of a job, ``artifacts/transcript.jsonl`` (lines: :class:`TranscriptEntry`).

Written by the job's LLM session as each call ends (answered, failed, unanswered or cut off by
the job's end), so a killed job keeps the transcript of every call that ended before the kill.
Each line is one ``write`` to a file opened with ``O_APPEND`` (whole lines from any thread, as the
spend journal does); it is never fsync'd: the transcript is for reading, the spend journal is what
accounting trusts.

Bounds, so that a long real run cannot fill a disk with prompts: each text (a message's content,
an answer) longer than ``max_chars`` keeps its first and last halves around :data:`CUT_MARKER`;
once the file holds ``max_bytes``, later entries are written without texts (``omitted`` says why),
so the file still lists every call.  Texts are masked (``_util.masking``) before they are cut, so a
key cut in two is never left half visible, and the whole line is masked again when it is written.

Replay-consistent: a ``run --replay`` of a recorded run writes the same entries (apart from ``ts``,
``latency_s`` and ``cached``).  The one part of a prompt that differs between two processes, the
memory address in an object's repr (``<... object at 0x7f3e388719d0>``, which ``opto`` prints),
is written as ``at 0x...``.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from trace_bench._util.masking import mask_secrets
from trace_bench.store.events import read_lines, utc_now
from trace_bench.store.jsonio import dumps
from trace_bench.store.models.transcript import CUT_MARKER, TranscriptEntry

#: default bound of one text of an entry (``llm.transcript_max_chars``)
DEFAULT_MAX_CHARS = 20_000
#: default bound of one job's transcript file (``llm.transcript_max_mb``)
DEFAULT_MAX_MB = 50.0


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def without_addresses(text: str) -> str:
    """``text`` with object addresses (`` at 0x7f...``) written as `` at 0x...``."""
    return _ADDRESS.sub(" at 0x...", text) if " at 0x" in text else text


def cut_text(text: str, max_chars: int) -> tuple[str, int]:
    """``(text, characters left out)``: ``text`` itself when it fits, else its head and tail
    around the marker."""
    if len(text) <= max_chars:
        return text, 0
    head = max_chars // 2
    tail = max_chars - head
    left_out = len(text) - head - tail
    return text[:head] + CUT_MARKER.format(cut=left_out, total=len(text)) + text[len(text) - tail:], left_out


def content_text(content: Any) -> str:
    """A message's content as text: a string as it is, a list of content parts joined (text parts
    as they are, others named as ``[<type>]``), anything else as ``str``; None as empty."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence) and not isinstance(content, (bytes, bytearray)):
        parts = []
        for part in content:
            if isinstance(part, Mapping):
                text = part.get("text")
                parts.append(text if isinstance(text, str) else f"[{part.get('type') or 'part'}]")
            else:
                parts.append(str(part))
        return "\n".join(parts)
    return str(content)


class TranscriptLog:
    """Appender of one job attempt's transcript; thread-safe.  See the module docstring."""

    def __init__(self, path: str | Path, *, max_chars: int = DEFAULT_MAX_CHARS,
                 max_mb: float = DEFAULT_MAX_MB) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.max_chars = max(1, int(max_chars))
        self.max_bytes = int(max_mb * 1024 * 1024)
        self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self._lock = threading.Lock()
        self._written = os.fstat(self._fd).st_size

    def write(self, call: Mapping[str, Any], messages: Sequence[Any], answers: Sequence[str]) -> None:
        """One entry: ``call`` holds its fields but the texts (``call``, ``step``, ``role``, ...),
        ``messages`` the request's messages as sent (mappings with ``role`` and ``content``),
        ``answers`` the texts received."""
        cut = 0
        shown_messages = []
        for message in messages:
            role = message.get("role", "") if isinstance(message, Mapping) else ""
            content = message.get("content") if isinstance(message, Mapping) else message
            text, left_out = cut_text(without_addresses(mask_secrets(content_text(content))), self.max_chars)
            shown_messages.append({"role": str(role or ""), "content": text})
            cut += left_out
        shown_answers = []
        for answer in answers:
            text, left_out = cut_text(mask_secrets(str(answer)), self.max_chars)
            shown_answers.append(text)
            cut += left_out
        head = {"call": call.get("call"), "ts": utc_now()}
        data = self._line({**head, **call, "messages": shown_messages, "answers": shown_answers,
                           **({"cut_chars": cut} if cut else {})})
        with self._lock:
            if self._fd is None:
                return
            if self._written + len(data) > self.max_bytes:
                data = self._line({**head, **call, "messages": [], "answers": [],
                                   "omitted": f"the transcript reached its limit of {self.max_bytes / 2**20:g} MB "
                                   "(llm.transcript_max_mb)"})
            os.write(self._fd, data)
            self._written += len(data)

    @staticmethod
    def _line(entry: dict[str, Any]) -> bytes:
        text = dumps({**entry, "schema_version": TranscriptEntry.SCHEMA_VERSION}, indent=None)
        return (mask_secrets(text) + "\n").encode("utf-8")

    def close(self) -> None:
        with self._lock:
            fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


def read_transcript(path: str | Path, *, step: int | None = None) -> Iterator[TranscriptEntry]:
    """The entries of a transcript file (of one ``step`` only, when given: the other lines are not
    parsed); a torn last line or an invalid line is skipped."""
    entries = read_lines(path, lambda _: TranscriptEntry, contains=None if step is None else f'"step": {step}, ')
    return entries if step is None else (entry for entry in entries if entry.step == step)


#: the start of every line :class:`TranscriptLog` writes: its call number, time and step
_HEAD = re.compile(r'\{"call": \d+, "ts": "[^"]*", "step": (\d+),')


def transcript_steps(path: str | Path) -> dict[int, int]:
    """How many calls the transcript at ``path`` holds per step, read from each line's start (no
    line is parsed whole); empty without a transcript."""
    counts: dict[int, int] = {}
    try:
        handle = open(path, encoding="utf-8", errors="replace")  # noqa: SIM115
    except FileNotFoundError:
        return counts
    with handle:
        for line in handle:
            head = _HEAD.match(line)
            if head is not None and line.endswith("\n"):  # a line still being written is not counted yet
                step = int(head.group(1))
                counts[step] = counts.get(step, 0) + 1
    return counts
