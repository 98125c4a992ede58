"""The stub policy: a deterministic, offline stand-in for an LLM that still optimizes.

It answers in the format the caller asks for (OptoPrime/OPRO JSON suggestions, TextGrad
``<IMPROVED_VARIABLE>`` tags and critiques, DSPy signatures, gepa reflections, OpenEvolve diffs and
rewrites (:mod:`trace_bench.llm.stub_formats`), SkyDiscover's and ShinkaEvolve's prompts
(:mod:`.stub_skydiscover`, :mod:`.stub_shinka`), plain agent answers) and proposes *real* changes
(:mod:`trace_bench.llm.stub_mutations`): numeric steps sized by the feedback, one changed literal
in code, moved numbers in number lists, and the plausible-but-imperfect values a task ships as
``stub_candidates``.  It never knows a task's answer, so reaching an optimum takes several steps
and stub runs separate trainers by how they search.  Determinism: every answer is a function of
(seed, request content, per-request sample index).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from trace_bench.llm import stub_formats as formats
from trace_bench.llm import stub_shinka, stub_skydiscover
from trace_bench.llm.stub_agent import agent_answer
from trace_bench.llm.stub_mutations import (
    NUMBER_LIST,
    OVERSHOOT,
    Hint,
    feedback_hint,
    mutate_code_literal,
    mutate_number_list,
    numeric_proposal,
)

_VARIABLE_LINE = re.compile(r"^\((?P<type>[A-Za-z_][\w\.]*)\) (?P<name>[A-Za-z_]\w*)=(?P<value>.*)$")
_CODE_VARIABLE = re.compile(r"^\(code\) (?P<name>[A-Za-z_]\w*):", re.MULTILINE)
_SECTION = re.compile(r"^#(Instruction|Code|Documentation|Variables|Constraints|Inputs|Others|Outputs|Feedback)\s*$", re.M)

PROMPT_EDITS = (
    "Think step by step before answering.",
    "Answer with only the final answer.",
    "Check the answer against the question before replying.",
    "Be concise and precise.",
    "Use the exact output format requested.",
)


@dataclass
class Variable:
    name: str
    type: str
    value: str


def _base_name(py_name: str) -> str:
    return re.sub(r"\d+$", "", py_name)


def parse_variables(prompt: str) -> list[Variable]:
    """The ``#Variables`` section of an OptoPrime/OPRO prompt as (name, type, current text)."""
    block = _section(prompt, "Variables")
    if block is None:
        return []
    variables: list[Variable] = []
    lines = block.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        code = _CODE_VARIABLE.match(line)
        if code:
            body = [line[code.end():]]
            i += 1
            while i < len(lines) and not _VARIABLE_LINE.match(lines[i]) and not _CODE_VARIABLE.match(lines[i]):
                body.append(lines[i])
                i += 1
            variables.append(Variable(code.group("name"), "code", "\n".join(body).strip("\n")))
            continue
        plain = _VARIABLE_LINE.match(line)
        if plain:
            body = [plain.group("value")]
            i += 1
            while i < len(lines) and not _VARIABLE_LINE.match(lines[i]) and not _CODE_VARIABLE.match(lines[i]):
                body.append(lines[i])
                i += 1
            variables.append(Variable(plain.group("name"), plain.group("type"), "\n".join(body).rstrip("\n")))
            continue
        i += 1
    return variables


def _opro_latest(prompt: str) -> dict[str, Any]:
    """The newest ``{"variables": ..., "feedback": ...}`` example of an OPRO prompt."""
    decoder = json.JSONDecoder()
    latest: dict[str, Any] = {}
    for match in re.finditer(r'\{\s*"variables"\s*:', prompt):
        try:
            example, _ = decoder.raw_decode(prompt, match.start())
        except ValueError:
            continue
        if isinstance(example, dict) and isinstance(example.get("variables"), dict):
            latest = example
    return latest


def parse_opro_variables(prompt: str) -> list[Variable]:
    """The current variables of an OPRO prompt: the last ``{"variables": ...}`` example."""
    latest = _opro_latest(prompt).get("variables")
    variables: list[Variable] = []
    for name, value in (latest or {}).items():
        if isinstance(value, bool):
            kind = "bool"
        elif isinstance(value, int):
            kind = "int"
        elif isinstance(value, float):
            kind = "float"
        else:
            value = value if isinstance(value, str) else json.dumps(value)
            kind = "code" if "def " in value else "str"
        variables.append(Variable(str(name), kind, str(value)))
    return variables


