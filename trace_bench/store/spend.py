"""The spend journal of a job, ``jobs/<job_id>/llm_spend.jsonl`` (lines: :class:`SpendEntry`).

Why a journal.  What an attempt spent must survive a kill at any instant: ``--resume`` carries
it into the next attempt's budget, and a killed job's record and curve must show what the
provider bills.  The ``llm_call`` events are written when a call came back, so a call the
provider received but whose answer a kill cut off was never counted.  The journal is written on
both sides of every LLM call (both phases): a ``sent`` line *before* the request leaves, a
``settled`` line when it is accounted.  A ``sent`` line without its ``settled`` one is a call cut
off in flight (:func:`cut_off_calls`): charged as one call, its prompt's estimated tokens plus a
completion up to the request's limit (``completion_cap``, the run's ``max_tokens`` cap) and the
cost of both, flagged estimated.  :func:`read_spend` is the budget's view: ``train`` lines only.

Each line is one ``write`` to a file opened with ``O_APPEND`` (whole lines, from any thread, and a
kill of the process loses nothing written: the line is in the kernel before the request leaves).
With ``durable=True`` (real mode, where calls cost money) each ``sent`` line is also fsync'd, on a
thread of the journal while the request is in flight, and :meth:`SpendJournal.settled` waits for
that fsync: a call returns only once its ``sent`` line is on disk, so after a power cut too the
carried calls are at least those that returned (a ``settled`` line the cut lost leaves its call
charged as cut off; the next ``sent`` line's fsync makes it durable).  One fsync per call, not
two, and off the call's path: 2.4 ms a call on this machine's ext4 idle, 12 ms under load, which
used to add to every real call.  A stub call costs nothing and is only written.
"""

from __future__ import annotations

import itertools
import json
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from trace_bench.store.atomic import fsync_dir
from trace_bench.store.models import Spend, SpendEntry


def _finite(value: float) -> float:
    return float(value) if value == value and abs(value) != float("inf") else 0.0


class SpendJournal:
    """Appender of one job attempt's ``llm_spend.jsonl``; thread-safe, cheap per line."""

    def __init__(self, path: str | Path, *, durable: bool) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.durable = durable
        self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self._numbers = itertools.count(1)
        self._lock = threading.Lock()
        # one thread, so fsyncs complete in order (the directory's before the first line's)
        self._syncer = ThreadPoolExecutor(1, thread_name_prefix="spend-fsync") if durable else None
        self._syncs: dict[int, Future[None]] = {}
        self._phases: dict[int, str] = {}
        if self._syncer is not None:
            self._syncer.submit(fsync_dir, self.path.parent)

    def sent(self, prompt_tokens: int, *, phase: str = "train", completion_cap: int | None = None,
             usd_if_cut: float = 0.0) -> int:
        """Journal a call about to be sent, with what it costs if it is cut off; returns its
        number for :meth:`settled`.  When durable, the line's fsync runs while the request is in
        flight."""
        with self._lock:
            call = next(self._numbers)
            self._phases[call] = phase
        line: dict[str, object] = {"call": call, "event": "sent", "phase": phase, "prompt_tokens": int(prompt_tokens)}
        if completion_cap is not None:
            line["completion_cap"] = int(completion_cap)
        if usd_if_cut:
            line["usd_if_cut"] = _finite(usd_if_cut)
        fd = self._write(line)
        if fd is not None and self._syncer is not None:
            with self._lock:
                try:
                    self._syncs[call] = self._syncer.submit(os.fsync, fd)
                except RuntimeError:  # closed meanwhile (a thread the job left behind): nothing to wait for
                    pass
        return call

    def settled(self, call: int, *, llm_calls: int, tokens: int, usd: float) -> None:
        """Journal what call ``call`` cost (``llm_calls=0`` for a call that failed), once its
        ``sent`` line is durable."""
        with self._lock:
            pending = self._syncs.pop(call, None)
            phase = self._phases.pop(call, "train")
        if pending is not None:
            pending.result()
        # the keys are SpendEntry's fields
        self._write(dict(call=call, event="settled", phase=phase, llm_calls=int(llm_calls), tokens=int(tokens),
                         usd=_finite(usd)))

    def _write(self, line: dict[str, object]) -> int | None:
        data = (json.dumps({**line, "schema_version": SpendEntry.SCHEMA_VERSION}) + "\n").encode()
        fd = self._fd
        if fd is None:
            return None
        os.write(fd, data)
        return fd

    def close(self) -> None:
        """Wait for pending fsyncs, then close the file."""
        if self._syncer is not None:
            self._syncer.shutdown(wait=True)
        with self._lock:
            fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


def _entries(path: str | Path) -> list[SpendEntry] | None:
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None
    entries = []
    for line in text.splitlines():
        try:
            entries.append(SpendEntry.model_validate_json(line))
        except ValueError:  # a torn last line, or not a journal line
            continue
    return entries


def _unsettled(entries: list[SpendEntry]) -> list[SpendEntry]:
    sent: dict[int, SpendEntry] = {}
    for entry in entries:
        if entry.event == "sent":
            sent[entry.call] = entry
        else:
            sent.pop(entry.call, None)
    return list(sent.values())


def cut_off_charge(entry: SpendEntry) -> tuple[int, int, float]:
    """``(prompt tokens, completion tokens, usd)`` charged for a call cut off in flight: the
    prompt as sent, a completion up to the request's limit, the cost of both."""
    return entry.prompt_tokens, entry.completion_cap or 0, entry.usd_if_cut


def cut_off_calls(path: str | Path) -> list[SpendEntry]:
    """The ``sent`` lines of the journal at ``path`` that never settled: calls cut off in flight,
    of both phases (empty without a journal)."""
    entries = _entries(path)
    return _unsettled(entries) if entries else []


def read_spend(path: str | Path, phase: str = "train") -> Spend | None:
    """The spend of ``phase`` the journal at ``path`` records (``train``: what a budget counts;
    ``measure``: the harness's measurement calls; no wall clock), calls cut off in flight charged as
    :func:`cut_off_charge` says; None when there is no journal (a job directory written before it
    existed)."""
    entries = _entries(path)
    if entries is None:
        return None
    phases = {entry.call: entry.phase for entry in entries if entry.event == "sent"}
    calls, tokens, usd = 0, 0, 0.0
    for entry in entries:
        if entry.event == "settled" and phases.get(entry.call, entry.phase) == phase:
            calls, tokens, usd = calls + entry.llm_calls, tokens + entry.tokens, usd + entry.usd
    for entry in _unsettled(entries):
        if entry.phase == phase:
            prompt, completion, cost = cut_off_charge(entry)
            calls, tokens, usd = calls + 1, tokens + prompt + completion, usd + cost
    # rounded as a job's results round their cost columns: a sum of many small float costs differs
    # from theirs in the 17th digit, and the two must read alike (a resume carries this one)
    return Spend(llm_calls=calls, tokens=tokens, usd=round(usd, 10))
