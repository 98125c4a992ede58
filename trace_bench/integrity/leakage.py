"""Leakage: held-out inputs and reference answers found in the states a job produced.

A state is a list of named parameter values (prompts, code, any structure holding text); a split is
``{"inputs": [...], "infos": [...]}`` aligned by index (the problem contract).  Text is compared
*normalised*: Unicode NFKC, case-folded, every run of whitespace one space.  An item of a split
*leaks* into a state when either

* **its reference answer appears verbatim**: a string in its ``infos`` entry (every string of a
  structured one, hidden test code included) of at least :data:`MIN_ANSWER_WORDS` words or
  :data:`MIN_ANSWER_CHARS` characters occurs in the state, not inside a longer word.  Shorter answers
  (``72``, ``Paris``) occur in any text by chance and are only caught through their input; a string
  the training split's infos hold as well (a function's name, a task id) is no secret and is not
  searched;
* **a long run of its input appears verbatim**: :data:`NGRAM_WORDS` consecutive words of it (all of
  them for an input shorter than that but of at least :data:`MIN_INPUT_WORDS` words), the
  contamination test of the language-model literature.

Text is searched as written and as it decodes (:mod:`.encodings`: base64 and hex, compressed or not,
reversed, string escapes), so an answer kept zlib-compressed in a base64 string is found too; such a
finding names the encoding.  Besides the job's states, the scan may be given what the candidates
output while the job trained (what they printed and the text they returned from the sandbox), as
the state ``outputs``.

An item whose input also appears among the training inputs is not held out (the task shares it with
the split the optimizer is meant to see) and is not searched; it is counted apart.  Each finding says
whether the same text was already in the job's initial state: then the task handed it to the
optimizer, else the optimization put it there.  Excerpts are masked to their first words, so the
audit never re-publishes the answers it found.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from trace_bench.integrity.encodings import decodings

NGRAM_WORDS = 13
MIN_INPUT_WORDS = 8
MIN_ANSWER_WORDS = 3
MIN_ANSWER_CHARS = 12
MASK_WORDS = 3
MAX_FINDINGS = 50
_WHITESPACE = re.compile(r"\s+")
_WORD = re.compile(r"\w+")

#: a state as scanned: (parameter name, value) pairs
State = Sequence[tuple[str, Any]]


def normalise(text: str) -> str:
    """NFKC, case-folded, whitespace runs collapsed to one space, stripped."""
    return _WHITESPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def words(text: str) -> list[str]:
    return _WORD.findall(text)


def strings_of(value: Any, limit: int = 10_000) -> list[str]:
    """Every string inside ``value`` (mappings' keys and values, sequences), depth first, at most
    ``limit`` of them; numbers and other scalars are not text and are left out."""
    found: list[str] = []
    stack = [value]
    while stack and len(found) < limit:
        item = stack.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, bytes):
            found.append(item.decode("utf-8", "replace"))
        elif isinstance(item, Mapping):
            stack.extend(reversed([v for pair in item.items() for v in pair]))
        elif isinstance(item, (list, tuple, set, frozenset)):
            stack.extend(reversed(list(item)))
    return found


def mask(text: str) -> str:
    """A few words of ``text`` and how long it is: enough to recognise a leak, not to re-leak it."""
    parts = text.split()
    if len(parts) > MASK_WORDS:
        return " ".join(parts[:MASK_WORDS]) + f" … (+{len(parts) - MASK_WORDS} words)"
    if len(text) > 8:
        return text[:4] + f"… ({len(text)} chars)"
    return "… " + f"({len(text)} chars)"


@dataclass(frozen=True)
class Finding:
    """One leak: item ``item`` of ``split`` found in parameter ``parameter`` of the job's ``state``
    (``best``, ``final`` or ``outputs``), by its ``kind`` (``answer`` or ``input``); ``words`` of it
    matched; ``in_initial``: the initial state held the same text; ``encoding``: how the text was
    hidden (``base64+zlib``, ``reversed``, ...; empty when it was written as is)."""

    split: str
    item: int
    kind: str
    state: str
    parameter: str
    excerpt: str
    words: int
    in_initial: bool
    encoding: str = ""


@dataclass
class LeakageScan:
    """The audit of one job: per split, the items searched, those left out because training shares
    their input, the leaked items' indices, and the findings (at most :data:`MAX_FINDINGS`; the
    rest are counted in ``more_findings``)."""

    searched: dict[str, int] = field(default_factory=dict)
    shared_with_train: dict[str, int] = field(default_factory=dict)
    leaked: dict[str, list[int]] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    more_findings: int = 0

    def leaked_count(self, split: str) -> int | None:
        """Leaked items of ``split``; None when the job has no such split."""
        return len(self.leaked.get(split, [])) if split in self.searched else None


class _Text:
    """One parameter's normalised text, its words, and its word n-grams (built on first use)."""

    def __init__(self, value: Any, *, raw: str | None = None) -> None:
        self.text = normalise(raw if raw is not None else "\n".join(strings_of(value)))
        self.words = words(self.text)
        self._grams: dict[int, set[tuple[str, ...]]] = {}

    def grams(self, n: int) -> set[tuple[str, ...]]:
        if n not in self._grams:
            self._grams[n] = {tuple(self.words[i:i + n]) for i in range(len(self.words) - n + 1)}
        return self._grams[n]

    def contains(self, phrase: str) -> bool:
        """``phrase`` (normalised) occurs here and is not part of a longer word at either end."""
        start = self.text.find(phrase)
        while start >= 0:
            end = start + len(phrase)
            before = self.text[start - 1] if start else " "
            after = self.text[end] if end < len(self.text) else " "
            if not (_word_char(before) and _word_char(phrase[0])) and not (_word_char(after) and _word_char(phrase[-1])):
                return True
            start = self.text.find(phrase, start + 1)
        return False


