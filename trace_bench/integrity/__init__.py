"""Did the optimizer cheat?  Searches of what a job produced for what it must never have seen.

:mod:`.leakage` scans the states a job ended with (its best and final prompts, code and any other
text parameter) for the held-out splits' inputs and reference answers.  It is plain Python on plain
data (a state's parameter values, a split's ``inputs`` and ``infos``), so it runs inside the job
process, the one place where both are at hand, and imports nothing of the harness.
"""

from __future__ import annotations

from trace_bench.integrity.leakage import (
    MIN_ANSWER_CHARS,
    MIN_ANSWER_WORDS,
    MIN_INPUT_WORDS,
    NGRAM_WORDS,
    Finding,
    LeakageScan,
    mask,
    normalise,
    scan_states,
)

__all__ = ["MIN_ANSWER_CHARS", "MIN_ANSWER_WORDS", "MIN_INPUT_WORDS", "NGRAM_WORDS", "Finding", "LeakageScan", "mask",
           "normalise", "scan_states"]
