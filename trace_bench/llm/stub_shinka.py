"""Stub answers in the format ShinkaEvolve asks for.

ShinkaEvolve's mutation prompts show the parent under a ``# Current program`` heading (lower-case
"program") in a fenced block, and ask for a reply in tagged sections: ``<NAME>``, ``<DESCRIPTION>``
and either ``<DIFF>`` (SEARCH/REPLACE blocks) or ``<CODE>`` (a fenced whole program, for full
rewrites and crossovers).  The change itself is the one SkyDiscover's stub makes: one
``EVOLVE-BLOCK`` body replaced.
"""

from __future__ import annotations

import random
import re

from trace_bench.llm.stub_formats import Propose
from trace_bench.llm.stub_skydiscover import program_answer

_HEADING = re.compile(r"^# Current program[ \t]*$", re.M)
_FENCE = re.compile(r"```([^\n`]*)\n(.*?)\n```", re.S)


def is_shinka(text: str) -> bool:
    return bool(_HEADING.search(text)) and ("<DIFF>" in text or "<CODE>" in text)


def answer(text: str, rng: random.Random, propose: Propose) -> str:
    headings = list(_HEADING.finditer(text))
    fence = _FENCE.search(text, headings[-1].end()) if headings else None
    if fence is None:
        return "<NAME>no_change</NAME>\n<DESCRIPTION>No program found to change.</DESCRIPTION>"
    diff = "<DIFF>" in text and "SEARCH/REPLACE" in text
    reply = program_answer(fence.group(2), fence.group(1), diff, rng, propose)
    head = (f"<NAME>stub_edit_{rng.randint(1, 999)}</NAME>\n"
            "<DESCRIPTION>Change one evolve block in the direction the feedback suggests.</DESCRIPTION>\n")
    if diff:
        start = reply.find("<<<<<<< SEARCH")
        return head + ("<DIFF>\n" + reply[start:] + "\n</DIFF>" if start >= 0 else "<DIFF>\n</DIFF>")
    code = _FENCE.search(reply)
    body = code.group(2) if code else fence.group(2)
    return f"{head}<CODE>\n```{fence.group(1)}\n{body}\n```\n</CODE>"
