"""Building one hf problem: rows -> seeded partitions -> agent, guide and datasets.

Eval kwargs (all optional): ``seed`` (0), ``num_train``/``num_validate``/``num_test`` (catalog
defaults), ``train_split``/``test_split`` (catalog defaults; BBEH's split is its subtask),
``validate_split`` (catalog default, else the training split), ``data_files`` (a path or
``{split: path}``: local rows in the dataset's own schema),
``cache_dir``, ``initial_instructions``, ``max_tokens``, ``framework`` (``trace`` or ``dspy``).

With ``framework: dspy`` the problem also carries ``dspy_program``, a native DSPy program whose
predictor instruction is the same trainable text; the Trace agent remains the measured ``param``.
"""

from __future__ import annotations

from typing import Any

from trace_bench._util.availability import missing_packages
from trace_bench.tasks.hf import metrics
from trace_bench.tasks.hf.agent import INITIAL_INSTRUCTIONS, STUB_INSTRUCTIONS, QAAgent
from trace_bench.tasks.hf.catalog import DATASETS, HFDataset, split_task_id
from trace_bench.tasks.hf.loading import DataUnavailable, load_split, partition
from trace_bench.tasks.hf.rows import has_gold, row_to_example

_OBJECTIVE = (
    "Improve the instruction (#Variables: instruction) that an LLM agent follows to answer {what}. "
    "Scoring: {scoring}. Write instructions that generalize across questions, guided by the feedback "
    "on individual examples; the agent must still end its reply with 'Answer: <answer>'."
)

_CODE_OBJECTIVE = (
    "Improve the instruction (#Variables: instruction) that a code-writing LLM agent follows for {what}. "
    "Scoring: {scoring}. Write instructions that make the functions it writes correct on problems it has "
    "not seen, guided by the failing tests reported for individual examples."
)


def _size(eval_kwargs: dict[str, Any], key: str, default: int) -> int:
    value = eval_kwargs.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"eval_kwargs.{key} must be a non-negative integer, got {value!r}")
    return value


def _entry_for(task_id: str, subtask: str | None) -> tuple[HFDataset, str | None]:
    base, from_id = split_task_id(task_id)
    entry = DATASETS.get(base)
    if entry is None:
        raise ValueError(f"unknown hf task '{task_id}' (known: {', '.join(sorted(DATASETS))})")
    subtask = subtask or from_id
    if entry.split_is_subtask:
        if subtask is None:
            raise ValueError(f"hf:{base} needs a subtask: hf:{base}/<subtask>, "
                             f"one of {', '.join(entry.subtasks)}")
        if subtask not in entry.subtasks:
            raise ValueError(f"unknown {base} subtask '{subtask}' (known: {', '.join(entry.subtasks)})")
    elif subtask is not None:
        raise ValueError(f"hf:{base} has no subtasks")
    return entry, subtask


def load_examples(entry: HFDataset, *, task: str, subtask: str | None, eval_kwargs: dict[str, Any]
                  ) -> tuple[dict[str, list[Any]], dict[str, Any]]:
    """The three partitions as ``{"train": [(input, info), ...], ...}`` plus a description of them."""
    seed = int(eval_kwargs.get("seed", 0))
    train_split = str(eval_kwargs.get("train_split") or subtask or entry.train_split)
    test_split = str(eval_kwargs.get("test_split") or subtask or entry.test_split)
    validate_split = str(eval_kwargs.get("validate_split") or subtask or entry.validate_split or train_split)
    sizes = {part: _size(eval_kwargs, f"num_{part}", getattr(entry, f"num_{part}"))
             for part in ("train", "validate", "test")}
    data_files = eval_kwargs.get("data_files")
    if data_files and not isinstance(data_files, dict):
        test_split = validate_split = train_split  # one file holds every partition: slice it once
    splits = {"train": train_split, "validate": validate_split, "test": test_split}
    needed = sorted({splits[part] for part in splits if sizes[part] > 0})
    cache_dir = eval_kwargs.get("cache_dir")
    rows = {split: load_split(entry, split, task=task, data_files=data_files, cache_dir=cache_dir)
            for split in needed}

    def convert(row: dict[str, Any]) -> tuple[dict[str, str], dict[str, Any]] | None:
        example = row_to_example(row, entry)
        return example if has_gold(example[1]) else None

    chosen, skipped = partition(sizes, splits, rows, seed=seed, salt=entry.dataset_id, convert=convert)
    if not chosen["train"]:
        raise DataUnavailable(f"{task}: split '{train_split}' gave no scorable rows for training")
    described = {
        "seed": seed,
        "source": "local files" if data_files else "huggingface hub",
        "data_files": data_files if data_files else None,
        "splits": {part: splits[part] for part in splits},
        "requested": sizes,
        "sizes": {part: len(chosen[part]) for part in chosen},
        "split_rows": {split: len(rows[split]) for split in rows},
        "skipped_without_gold": skipped,
    }
    return chosen, described


