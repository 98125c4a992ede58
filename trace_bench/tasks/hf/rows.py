"""Turning one dataset row into an agent input and a gold record.

A row keeps its dataset's own schema (from the hub or from a local file with the same fields), so
these functions are the only place that knows about ``context.sentences``, ``answers_spans`` or a
1-based QuALITY answer.  The input is what the agent may see: ``{"question", "context"}`` with the
options already written into the question.  The info is what the guide may see: the gold answer in
the form its metric needs, plus a display text for feedback.
"""

from __future__ import annotations

import re
from typing import Any

from trace_bench._util.errors import TraceBenchError
from trace_bench.tasks.hf.catalog import HFDataset

_GSM8K_FINAL = re.compile(r"####\s*(.+?)\s*$", re.S)


class RowError(TraceBenchError, ValueError):
    """A row lacks a field its task needs: the local file does not follow the dataset's schema."""


def _field(row: dict[str, Any], name: str, entry: HFDataset) -> Any:
    if name not in row:
        raise RowError(f"{entry.dataset_id} rows need a '{name}' field; this row has {sorted(row)}")
    return row[name]


def format_context(row: dict[str, Any], entry: HFDataset) -> str:
    """The context as plain text; supporting-fact labels are never shown to the agent."""
    if entry.context_format == "none" or entry.context_field is None:
        return ""
    value = _field(row, entry.context_field, entry)
    if entry.context_format == "hotpot_qa":
        titles, sentences = value.get("title", []), value.get("sentences", [])
        pairs = zip(titles, sentences, strict=False)
        return "\n\n".join(f"{title}: {' '.join(s.strip() for s in sents)}" for title, sents in pairs)
    if entry.context_format == "musique":
        return "\n\n".join(f"{p.get('title', '')}: {p.get('paragraph_text', '')}" for p in value)
    return str(value or "")


_LABELLED_OPTION = re.compile(r"^\s*\(?([A-Z])\)\s*(.*)$", re.S)


def _options(row: dict[str, Any], entry: HFDataset) -> list[tuple[str, str]]:
    """(label, text) pairs: ARC/QASC ``choices`` dicts or a plain option list (labels A, B, ...);
    list items that carry their own label (AQuA-RAT's "B)21.5") lose it, the label is shown once."""
    value = _field(row, entry.options_field or "", entry)
    if isinstance(value, dict):
        pairs = zip(value.get("label", []), value.get("text", []), strict=False)
        return [(str(label), str(text)) for label, text in pairs]
    options = []
    for i, text in enumerate(value):
        label, shown = chr(ord("A") + i), str(text)
        own = _LABELLED_OPTION.match(shown)
        if own and own.group(1) == label:
            shown = own.group(2).strip()
        options.append((label, shown))
    return options


def _gold_label(row: dict[str, Any], entry: HFDataset, labels: list[str]) -> str:
    raw = _field(row, entry.answer_field, entry)
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        index = int(raw) - entry.answer_index_base
        if not 0 <= index < len(labels):
            raise RowError(f"{entry.dataset_id}: answer index {raw} is outside the {len(labels)} options")
        return labels[index]
    return str(raw).strip()


def gsm8k_number(answer: str) -> str:
    """The final number of a GSM8K solution: the text after ``####``, commas removed."""
    match = _GSM8K_FINAL.search(answer)
    if match is None:
        raise RowError(f"a GSM8K answer must end with '#### <number>', got {answer[-60:]!r}")
    return match.group(1).replace(",", "").replace("$", "").strip()


def gold_info(row: dict[str, Any], entry: HFDataset) -> dict[str, Any]:
    """The gold record the guide scores against; ``answer`` is always a display string."""
    kind = entry.task_type
    if kind == "mcqa":
        options = _options(row, entry)
        labels = [label for label, _ in options]
        label = _gold_label(row, entry, labels)
        texts = dict(options)
        shown = f"({label}) {texts.get(label, '')}"
        return {"task_type": kind, "label": label, "options": texts, "answer": shown}
    raw = _field(row, entry.answer_field, entry)
    if kind == "gsm8k":
        return {"task_type": kind, "number": gsm8k_number(str(raw)), "answer": gsm8k_number(str(raw))}
    if kind == "alias":
        if isinstance(raw, dict):  # DROP: {"spans": [...], "types": [...]}
            aliases = [str(s) for s in raw.get("spans", [])]
        elif isinstance(raw, list):
            aliases = [str(s) for s in raw]
        else:
            aliases = [str(raw)]
        aliases += [str(a) for a in row.get("answer_aliases", []) or []]  # MuSiQue
        aliases = [a for a in dict.fromkeys(aliases) if a.strip()]
        return {"task_type": kind, "aliases": aliases, "answer": aliases[0] if aliases else ""}
    if kind == "yesno":
        return {"task_type": kind, "answer": yes_no(raw)}
    return {"task_type": kind, "answer": str(raw).strip()}


def yes_no(raw: Any) -> str:
    """StrategyQA's boolean answer as "yes"/"no" (strings such as "True" or "no" accepted too)."""
    if isinstance(raw, bool):
        return "yes" if raw else "no"
    text = str(raw).strip().lower()
    if text in ("yes", "true", "1"):
        return "yes"
    if text in ("no", "false", "0"):
        return "no"
    raise RowError(f"a yes/no answer must be a boolean or yes/no, got {raw!r}")


def format_question(row: dict[str, Any], entry: HFDataset) -> str:
    question = str(_field(row, entry.question_field, entry)).strip()
    if entry.task_type == "mcqa":
        lines = "\n".join(f"({label}) {text}" for label, text in _options(row, entry))
        question = f"{question}\n\nOptions:\n{lines}"
    return question


def has_gold(info: dict[str, Any]) -> bool:
    """Rows without a gold answer (hidden test labels) cannot be scored and are skipped."""
    if info["task_type"] == "mcqa":
        return bool(info["label"])
    if info["task_type"] == "alias":
        return bool(info["aliases"])
    if info["task_type"] == "code":
        return bool(info["test"].strip())
    return bool(str(info["answer"]).strip())


def row_to_example(row: dict[str, Any], entry: HFDataset) -> tuple[dict[str, Any], dict[str, Any]]:
    """One (input, info) pair; ``id`` fields are carried into the info for traceability."""
    if entry.task_type == "code":
        from trace_bench.tasks.hf.code import code_example

        return code_example(row, entry)
    info = gold_info(row, entry)
    for key in ("id", "qid", "query_id", "section_id"):
        if key in row and row[key] not in (None, ""):
            info.setdefault("row_id", str(row[key]))
    return {"question": format_question(row, entry), "context": format_context(row, entry)}, info