#: a parameter as searched: (parameter name, encoding, its text so decoded)
_Variant = tuple[str, str, _Text]


def _variants(state: State) -> list[_Variant]:
    """Each parameter's text as written, then as each encoding found in it decodes."""
    found: list[_Variant] = []
    for name, value in state:
        raw = "\n".join(strings_of(value))
        found.append((name, "", _Text(None, raw=raw)))
        found.extend((name, label, _Text(None, raw=decoded)) for label, decoded in decodings(raw))
    return found


def _word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def _answers(info: Any, known: frozenset[str] = frozenset()) -> list[str]:
    """The normalised strings of an ``infos`` entry long enough to be searched for verbatim, but those
    in ``known`` (what the training split holds)."""
    found = []
    for text in strings_of(info):
        phrase = normalise(text)
        if (len(words(phrase)) >= MIN_ANSWER_WORDS or len(phrase) >= MIN_ANSWER_CHARS) and phrase not in known:
            found.append(phrase)
    return found


def _input_run(item_words: list[str], text: _Text) -> list[str] | None:
    """The first run of :data:`NGRAM_WORDS` words of the input (all of a shorter input) found in ``text``."""
    if len(item_words) < MIN_INPUT_WORDS:
        return None
    n = min(NGRAM_WORDS, len(item_words))
    grams = text.grams(n)
    for start in range(len(item_words) - n + 1):
        run = tuple(item_words[start:start + n])
        if run in grams:
            return list(run)
    return None


def _input_key(value: Any) -> str:
    return normalise("\n".join(strings_of(value))) or normalise(repr(value))


def scan_states(states: Mapping[str, State], splits: Mapping[str, Mapping[str, Sequence[Any]] | None],
                initial: State = (), train: Mapping[str, Sequence[Any]] | None = None) -> LeakageScan:
    """Search every state of ``states`` (``{"best": state, "final": state}``) for the items of every
    split of ``splits`` (``{"test": dataset, "validation": dataset}``; a None split is absent)."""
    scan = LeakageScan()
    texts = {kind: _variants(state) for kind, state in states.items()}
    seed = _variants(initial)
    train_inputs = {_input_key(value) for value in (train or {}).get("inputs", [])}
    known = frozenset(normalise(text) for info in (train or {}).get("infos", []) for text in strings_of(info))
    for split, dataset in splits.items():
        if not dataset:
            continue
        inputs, infos = list(dataset.get("inputs", [])), list(dataset.get("infos", []))
        scan.searched[split] = len(inputs)
        shared, leaked = 0, []
        for index, (item_input, info) in enumerate(zip(inputs, infos, strict=False)):
            if _input_key(item_input) in train_inputs:
                shared += 1
                continue
            item_words = words(normalise("\n".join(strings_of(item_input))))
            found = list(_item_findings(split, index, item_words, _answers(info, known), texts, seed))
            if found:
                leaked.append(index)
                room = MAX_FINDINGS - len(scan.findings)
                scan.findings.extend(found[:max(room, 0)])
                scan.more_findings += max(len(found) - max(room, 0), 0)
        scan.shared_with_train[split] = shared
        scan.leaked[split] = leaked
    return scan


def _item_findings(split: str, index: int, item_words: list[str], answers: list[str],
                   texts: Mapping[str, list[_Variant]], seed: list[_Variant]) -> Iterable[Finding]:
    for state, parameters in texts.items():
        found: set[tuple[str, str]] = set()  # (parameter, kind): the plainest encoding that shows it is enough
        for name, encoding, text in parameters:
            if (name, "answer") not in found:
                for answer in answers:
                    if text.contains(answer):
                        found.add((name, "answer"))
                        yield Finding(split, index, "answer", state, name, mask(answer), len(answer.split()),
                                      any(t.contains(answer) for _, _, t in seed), encoding)
                        break
            run = _input_run(item_words, text) if (name, "input") not in found else None
            if run is not None:
                found.add((name, "input"))
                phrase = " ".join(run)
                yield Finding(split, index, "input", state, name, mask(phrase), len(run),
                              any(_input_run(run, t) is not None for _, _, t in seed), encoding)