def _dspy_program(instruction: str, *, with_context: bool) -> Any:
    """The native DSPy program DSPyTrainer optimizes (see :mod:`trace_bench.tasks.hf.dspy_program`)."""
    from trace_bench.tasks.hf.dspy_program import build_program

    return build_program(instruction, with_context=with_context)


def _agent_and_guide(kind: str, eval_kwargs: dict[str, Any]) -> tuple[Any, Any, tuple[str, ...]]:
    """The agent, its guide and the stub's instruction candidates: code tasks write programs that
    the sandboxed unit tests score; every other task answers in text scored by :class:`QAGuide`."""
    max_tokens = int(eval_kwargs.get("max_tokens", 1024))
    if kind == "code":
        from trace_bench.tasks.hf.code import INITIAL_INSTRUCTION
        from trace_bench.tasks.hf.code import STUB_INSTRUCTIONS as CODE_STUBS
        from trace_bench.tasks.humaneval.guide import UnitTestGuide
        from trace_bench.tasks.humaneval.prompted import CodeAgent

        instruction = str(eval_kwargs.get("initial_instructions") or INITIAL_INSTRUCTION)
        guide = UnitTestGuide(timeout_s=float(eval_kwargs.get("timeout_s", 10.0)),
                              memory_mb=int(eval_kwargs.get("memory_mb", 1024)))
        return CodeAgent(instruction, max_tokens=max_tokens), guide, CODE_STUBS
    instruction = str(eval_kwargs.get("initial_instructions") or INITIAL_INSTRUCTIONS[kind])
    return QAAgent(instruction, max_tokens=max_tokens), metrics.QAGuide(), STUB_INSTRUCTIONS[kind]


def _dataset(examples: list[tuple[dict[str, str], dict[str, Any]]]) -> dict[str, list[Any]]:
    return {"inputs": [x for x, _ in examples], "infos": [info for _, info in examples]}


def build_trace_problem(task_id: str = "hf:gsm8k", subtask: str | None = None,
                        **eval_kwargs: Any) -> dict[str, Any]:
    entry, subtask = _entry_for(task_id, subtask)
    task = f"hf:{entry.id}" + (f"/{subtask}" if subtask else "")
    framework = str(eval_kwargs.get("framework", "trace")).lower()
    if framework not in ("trace", "dspy"):
        raise ValueError(f"eval_kwargs.framework must be 'trace' or 'dspy', got {framework!r}")
    if framework == "dspy" and missing_packages("dspy"):
        raise ValueError("eval_kwargs.framework 'dspy' needs the dspy package: install trace-bench[dspy]")
    if framework == "dspy" and entry.task_type == "code":
        raise ValueError(f"{task}: framework 'dspy' is not available for code tasks (use 'trace')")
    chosen, described = load_examples(entry, task=task, subtask=subtask, eval_kwargs=eval_kwargs)
    kind = entry.task_type
    param, guide, stub_texts = _agent_and_guide(kind, eval_kwargs)
    what = entry.description + (f" (subtask {subtask})" if subtask else "")
    problem: dict[str, Any] = {
        "param": param,
        "guide": guide,
        "train_dataset": _dataset(chosen["train"]),
        "optimizer_kwargs": {"objective": (_CODE_OBJECTIVE if kind == "code" else _OBJECTIVE).format(
                                 what=what, scoring=metrics.SCORING_TEXT[kind]), "memory_size": 10},
        "metadata": {
            "benchmark": "hf", "task": task, "dataset_id": entry.dataset_id,
            "dataset_config": entry.dataset_config, "subtask": subtask, "task_type": kind,
            "framework": framework,
            "optimizes": "the agent's instruction text (trainable node 'instruction')",
            "scoring": metrics.SCORING_TEXT[kind], "failure_score": 0.0, "score_range": [0.0, 1.0], **described,
        },
        "stub_candidates": [{"instruction": text} for text in stub_texts],
    }
    if kind == "code":
        problem["metadata"]["sandbox"] = {"timeout_s": guide.timeout_s, "memory_mb": guide.memory_mb}
    if framework == "dspy":
        problem["dspy_program"] = _dspy_program(param.instruction.data, with_context=entry.context_format != "none")
    if chosen["validate"]:
        problem["validate_dataset"] = _dataset(chosen["validate"])
    if chosen["test"]:
        problem["test_dataset"] = _dataset(chosen["test"])
    if kind != "code":  # the stub agent may know the answers, never a program (trace_bench.llm.stub_agent)
        problem["stub_answers"] = {str(x["question"]): str(info["answer"]) for split in chosen.values()
                                   for x, info in split if isinstance(x, dict) and x.get("question")}
    return problem