def _section(prompt: str, name: str) -> str | None:
    matches = list(_SECTION.finditer(prompt))
    for index, match in enumerate(matches):
        if match.group(1) == name:
            end = matches[index + 1].start() if index + 1 < len(matches) else len(prompt)
            return prompt[match.end():end].strip("\n")
    return None


def feedback_text(prompt: str) -> str:
    """The part of a prompt that holds the feedback on the current value, by prompt family:
    OptoPrime's ``#Feedback`` section (without its memory of past attempts), the newest OPRO
    example, TextGrad's ``<FEEDBACK>``/``<OBJECTIVE_FUNCTION>``; else the whole prompt."""
    section = _section(prompt, "Feedback")
    if section is not None:
        return section.split("\n\nBelow are some", 1)[0]
    latest = _opro_latest(prompt)
    if latest:
        return str(latest.get("feedback", ""))
    tags = re.findall(r"<(FEEDBACK|OBJECTIVE_FUNCTION)>(.*?)</\1>", prompt, re.S)
    if tags:
        return tags[-1][1]
    return prompt


def _whole_value(short: str, prompt: str) -> str | None:
    """The full text of a value TextGrad shortened to ``head (...) tail``, if the prompt shows it."""
    head, _, tail = short.partition(" (...) ")
    start = prompt.find(head)
    while start >= 0 and head and tail:
        end = prompt.find(tail, start + len(head))
        if end < 0:
            return None
        whole = prompt[start:end + len(tail)]
        if " (...) " not in whole:
            return whole
        start = prompt.find(head, start + 1)
    return None


def kind_of(text: str) -> str:
    """The literal kind a value shown as text has: int, float, code or str."""
    stripped = text.strip()
    if re.fullmatch(r"-?\d+", stripped):
        return "int"
    if re.fullmatch(r"-?(\d+\.\d*|\d*\.\d+)(e-?\d+)?", stripped):
        return "float"
    return "code" if "def " in text else "str"


def canonical_prompt(text: str) -> str:
    """The prompt with its lines sorted and node indices dropped.

    ``opto`` lists graph nodes in an order that depends on object addresses, numbers them with
    a process-global counter and prints object reprs with their address; none of that may
    change the stub's answer, or two runs of one config would differ.
    """
    text = re.sub(r" at 0x[0-9a-fA-F]+", "", text)  # reprs of objects carry their address
    return "\n".join(sorted(re.sub(r"(?<=[A-Za-z_])\d+\b", "", line) for line in text.splitlines()))


