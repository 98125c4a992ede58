"""Stub answers in the formats SkyDiscover's searches ask for.

- A solution prompt (diff or full rewrite): the program is the first fenced block after the last
  ``# Current Program`` heading (SkyDiscover puts parent-selection notes and metrics between the
  two); one ``EVOLVE-BLOCK`` body is replaced, as a SEARCH/REPLACE diff or a whole program.
- An EvoX search-strategy prompt (the program defines ``EvolvedProgramDatabase``): only a number
  in the strategy changes, never a task candidate, so the strategy stays a valid database.
- AdaEvolve's paradigm request: a JSON array of ideas with the fields it parses.
- EvoX's variation-operator request: the two ``### EXPLORATION`` / ``### EXPLOITATION`` sections.
"""

from __future__ import annotations

import json
import random
import re

from trace_bench.llm.stub_formats import BLOCK, Propose, openevolve_answer
from trace_bench.llm.stub_mutations import mutate_code_literal

_HEADING = re.compile(r"^# Current Program[ \t]*$", re.M)
_FENCE = re.compile(r"```([^\n`]*)\n(.*?)\n```", re.S)


def is_skydiscover(text: str) -> bool:
    return bool(_HEADING.search(text)) and "COMBINED_SCORE" in text or is_paradigm_request(text) \
        or is_operator_request(text)


def is_paradigm_request(text: str) -> bool:
    return '"approach_type"' in text and "breakthrough" in text.lower()


def is_operator_request(text: str) -> bool:
    return "### EXPLORATION (diverge_label)" in text or "EXPLORATION (diverge_label)" in text


def answer(text: str, rng: random.Random, propose: Propose) -> str:
    if is_paradigm_request(text):
        return json.dumps([{"idea": f"Local refinement round {rng.randint(1, 9)}",
                            "description": "Perturb the current construction and keep changes that raise the score.",
                            "what_to_optimize": "combined_score", "cautions": "Keep the construction valid.",
                            "approach_type": "numpy.random"}])
    if is_operator_request(text):
        return ("### EXPLORATION (diverge_label)\nEXAMPLES OF DIFFERENT approaches:\n- **Construction**: grids, "
                "rows, random restarts\n\n### EXPLOITATION (refine_label)\nEXAMPLES OF REFINEMENT strategies:\n"
                "- **Polish**: more iterations, smaller steps\n")
    headings = list(_HEADING.finditer(text))
    fence = _FENCE.search(text, headings[-1].end()) if headings else None
    if fence is None:
        return "No program found to change."
    return program_answer(fence.group(2), fence.group(1), "SEARCH/REPLACE" in text, rng, propose)


def program_answer(program: str, language: str, diff: bool, rng: random.Random, propose: Propose) -> str:
    """One EVOLVE-BLOCK of ``program`` changed, as SEARCH/REPLACE blocks (``diff``) or a fenced
    whole program (shared with :mod:`.stub_shinka`)."""
    if "EvolvedProgramDatabase" in program:
        def propose_number(current: str, name: str, generator: random.Random) -> str | None:
            return mutate_code_literal(current, generator)

        propose = propose_number
    if not list(BLOCK.finditer(program)):  # an unmarked program is one block
        program = f"# EVOLVE-BLOCK-START\n{program}\n# EVOLVE-BLOCK-END"
        rewritten = openevolve_answer(_as_openevolve(program, language, diff), rng, propose)
        return rewritten.replace("# EVOLVE-BLOCK-START\n", "").replace("\n# EVOLVE-BLOCK-END", "")
    return openevolve_answer(_as_openevolve(program, language, diff), rng, propose)


def _as_openevolve(program: str, language: str, diff: bool) -> str:
    task = "Use SEARCH/REPLACE blocks." if diff else "Rewrite the program."
    return f"# Current Program\n```{language}\n{program}\n```\n{task}"
