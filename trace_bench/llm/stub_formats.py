"""Stub answers in the formats external optimizer libraries ask for.

The stub policy (:mod:`trace_bench.llm.stub`) must give every library a well-formed answer that
proposes a *real* change, or stub runs of external trainers would stall on parse errors and show
flat curves.  This module recognises three prompt families and answers each in kind:

- DSPy signatures: ``[[ ## field ## ]]`` sections (ChatAdapter) or a JSON object (JSONAdapter),
  one value per declared output field; a field named like ``*instruction*`` gets a proposal for
  the current instruction shown in an input field.
- gepa reflection: the current component inside the first triple-backtick block; the new text goes
  back inside triple backticks.
- OpenEvolve: the ``# Current Program`` block; a SEARCH/REPLACE diff (diff mode) or the whole
  program (full-rewrite mode), with one ``EVOLVE-BLOCK`` body replaced.

``propose(value, name, rng)`` is the policy's proposal rule (task ``stub_candidates`` first), so
all formats share it.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable

Propose = Callable[[str, str, random.Random], str | None]

_FIELD_LIST = re.compile(r"^\d+\. `(?P<name>\w+)` \((?P<type>[^)]*)\)", re.M)
_MARKER = re.compile(r"\[\[ ## (\w+) ## \]\]")
_REQUIREMENTS = re.compile(r"\n\s*Respond with (the corresponding output fields|a JSON object).*\Z", re.S)
_ATTEMPT = re.compile(r"Instruction #(\d+):\s*(.*?)\s*»?$", re.M)
_SCORE = re.compile(r"Resulting Score #(\d+):\s*(-?[\d.]+(?:e-?\d+)?)", re.M)
_FENCE = re.compile(r"```[^\n`]*\n(.*?)\n?```", re.S)
_PROGRAM = re.compile(r"# Current Program\s*\n```[^\n]*\n(.*?)\n```", re.S)
BLOCK = re.compile(r"# EVOLVE-BLOCK-START(?P<label>[^\n]*)\n(?P<body>.*?)\n?# EVOLVE-BLOCK-END", re.S)


# -- DSPy ----------------------------------------------------------------------------------
def is_dspy(text: str) -> bool:
    return "Your output fields are:" in text and "[[ ## " in text


def _fields(system: str, heading: str) -> list[tuple[str, str]]:
    start = system.find(heading)
    if start < 0:
        return []
    block = system[start + len(heading):]
    stop = re.search(r"\n(Your \w+ fields are:|All interactions will be structured)", block)
    block = block[: stop.start()] if stop else block
    return [(m.group("name"), m.group("type").strip()) for m in _FIELD_LIST.finditer(block)]


def _input_values(user: str) -> dict[str, str]:
    values: dict[str, str] = {}
    parts = _MARKER.split(_REQUIREMENTS.sub("", user))
    for index in range(1, len(parts) - 1, 2):
        values[parts[index]] = parts[index + 1].strip("\n")
    return values


def _current_instruction(values: dict[str, str]) -> tuple[str, str]:
    """(name, text) of the input that shows the instruction being improved, if any."""
    for name, value in values.items():
        if "instruction" in name:
            attempts = dict(_ATTEMPT.findall(value))
            if not attempts:
                return name, value
            scores = {k: float(v) for k, v in _SCORE.findall(value)}
            best = max(attempts, key=lambda k: scores.get(k, float("-inf")))
            return name, attempts[best]
    return "", ""


def _value_for(field: str, kind: str, current: str, values: dict[str, str], rng: random.Random,
               propose: Propose, answer: Callable[[], str]) -> object:
    lowered = kind.lower()
    if "instruction" in field:
        return propose(current, "", rng) or current or answer()
    if "prefix" in field:
        return "Answer:"
    if lowered.startswith("dict"):
        names = _module_names(values)
        return {name: str(propose(current, name, rng) or "Follow the feedback closely.") for name in names}
    if lowered.startswith(("list", "tuple")):
        return [answer()]
    if lowered in ("int", "float"):
        return round(rng.uniform(0, 1), 3) if lowered == "float" else rng.randint(0, 3)
    if lowered == "bool":
        return rng.random() < 0.5
    return answer()


def _module_names(values: dict[str, str]) -> list[str]:
    raw = values.get("module_names", "")
    try:
        names = json.loads(raw)
    except ValueError:
        names = re.findall(r"[A-Za-z_][\w\.]*", raw)
    return [str(n) for n in names] or ["self"]


def dspy_answer(messages: list[dict[str, object]], rng: random.Random, propose: Propose,
                answer: Callable[[], str]) -> str:
    system = "\n".join(str(m.get("content", "")) for m in messages if m.get("role") == "system")
    users = [str(m.get("content", "")) for m in messages if m.get("role") == "user"]
    user = users[-1] if users else ""
    outputs = _fields(system, "Your output fields are:") or [("answer", "str")]
    values = _input_values(user)
    _, current = _current_instruction(values)
    produced = {name: _value_for(name, kind, current, values, rng, propose, answer) for name, kind in outputs}
    if "Respond with a JSON object" in user or "Outputs will be a JSON object" in system:
        return json.dumps(produced)
    sections = [f"[[ ## {name} ## ]]\n{json.dumps(v) if not isinstance(v, str) else v}" for name, v in produced.items()]
    return "\n\n".join([*sections, "[[ ## completed ## ]]"])


# -- gepa reflection -----------------------------------------------------------------------
def is_gepa_reflection(text: str) -> bool:
    return "I provided an assistant with the following instructions" in text or (
        "within ``` blocks" in text and "```" in text)


def gepa_answer(text: str, rng: random.Random, propose: Propose) -> str:
    match = _FENCE.search(text)
    current = match.group(1).strip("\n") if match else ""
    new = propose(current, "", rng) or current
    return f"Based on the feedback, here is the improved text:\n```\n{new}\n```"


# -- OpenEvolve ----------------------------------------------------------------------------
def is_openevolve(text: str) -> bool:
    return "# Current Program" in text and ("SEARCH/REPLACE" in text or "Rewrite the program" in text)


def _label(raw: str) -> tuple[str, str]:
    name, _, kind = raw.strip().partition(":")
    return name.strip(), kind.strip()


def openevolve_answer(text: str, rng: random.Random, propose: Propose) -> str:
    match = _PROGRAM.search(text)
    program = match.group(1) if match else ""
    language = re.search(r"# Current Program\s*\n```([^\n]*)", text)
    fence = language.group(1) if language else ""
    blocks = list(BLOCK.finditer(program)) or []
    order = list(range(len(blocks)))
    rng.shuffle(order)
    for index in order:
        block = blocks[index]
        name, _ = _label(block.group("label"))
        body = block.group("body")
        new = propose(body, name, rng)
        if new is None or str(new).strip() == body.strip():
            continue
        if "SEARCH/REPLACE" in text:
            return ("The feedback suggests changing this block.\n<<<<<<< SEARCH\n"
                    f"{body}\n=======\n{new}\n>>>>>>> REPLACE")
        rewritten = program[: block.start("body")] + str(new) + program[block.end("body"):]
        return f"A full rewrite with one block changed:\n```{fence}\n{rewritten}\n```"
    if "SEARCH/REPLACE" in text:
        return "No change is warranted by the feedback; keeping the program as it is."
    return f"```{fence}\n{program}\n```"
