"""The hf suite's static catalog: which HuggingFace datasets, which fields, which splits.

Everything here is plain data, readable without importing ``datasets``: listing must stay fast
and never contacts the hub.  Whether a dataset can load here must agree with what building it
finds (``validate --strict``): a dataset that is not in the local cache needs the hub, so when the
hub is not switched off the check looks its host name up once per process (a resolver query, no
connection to the hub, at most :data:`LOOKUP_TIMEOUT_S`); a machine without a network then lists
those tasks as unavailable with the reason instead of failing them at build time.  Field names, splits and default sizes follow each dataset's
published row schema and the original Trace-Bench suite; the one deliberate change is QASC's test
split (see ``QASC``).  :func:`cache_reason` is the cheap offline check used at listing time.
"""

from __future__ import annotations

import functools
import os
import socket
import threading
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

_TRUE = {"1", "ON", "YES", "TRUE"}

# The original suite's curated BBEH subsets (same dataset, same rows; only the subtask list differs).
BBEH_EIGHT: tuple[str, ...] = (
    "dyck_languages", "geometric_shapes", "linguini", "causal_understanding", "disambiguation_qa",
    "boolean_expressions", "movie_recommendation", "boardgame_qa",
)
BBEH_HORIZON: tuple[str, ...] = (  # long reasoning chains whose intermediate steps must be tracked
    "multistep_arithmetic", "web_of_lies", "dyck_languages", "shuffled_objects", "temporal_sequence",
    "object_counting", "time_arithmetic", "zebra_puzzles",
)

BBEH_SUBTASKS: tuple[str, ...] = (
    "boardgame_qa", "boolean_expressions", "buggy_tables", "causal_understanding", "disambiguation_qa",
    "dyck_languages", "geometric_shapes", "hyperbaton", "linguini", "movie_recommendation",
    "multistep_arithmetic", "nycc", "object_counting", "object_properties", "sarc_triples",
    "shuffled_objects", "spatial_reasoning", "sportqa", "temporal_sequence", "time_arithmetic",
    "web_of_lies", "word_sorting", "zebra_puzzles",
)


@dataclass(frozen=True)
class HFDataset:
    """One hf task family: where its rows live and how a row becomes a question and a gold answer.

    ``task_type`` names the scoring rule (:mod:`trace_bench.tasks.hf.metrics`; ``code`` tasks are
    scored by their unit tests in the sandbox, :mod:`trace_bench.tasks.hf.code`); ``context_format``
    names how the context field is flattened into text (:mod:`trace_bench.tasks.hf.rows`).
    ``validate_split`` is where validation examples come from (default: the training split, sliced
    after the training examples); ``test_field``/``entry_field`` name a code row's tests and function.
    ``cache_name`` is the directory ``datasets`` prepares under its cache root (namespace, three
    underscores, snake-cased name), so availability is a directory check, not an import.
    """

    id: str
    dataset_id: str
    cache_name: str
    task_type: str
    question_field: str
    answer_field: str
    description: str
    dataset_config: str | None = None
    train_split: str = "train"
    test_split: str = "train"
    num_train: int = 10
    num_validate: int = 0
    num_test: int = 0
    context_field: str | None = None
    context_format: str = "none"
    options_field: str | None = None
    answer_index_base: int = 0
    subtasks: tuple[str, ...] = ()
    validate_split: str | None = None
    test_field: str | None = None
    entry_field: str | None = None

    @property
    def split_is_subtask(self) -> bool:
        """BBEH stores each subtask as its own split; the split then comes from the task id."""
        return bool(self.subtasks)


