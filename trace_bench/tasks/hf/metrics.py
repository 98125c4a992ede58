"""Scoring rules of the hf suite, one per task type, each returning (score in [0, 1], feedback).

The rules are the usual ones of each benchmark family, written for free-form LLM replies:
- ``hfqa``: the SQuAD-normalised gold answer is contained in the normalised reply;
- ``alias``: 1 when an alias equals or is contained in the extracted answer, else the best token F1;
- ``bbeh``: a "(X)" gold compares with the last "(X)" of the answer, anything else by exact match;
- ``gsm8k``: the last number of the reply equals the number after ``####``;
- ``mcqa``: the chosen option letter, or (when no letter is given) the gold option's text alone;
- ``yesno``: the first "yes" or "no" of the final answer (of the whole reply when it has none).
Feedback names what was extracted and what was expected, so an optimizer can see the mismatch.
:class:`QAGuide` applies the rule a gold record names.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from typing import Any

from trace_bench.tasks.guide import Guide

_ANSWER_LINE = re.compile(r"answer\s*(?:is)?\s*:\s*", re.I)
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?|-?\.\d+")
_PAREN_LETTER = re.compile(r"\(([A-Za-z0-9])\)")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_NO_PUNCTUATION = str.maketrans("", "", string.punctuation)


def final_answer(response: Any) -> str:
    """The text after the last ``Answer:`` marker, else the whole reply (both stripped)."""
    text = "" if response is None else str(response)
    matches = list(_ANSWER_LINE.finditer(text))
    if matches:
        text = text[matches[-1].end():]
    return text.strip()


def normalize(text: str) -> str:
    """SQuAD normalisation: lower case, no punctuation, no articles, single spaces."""
    text = str(text).lower().translate(_NO_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def token_f1(prediction: str, gold: str) -> float:
    predicted, expected = normalize(prediction).split(), normalize(gold).split()
    common = sum((Counter(predicted) & Counter(expected)).values())
    if not predicted or not expected or common == 0:
        return float(predicted == expected)
    precision, recall = common / len(predicted), common / len(expected)
    return 2 * precision * recall / (precision + recall)


def _shown(text: str, limit: int = 160) -> str:
    text = " ".join(str(text).split())
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def score_hfqa(response: Any, info: dict[str, Any]) -> tuple[float, str]:
    gold = normalize(info["answer"])
    if gold and gold in normalize(str(response or "")):
        return 1.0, f"Correct: the reply contains the answer {_shown(info['answer'])}."
    return 0.0, (f"Incorrect: the reply {_shown(final_answer(response))} does not contain "
                 f"{_shown(info['answer'])}.")


def score_alias(response: Any, info: dict[str, Any]) -> tuple[float, str]:
    predicted = final_answer(response)
    aliases = info.get("aliases") or [info["answer"]]
    norm = normalize(predicted)
    for alias in aliases:
        if normalize(alias) and (normalize(alias) == norm or normalize(alias) in norm):
            return 1.0, f"Correct: {_shown(predicted)} matches {_shown(alias)}."
    best = max(token_f1(predicted, alias) for alias in aliases)
    return best, (f"Incorrect (token F1 {best:.2f}): answered {_shown(predicted)}; "
                  f"accepted answers: {', '.join(_shown(a, 60) for a in aliases[:5])}.")


def score_bbeh(response: Any, info: dict[str, Any]) -> tuple[float, str]:
    gold = str(info["answer"]).strip()
    predicted = final_answer(response)
    gold_letter = re.fullmatch(r"\(([A-Za-z0-9])\)", gold)
    if gold_letter:
        letters = _PAREN_LETTER.findall(predicted)
        chosen = f"({letters[-1]})" if letters else None
        if chosen is not None and chosen.upper() == gold.upper():
            return 1.0, f"Correct: chose {gold}."
        shown = chosen or "no option in the form (X)"
        return 0.0, f"Incorrect: chose {shown}; the answer is {gold}. Give the final option as (X)."
    if _exact(predicted) == _exact(gold):
        return 1.0, f"Correct: {_shown(gold)}."
    return 0.0, f"Incorrect: answered {_shown(predicted)}; expected exactly {_shown(gold)}."


def _exact(text: str) -> str:
    return " ".join(str(text).strip().strip("`*").rstrip(".").split()).lower()


def _as_number(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def score_gsm8k(response: Any, info: dict[str, Any]) -> tuple[float, str]:
    numbers = _NUMBER.findall(str(response or ""))
    gold = _as_number(info["number"])
    if not numbers:
        return 0.0, f"Incorrect: the reply has no number; the answer is {info['number']}."
    last = _as_number(numbers[-1])
    if last is not None and gold is not None and abs(last - gold) < 1e-6:
        return 1.0, f"Correct: {info['number']}."
    return 0.0, f"Incorrect: the last number in the reply is {numbers[-1]}; the answer is {info['number']}."


def chosen_label(response: Any, labels: list[str]) -> str | None:
    """The option the reply picks.

    After an ``Answer:`` marker: its last "(L)", else its first bare label.  Without a marker: the
    last "(L)" of the reply, or the reply itself when it is just a label.
    """
    text = str(response or "")
    wanted = {label.upper() for label in labels}
    tail = final_answer(text)

    def parenthesised(part: str) -> list[str]:
        return [m.upper() for m in _PAREN_LETTER.findall(part) if m.upper() in wanted]

    def bare(part: str) -> list[str]:
        return [t.upper() for t in re.findall(r"\b([A-Za-z0-9])\b", part) if t.upper() in wanted]

    if _ANSWER_LINE.search(text):
        found = parenthesised(tail) or bare(tail)[:1]
        if found:
            return found[-1]
    found = parenthesised(text)
    if found:
        return found[-1]
    if len(tail) <= 3 and bare(tail):
        return bare(tail)[0]
    return None


def score_mcqa(response: Any, info: dict[str, Any]) -> tuple[float, str]:
    options: dict[str, str] = info["options"]
    gold = str(info["label"]).upper()
    label = chosen_label(response, list(options))
    if label is not None:
        if label == gold:
            return 1.0, f"Correct: chose ({gold})."
        chosen = _shown(options.get(label, ""), 80)
        return 0.0, f"Incorrect: chose ({label}) {chosen}; the answer is {info['answer']}."
    reply = normalize(str(response or ""))
    named = [lab for lab, text in options.items() if normalize(text) and normalize(text) in reply]
    if named == [info["label"]]:
        return 1.0, f"Correct: named the option text {_shown(options[info['label']], 80)}."
    return 0.0, f"Incorrect: no single option chosen (write it as (X)); the answer is {info['answer']}."


def score_yesno(response: Any, info: dict[str, Any]) -> tuple[float, str]:
    def first_yes_no(text: str) -> str | None:
        words = [w for w in normalize(text).split() if w in ("yes", "no")]
        return words[0] if words else None

    chosen = first_yes_no(final_answer(response)) or first_yes_no(str(response or ""))
    if chosen == info["answer"]:
        return 1.0, f"Correct: {chosen}."
    shown = chosen or f"no yes/no in {_shown(final_answer(response), 60)}"
    return 0.0, (f"Incorrect: answered {shown}; the answer is {info['answer']}. Work out the implicit steps "
                 "and state the final Yes or No explicitly.")


SCORERS = {
    "hfqa": score_hfqa,
    "alias": score_alias,
    "bbeh": score_bbeh,
    "gsm8k": score_gsm8k,
    "mcqa": score_mcqa,
    "yesno": score_yesno,
}

SCORING_TEXT = {
    "hfqa": "1 if the normalised gold answer is contained in the reply, else 0",
    "alias": "1 if an accepted answer equals or is contained in the final answer, else best token F1",
    "bbeh": "last '(X)' of the final answer vs a '(X)' gold, else exact match (case-insensitive)",
    "gsm8k": "1 if the last number in the reply equals the number after '####'",
    "mcqa": "1 if the chosen option letter (or the only option text named) is the gold option",
    "yesno": "1 if the first yes/no of the final answer is the gold one",
    "code": "1 if every unit test passes (run in the sandbox), else 0",
}


def score(response: Any, info: dict[str, Any]) -> tuple[float, str]:
    return SCORERS[info["task_type"]](response, info)


class QAGuide(Guide):
    """Scores a reply against an info produced by :func:`trace_bench.tasks.hf.rows.gold_info`.

    The rule comes from the info, not from the guide, so one guide serves every hf task and a
    reference record is self-describing (useful when results are inspected later).
    """

    def get_feedback(self, query: Any, response: Any, reference: Any = None,
                     **kwargs: Any) -> tuple[float, str]:
        if not isinstance(reference, dict) or reference.get("task_type") not in SCORERS:
            raise ValueError(f"QAGuide needs an hf gold record as reference, got {type(reference).__name__}")
        return score(response, reference)
