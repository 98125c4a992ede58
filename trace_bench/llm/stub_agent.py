"""The stub policy as an *agent*: it answers a task's question under the instruction it is given.

A prompt-optimization task trains the instruction an LLM agent follows.  A stub that answered with
a random word whatever the instruction said scored a flat 0 for every arm, so no prompt optimizer
could show anything in stub mode.  This agent simulates a model whose answers depend on the
instruction, in two ways:

- **It follows the instruction's format.**  Asked for Yes or No, it answers Yes or No; shown
  options such as ``(A)``, it picks one; asked for a number (or ``#### <number>``), it gives one;
  asked for a final ``Answer:`` line (the tasks' frames ask), it writes one.  So an instruction that
  fixes the format already earns chance-level credit on yes/no and multiple-choice tasks.
- **Its accuracy grows with the instruction's quality** (:func:`competence`): one point for each
  kind of advice an instruction gives (reason step by step; check the answer; state the answer
  format; be concise; use the context or the question's facts), from 0.1 with none to at most
  0.85.  A task that ships ``stub_answers`` (question -> gold answer) lets the agent know the
  answers: it answers a question correctly when the question's fixed draw (per seed) falls below
  its competence, so each piece of advice an optimizer adds turns more questions right, and no
  instruction makes it perfect.  Without ``stub_answers`` it can only guess in the right format.

Deterministic: the draw for a question depends on the seed and the question only, and a guess on
the seed, the instruction and the question, so one instruction always gets the same answers within
a job, and a better one never loses a question it knew.
This shows that an optimizer's instruction changes move the score; it cannot show which
instructions a real model would follow (docs/adding-task.md, "Prompt tasks in stub mode").
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Mapping

#: kinds of advice an instruction may give, each worth one step of competence
ADVICE = {
    "reasoning": re.compile(r"step[- ]by[- ]step|\breason|\bthink|work through|break (?:the|it|down)", re.I),
    "checking": re.compile(r"\bcheck|\bverify|double-check|carefully|eliminate", re.I),
    "format": re.compile(r"format|only the final|final (?:answer|number)|answer (?:with|as|only)|\(x\)|yes or no|"
                         r"letter|numeric|####|without units|exactly", re.I),
    "concise": re.compile(r"concise|\bshort|\bbrief|precise|without extra|do not explain|\bonly\b", re.I),
    "grounding": re.compile(r"context|paragraph|\bfacts?\b|entit|each option|the question", re.I),
}
BASE_COMPETENCE = 0.1
STEP = 0.15
MAX_COMPETENCE = 0.85

_YES_NO = re.compile(r"\byes\b[^.\n]{0,12}\bno\b", re.I)
_OPTION = re.compile(r"\(([A-J])\)")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_ANSWER_LINE = re.compile(r"Answer:\s*<", re.I)
_HASHES = re.compile(r"####")


def competence(instruction: str) -> float:
    """How often an agent under ``instruction`` knows a question's answer (see the module docstring)."""
    kinds = sum(1 for pattern in ADVICE.values() if pattern.search(instruction or ""))
    return min(MAX_COMPETENCE, BASE_COMPETENCE + STEP * kinds)


def _normal(text: str) -> str:
    return " ".join(str(text).split())


def known_answer(user: str, answers: Mapping[str, str]) -> tuple[str, str] | None:
    """(question, gold answer) of the longest known question the prompt contains, if any."""
    prompt = _normal(user)
    best: tuple[str, str] | None = None
    for question, answer in answers.items():
        key = _normal(question)
        if key and key in prompt and (best is None or len(key) > len(best[0])):
            best = (key, str(answer))
    return best


def _draw(seed: int, question: str) -> float:
    digest = hashlib.sha256(f"stub-agent|{seed}|{question}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _guess(instruction: str, user: str, rng: random.Random) -> str:
    """An answer in the format the instruction or the question asks for, without knowing it."""
    asked = f"{instruction}\n{user}"
    options = sorted(set(_OPTION.findall(user)))
    if options:
        return f"({rng.choice(options)})"
    if _YES_NO.search(asked):
        return rng.choice(("Yes", "No"))
    numbers = _NUMBER.findall(user[-2000:])
    if numbers and (re.search(r"number|numeric|digit|####|how many|compute", asked, re.I) or rng.random() < 0.5):
        return rng.choice(numbers)
    words = re.findall(r"[A-Za-z]{3,}", user[-500:])
    return rng.choice(words) if words else "unknown"


def _framed(answer: str, instruction: str, user: str) -> str:
    """The reply around an answer, in the form the prompt asks for (a final ``Answer:`` line unless
    ``#### <number>`` is asked for)."""
    reasoning = "Working through the question step by step.\n" if ADVICE["reasoning"].search(instruction) else ""
    if _HASHES.search(instruction) or (_HASHES.search(user) and not _ANSWER_LINE.search(user)):
        return f"{reasoning}#### {answer}"
    return f"{reasoning}Answer: {answer}"


def agent_answer(instruction: str, user: str, *, seed: int, answers: Mapping[str, str]) -> str:
    """The agent's reply to ``user`` under ``instruction`` (the system message)."""
    known = known_answer(user, answers) if answers else None
    if known is not None and _draw(seed, known[0]) < competence(instruction):
        return _framed(known[1], instruction, user)
    digest = hashlib.sha256(f"stub-guess|{seed}|{instruction}|{_normal(user)}".encode()).digest()
    return _framed(_guess(instruction, user, random.Random(int.from_bytes(digest[:8], "big"))), instruction, user)