DATASETS: dict[str, HFDataset] = {
    entry.id: entry
    for entry in (
        HFDataset("hotpot_qa", "hotpotqa/hotpot_qa", "hotpotqa___hotpot_qa", "hfqa", "question", "answer",
                  "HotpotQA multi-hop QA over ten paragraphs (distractor setting)",
                  dataset_config="distractor", test_split="validation", num_train=100, num_validate=100,
                  num_test=100,
                  context_field="context", context_format="hotpot_qa"),
        HFDataset("bbeh", "hubert233/BigBenchExtraHard", "hubert233___big_bench_extra_hard", "bbeh", "input",
                  "target", "BIG-Bench Extra Hard reasoning; one task per subtask (split)",
                  subtasks=BBEH_SUBTASKS),
        HFDataset("musique", "dgslibisey/MuSiQue", "dgslibisey___mu_si_que", "alias", "question", "answer",
                  "MuSiQue 2-4 hop QA over twenty paragraphs", test_split="validation", num_train=128,
                  num_validate=128, num_test=128, context_field="paragraphs", context_format="musique"),
        HFDataset("gsm8k", "openai/gsm8k", "openai___gsm8k", "gsm8k", "question", "answer",
                  "GSM8K grade-school math word problems", dataset_config="main", test_split="test",
                  num_train=128, num_validate=128, num_test=128),
        HFDataset("arc_challenge", "allenai/ai2_arc", "allenai___ai2_arc", "mcqa", "question", "answerKey",
                  "ARC-Challenge grade-school science multiple choice", dataset_config="ARC-Challenge",
                  test_split="test", num_train=128, num_validate=128, num_test=128, options_field="choices"),
        # QASC's public test split carries no answer keys, so its test items come from validation.
        HFDataset("qasc", "allenai/qasc", "allenai___qasc", "mcqa", "question", "answerKey",
                  "QASC science multiple choice with the combined fact as context", test_split="validation",
                  num_train=128, num_validate=128, num_test=128, options_field="choices",
                  context_field="combinedfact", context_format="plain"),
        HFDataset("drop", "ucinlp/drop", "ucinlp___drop", "alias", "question", "answers_spans",
                  "DROP discrete reasoning over a paragraph (spans, numbers, dates)", test_split="validation",
                  num_train=128, num_validate=128, num_test=128, context_field="passage",
                  context_format="plain"),
        HFDataset("quality", "emozilla/quality", "emozilla___quality", "mcqa", "question", "answer",
                  "QuALITY long-article multiple choice (answer index is 1-based)", test_split="validation",
                  num_train=64, num_validate=64, num_test=64, context_field="article", context_format="plain",
                  options_field="options", answer_index_base=1),
        HFDataset("qasper", "abertsch/converted_qasper", "abertsch___converted_qasper", "alias", "input",
                  "output",
                  "Qasper QA over full NLP papers (converted, script-free mirror)", test_split="validation",
                  num_train=128, num_validate=128, num_test=128),
        HFDataset("bbeh_eight", "hubert233/BigBenchExtraHard", "hubert233___big_bench_extra_hard", "bbeh", "input",
                  "target", "BIG-Bench Extra Hard, the original suite's 8 curated subtasks", subtasks=BBEH_EIGHT),
        HFDataset("bbeh_horizon", "hubert233/BigBenchExtraHard", "hubert233___big_bench_extra_hard", "bbeh",
                  "input", "target", "BIG-Bench Extra Hard, 8 long-horizon subtasks", subtasks=BBEH_HORIZON),
        HFDataset("aqua_rat", "deepmind/aqua_rat", "deepmind___aqua_rat", "mcqa", "question", "correct",
                  "AQuA-RAT algebraic word problems, five options", dataset_config="raw", test_split="test",
                  num_train=128, num_validate=128, num_test=128, options_field="options"),
        HFDataset("strategy_qa", "ChilleD/StrategyQA", "ChilleD___strategy_qa", "yesno", "question", "answer",
                  "StrategyQA implicit multi-step yes/no questions", test_split="test",
                  num_train=128, num_validate=128, num_test=128),
        # HumanEval has one split: the three partitions are disjoint slices of it.
        HFDataset("humaneval", "openai/openai_humaneval", "openai___openai_humaneval", "code", "prompt",
                  "entry_point", "HumanEval Python functions, scored by their unit tests (sandboxed)",
                  train_split="test", test_split="test", num_train=41, num_validate=41, num_test=82,
                  test_field="test", entry_field="entry_point"),
        # MBPP's own validation split (43 rows) serves validation; the original sliced it from train.
        HFDataset("mbpp", "google-research-datasets/mbpp", "google-research-datasets___mbpp", "code", "prompt",
                  "code", "MBPP basic Python problems, scored by their asserts (sandboxed)",
                  dataset_config="sanitized", test_split="test", validate_split="validation",
                  num_train=120, num_validate=43, num_test=257, test_field="test_list"),
    )
}