@dataclass
class StubPolicy:
    """Deterministic proposals; ``candidates`` come from the task's ``stub_candidates``."""

    seed: int = 0
    candidates: Sequence[Any] = field(default_factory=list)
    mutation_scale: float = 0.5
    #: question -> gold answer, from a task's ``stub_answers`` (:mod:`trace_bench.llm.stub_agent`)
    answers: Mapping[str, str] = field(default_factory=dict)

    _seen: dict[str, int] = field(default_factory=dict, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def _rng(self, canonical: str, sample_index: int, salt: str = "") -> random.Random:
        digest = hashlib.sha256(f"{self.seed}|{sample_index}|{salt}|{canonical}".encode()).digest()
        return random.Random(int.from_bytes(digest[:8], "big"))

    def _occurrence(self, canonical: str) -> int:
        """How often this policy has answered this canonical prompt before.

        Prompts that differ only in what canonicalization drops (node counters, addresses) must
        still get fresh answers each time they recur, or a search would stall on one proposal.
        Counting per prompt, not per call, keeps answers independent of the order in which a
        library issues unrelated calls (textgrad walks its graph through sets ordered by address;
        rollouts run in threads)."""
        key = hashlib.sha256(canonical.encode()).hexdigest()
        with self._lock:
            count = self._seen.get(key, 0)
            self._seen[key] = count + 1
        return count

    # -- entry point ----------------------------------------------------------------------
    def respond(self, messages: list[dict[str, Any]], sample_index: int = 0, **params: Any) -> str:
        text = "\n".join(str(m.get("content", "")) for m in messages)
        canonical = canonical_prompt(text)
        occurrence = self._occurrence(f"{sample_index}|{canonical}")
        rng = self._rng(canonical, sample_index, f"{params.get('temperature', '')}|{occurrence}")
        hint = feedback_hint(feedback_text(text))

        def propose(current: str, name: str, rng: random.Random) -> str | None:
            return self.propose_text(current, name, rng, hint)

        if stub_shinka.is_shinka(text):
            return stub_shinka.answer(text, rng, propose)
        if stub_skydiscover.is_skydiscover(text):
            return stub_skydiscover.answer(text, rng, propose)
        if formats.is_openevolve(text):
            return formats.openevolve_answer(text, rng, propose)
        if formats.is_dspy(text):
            return formats.dspy_answer(messages, rng, propose, lambda: self._agent(messages))
        if formats.is_gepa_reflection(text):
            return formats.gepa_answer(text, rng, propose)
        if "<IMPROVED_VARIABLE>" in text:
            return self._textgrad_update(text, rng, hint)
        if "#Variables" in text and "suggestion" in text:
            return self._suggestion(text, rng, hint)
        if '"suggestion"' in text and '"variables"' in text:
            return self._opro_suggestion(text, rng, hint)
        if "<VARIABLE>" in text or "feedback" in text.lower() and "variable" in text.lower():
            return self._critique(rng, hint)
        return self._agent(messages)

    def _agent(self, messages: list[dict[str, Any]]) -> str:
        """An agent's answer: the system messages are its instruction (:mod:`.stub_agent`)."""
        system = "\n".join(str(m.get("content", "")) for m in messages if m.get("role") == "system")
        user = "\n".join(str(m.get("content", "")) for m in messages if m.get("role") != "system")
        return agent_answer(system, user, seed=self.seed, answers=self.answers)

    # -- OptoPrime / OPRO -----------------------------------------------------------------
    def _suggestion(self, prompt: str, rng: random.Random, hint: Hint) -> str:
        variables = parse_variables(prompt)
        share = 1.0 / max(1, sum(v.type in ("int", "float") for v in variables))
        factor = rng.uniform(*OVERSHOOT)  # one step size for every number: together they move by it
        suggestion: dict[str, Any] = {}
        for variable in variables:
            proposal = self._propose(variable, rng, hint, share, factor)
            if proposal is not None:
                suggestion[variable.name] = proposal
        reasoning = (
            "The feedback indicates the current values can be improved; "
            f"proposing changes to {', '.join(suggestion) or 'no variable'}."
        )
        return json.dumps({"reasoning": reasoning, "answer": "", "suggestion": suggestion})

    def _opro_suggestion(self, prompt: str, rng: random.Random, hint: Hint) -> str:
        """OPRO shows past (variables, feedback) pairs as JSON instead of a ``#Variables`` section;
        the newest pair holds the current values."""
        variables = parse_opro_variables(prompt)
        share = 1.0 / max(1, sum(v.type in ("int", "float") for v in variables))
        factor = rng.uniform(*OVERSHOOT)
        suggestion = {v.name: p for v in variables if (p := self._propose(v, rng, hint, share, factor)) is not None}
        return json.dumps({"suggestion": suggestion})

    def _candidates_for(self, variable: Variable) -> list[Any]:
        """Candidates for a variable; an empty name (a library prompt that shows the current value
        but not the parameter's name) matches every candidate value of the variable's kind."""
        base = _base_name(variable.name)
        found: list[Any] = []
        for candidate in self.candidates:
            if isinstance(candidate, dict):
                if not variable.name:
                    found.extend(v for v in candidate.values() if self._kind_matches(variable, v))
                    continue
                for key in (variable.name, base):
                    if key in candidate:
                        found.append(candidate[key])
                        break
            elif self._kind_matches(variable, candidate):
                found.append(candidate)
        return [c for c in found if str(c).strip() != variable.value.strip()]

    @staticmethod
    def _kind_matches(variable: Variable, candidate: Any) -> bool:
        if variable.type == "code":
            return isinstance(candidate, str) and "def " in candidate
        if variable.type in ("int", "float"):
            return isinstance(candidate, (int, float)) and not isinstance(candidate, bool)
        if variable.type == "str":
            return isinstance(candidate, str) and "def " not in candidate
        return type(candidate).__name__ == variable.type

    def _propose(self, variable: Variable, rng: random.Random, hint: Hint | None = None,
                 share: float = 1.0, factor: float | None = None) -> Any:
        """A new value for ``variable``, or None to leave it.

        Numbers follow the feedback (a task candidate now and then) but never land on the value it
        points at (:func:`~trace_bench.llm.stub_mutations.keep_off`); code switches to a candidate
        or changes one literal; text switches to a candidate, moves the numbers of a number list,
        or gains an edit.  Candidates are plausible starting points, never the answer."""
        hint = hint or Hint()
        candidates = self._candidates_for(variable)
        if variable.type in ("int", "float"):
            if candidates and rng.random() < (0.25 if hint.direction else 0.7):
                return rng.choice(candidates)
            if variable.type == "int" and hint.distance is None and candidates:
                # without a stated distance an integer step could land on an optimum the stub cannot
                # see (a float step lands on one with probability zero): a task candidate instead
                return rng.choice(candidates)
            try:
                value = float(variable.value)
            except ValueError:
                return None
            # full precision: rounding to a grid would let trainers land exactly on a round target
            return numeric_proposal(value, hint, rng, share=share, scale=self.mutation_scale,
                                    integer=variable.type == "int", factor=factor)
        if variable.type == "bool":
            return variable.value.strip() != "True" if rng.random() < 0.3 else None
        if variable.type == "code":
            mutated = mutate_code_literal(variable.value, rng) if not candidates or rng.random() < 0.5 else None
            return mutated if mutated is not None else (rng.choice(candidates) if candidates else None)
        if candidates and rng.random() < 0.5:
            return rng.choice(candidates)
        if variable.type == "str" and NUMBER_LIST.fullmatch(variable.value):
            return mutate_number_list(variable.value, rng)
        if variable.type == "str" and variable.value and rng.random() < 0.5:
            edit = rng.choice(PROMPT_EDITS)
            if edit not in variable.value:
                return f"{variable.value.rstrip()} {edit}"
        return rng.choice(candidates) if candidates else None

    def propose_text(self, current: str, name: str, rng: random.Random, hint: Hint | None = None) -> str | None:
        """A proposal for a value shown as text (``name`` may be empty when the prompt omits it)."""
        proposal = self._propose(Variable(name, kind_of(current), current), rng, hint)
        return None if proposal is None else str(proposal)

    # -- TextGrad -------------------------------------------------------------------------
    def _textgrad_update(self, prompt: str, rng: random.Random, hint: Hint) -> str:
        """TextGrad shows a long value shortened (``first words (...) last words``): editing or
        echoing that would install a broken value.  The whole value is used when the prompt shows
        it elsewhere (the textgrad library's context does); otherwise only a whole candidate is
        proposed, or the answer carries no tags (opto's TextGrad then keeps the value)."""
        match = re.search(r"<VARIABLE>\s*(.*?)\s*</VARIABLE>", prompt, re.S)
        current = match.group(1) if match else ""
        if " (...) " in current:
            current = _whole_value(current, prompt) or current
        if " (...) " in current:
            candidates = self._candidates_for(Variable("", kind_of(current), current))
            if not candidates:
                return "The variable already serves the objective; no change is needed."
            return f"<IMPROVED_VARIABLE>{rng.choice(candidates)}</IMPROVED_VARIABLE>"
        proposal = self.propose_text(current, "", rng, hint)
        new = current if proposal is None else proposal
        return f"<IMPROVED_VARIABLE>{new}</IMPROVED_VARIABLE>"

    @staticmethod
    def _critique(rng: random.Random, hint: Hint) -> str:
        """A critique that passes the feedback's direction on (as a real model would), so the
        update step that reads it can follow it."""
        if hint.direction:
            verb = "increase" if hint.direction > 0 else "decrease"
            distance = f"; the output is off by {hint.distance:g}" if hint.distance is not None else ""
            return f"To satisfy the objective, {verb} the variable{distance}."
        hints = (
            "The variable should move the output closer to the target described in the feedback.",
            "The current value produces an output that the feedback marks as incorrect; adjust it.",
            "Make the variable more specific so the output satisfies the objective.",
        )
        return rng.choice(hints)