def split_task_id(task_id: str) -> tuple[str, str | None]:
    """``hf:bbeh/nycc`` -> ("bbeh", "nycc"); ``hf:gsm8k`` -> ("gsm8k", None)."""
    name = task_id.split(":", 1)[1] if ":" in task_id else task_id
    base, _, subtask = name.partition("/")
    return base, (subtask or None)


def hub_offline() -> bool:
    """The same rule ``datasets`` applies: HF_DATASETS_OFFLINE wins, else HF_HUB_OFFLINE."""
    explicit = os.environ.get("HF_DATASETS_OFFLINE")
    if explicit is not None:
        return explicit.upper() in _TRUE
    hub = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE") or ""
    return hub.upper() in _TRUE


def datasets_cache_root() -> Path:
    """Where ``datasets`` keeps prepared datasets (its own env-variable precedence)."""
    explicit = os.environ.get("HF_DATASETS_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "~/.cache")
    home = os.environ.get("HF_HOME") or os.path.join(xdg, "huggingface")
    return Path(home).expanduser() / "datasets"


def is_cached(entry: HFDataset, cache_dir: str | Path | None = None) -> bool:
    """True when a prepared copy of the dataset exists, i.e. offline loading can work."""
    root = Path(cache_dir).expanduser() if cache_dir else datasets_cache_root()
    folder = root / entry.cache_name
    try:
        return folder.is_dir() and any(folder.iterdir())
    except OSError:
        return False


NOT_CACHED = "dataset not cached (set data_files or go online)"


LOOKUP_TIMEOUT_S = 2.0
HUB = "https://huggingface.co"


def hub_unreachable() -> str | None:
    """Why the dataset hub (``HF_ENDPOINT``, as ``datasets`` reads it) cannot be reached from here,
    or None: its host name does not resolve (one lookup per process, bounded in time)."""
    return _lookup(urlsplit(os.environ.get("HF_ENDPOINT") or HUB).hostname or "")


@functools.lru_cache(maxsize=4)
def _lookup(host: str) -> str | None:
    if not host:
        return None
    found: list[str | None] = []

    def resolve() -> None:
        try:
            socket.getaddrinfo(host, 443, type=socket.SOCK_STREAM)
            found.append(None)
        except OSError as exc:
            found.append(f"the hub {host} cannot be reached from here (name lookup failed: {exc})")

    worker = threading.Thread(target=resolve, name="trace-bench-hub-lookup", daemon=True)
    worker.start()
    worker.join(LOOKUP_TIMEOUT_S)
    if not found:
        return f"the hub {host} cannot be reached from here (its name lookup took over {LOOKUP_TIMEOUT_S:g} s)"
    return found[0]


def cache_reason(entry: HFDataset) -> str | None:
    """Why the dataset cannot be loaded here now, or None: not cached, and the hub switched off
    (:func:`hub_offline`) or out of reach (:func:`hub_unreachable`)."""
    if is_cached(entry):
        return None
    if hub_offline():
        return NOT_CACHED
    unreachable = hub_unreachable()
    return f"dataset not cached and {unreachable} (set data_files or go online)" if unreachable else None
