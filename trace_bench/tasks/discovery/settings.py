"""A task folder's own settings: the config file it ships, read where it maps onto trace-bench.

**Which file.** ``eval_kwargs.config`` names it (e.g. ``config_phase_1.yaml``); else
``config.yaml``; else the one ``config*.yaml`` (``shinka*.yaml`` for ShinkaEvolve folders); with
several, the first in name order, and :attr:`FolderSettings.config_note` says which and how to
choose another (``validate --strict`` and the task's description show it).

**What is used** (the rest is listed by ``validate --strict``, each key with the reason it does not
apply):

- the objective every trainer is given: ``prompt.system_message`` (inline text of any length; a
  single line under 256 characters naming a file beside the config is that file's text, as
  SkyDiscover reads it), ShinkaEvolve's ``evo_config.task_sys_msg``, else the ``*sys_msg`` string
  its ``run_evo.py`` defines (read from the source, never run);
- ``max_iterations`` (``evo_config.num_generations``): the external trainers' iterations when the
  run's config sets none;
- ``evaluator.timeout``: the wall limit of one evaluation (of each cascade stage), default 60 s;
  ShinkaEvolve's job ``time`` in ``run_evo.py``;
- ``evaluator.cascade_evaluation`` and ``evaluator.cascade_thresholds``: OpenEvolve's staged
  evaluation, defaults as the library the config is written for sets them (OpenEvolve: on,
  ``[0.5, 0.75, 0.9]``; SkyDiscover: on, ``[0.3, 0.6]``, two stages);
- ``language`` (``evo_config.language``): the program's language for the external trainers;
- ``database.feature_dimensions`` (OpenEvolve's configs, default ``complexity`` and ``diversity``): the
  MAP-Elites dimensions OpenEvolve leaves out when it averages a result without ``combined_score``;
- a ``trace_bench:`` section for what the libraries have no key for: ``suite``, ``best_known``,
  ``best_known_source``, ``direction``, ``metric``, ``failure_score``, ``timing_in_feedback``
  (wall-clock metrics in the feedback) and ``llm`` (whether the evaluator calls an LLM).
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trace_bench._util.errors import ConfigError
from trace_bench.tasks.discovery.layout import Kind

CONFIG = "config.yaml"
SUITE = "discovery"
DEFAULT_TIMEOUT_S = 60.0
OWN_KEYS = ("suite", "best_known", "best_known_source", "direction", "metric", "failure_score",
            "timing_in_feedback", "llm")
THRESHOLDS = {"openevolve": (0.5, 0.75, 0.9), "skydiscover": (0.3, 0.6)}
MAX_STAGES = {"openevolve": 3, "skydiscover": 2}
_SKYDISCOVER_KEYS = ("search", "monitor", "context_builder", "agentic", "diff_based_generation", "max_solution_length",
                     "human_feedback_enabled", "max_parallel_iterations")
OPENEVOLVE_FEATURES = ("complexity", "diversity")  # OpenEvolve's default database.feature_dimensions
_USED = ("max_iterations", "prompt.system_message", "evaluator.timeout", "evaluator.cascade_evaluation",
         "evaluator.cascade_thresholds", "language", "evo_config.num_generations", "evo_config.task_sys_msg",
         "evo_config.language", "database.feature_dimensions")
_SEARCH = "the library's search settings: the trainer's own params govern the search"
_LLM = "models, endpoints and sampling come from the run's llm section"
_OTHER = "the library's own run settings (checkpoints, logging, generation): not used"
_REASONS: tuple[tuple[str, str], ...] = (
    ("llm", _LLM), ("embedding", _LLM),
    ("evo_config.llm_models", _LLM), ("evo_config.llm_kwargs", _LLM), ("evo_config.meta_llm_models", _LLM),
    ("evo_config.novelty_llm_models", _LLM), ("evo_config.embedding_model", _LLM),
    ("evo_config.init_program_path", "the folder's initial.<ext> is the initial program"),
    ("evo_config.results_dir", _OTHER),
    ("database", _SEARCH), ("search", _SEARCH), ("db_config", _SEARCH), ("evo_config", _SEARCH),
    ("max_evaluation_jobs", _SEARCH), ("max_proposal_jobs", _SEARCH), ("max_db_workers", _SEARCH),
    ("prompt", "the library's prompt templates: each trainer builds its own prompts"),
    ("context_builder", "the library's prompt templates: each trainer builds its own prompts"),
    ("random_seed", "the run's seeds axis seeds every job; evaluations are seeded with 0"),
    ("evaluator.parallel_evaluations", "a job evaluates one program at a time"),
    ("evaluator.max_retries", "a failed evaluation is recorded as failed, never retried"),
    ("evaluator.use_llm_feedback", "LLM judging of programs is not part of a task's score here"),
    ("evaluator.llm_feedback_weight", "LLM judging of programs is not part of a task's score here"),
    ("evaluator.llm_as_judge", "LLM judging of programs is not part of a task's score here"),
    ("evaluator.memory_limit_mb", "the sandbox's memory limit is eval_kwargs.memory_mb (2048 MB by default)"),
    ("evaluator.cpu_limit", "the sandbox's CPU limit follows the timeout"),
    ("evaluator.enable_artifacts", "artifacts always become feedback (capped)"),
    ("evaluator.max_artifact_storage", "artifacts always become feedback (capped)"),
    ("evaluator.inject_evaluator_context", "trainers see the program and its feedback, not the evaluator's source"),
    ("evaluator.file_suffix", "the candidate's file keeps the initial program's extension"),
)


@dataclass(frozen=True)
class FolderSettings:
    """What a folder's config says that trace-bench uses, and each key it does not use, with why."""

    suite: str = SUITE
    config_file: str = ""
    config_note: str = ""
    dialect: str = "openevolve"
    system_message: str = ""
    system_message_source: str = ""
    iterations: int | None = None
    timeout_s: float | None = None
    cascade: bool = True
    thresholds: tuple[float, ...] = THRESHOLDS["openevolve"]
    max_stages: int = 3
    language: str = ""
    best_known: float | None = None
    best_known_source: str = ""
    direction: str = "max"
    metric: str = "combined_score"
    failure_score: float | None = None
    timing_in_feedback: bool = False
    feature_dimensions: tuple[str, ...] = ()
    llm: bool | None = None
    ignored: tuple[tuple[str, str], ...] = ()

    @property
    def ignored_keys(self) -> tuple[str, ...]:
        return tuple(key for key, _ in self.ignored)

    def ignored_text(self) -> str:
        """The keys not used, grouped by reason: ``a, b (why); c (why)``."""
        groups: dict[str, list[str]] = {}
        for key, reason in self.ignored:
            groups.setdefault(reason, []).append(key)
        return "; ".join(f"{', '.join(keys)} ({reason})" for reason, keys in groups.items())


def config_candidates(folder: Path, kind: Kind) -> list[str]:
    prefixes = ("config", "shinka") if kind == "shinka" else ("config",)
    try:
        return sorted(item.name for item in folder.iterdir() if item.is_file()
                      and item.suffix in (".yaml", ".yml") and item.name.startswith(prefixes))
    except OSError:
        return []


def choose_config(folder: Path, kind: Kind, requested: Any = None) -> tuple[Path | None, str]:
    """The config file to read and a note when the choice was not obvious (see the module doc)."""
    candidates = config_candidates(folder, kind)
    if requested not in (None, ""):
        chosen = folder / str(requested)
        inside = chosen.resolve().is_relative_to(folder.resolve())
        if not isinstance(requested, str) or not inside or not chosen.is_file():
            raise ConfigError(f"eval_kwargs.config: {requested!r} is not a config file of {folder} (it holds "
                              f"{', '.join(candidates) or 'none'})", key_path="eval_kwargs.config")
        return chosen, ""
    if CONFIG in candidates:
        return folder / CONFIG, ""
    if not candidates:
        return None, ""
    note = ""
    if len(candidates) > 1:
        note = (f"read {candidates[0]}, the first of {', '.join(candidates)}; choose another with eval_kwargs: "
                "{config: <file>}")
    return folder / candidates[0], note


def _flatten(data: Any, prefix: str = "") -> list[str]:
    if not isinstance(data, dict):
        return [prefix] if prefix else []
    keys: list[str] = []
    for key, value in data.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        keys += _flatten(value, path) if isinstance(value, dict) and value else [path]
    return keys


def _reason(key: str, layout_kind: Kind, stages: tuple[str, ...], protocol: str) -> str | None:
    """Why ``key`` is not used (None: it is)."""
    if key.startswith("evaluator.cascade"):
        if layout_kind == "container":
            return "a containerized evaluator runs once per program (evaluate.sh), without stages"
        if not stages:
            return "the evaluator defines no evaluate_stage1" if protocol == "evaluate" else \
                "only evaluate() evaluators have stages"
        return None
    if key in _USED:
        return None
    for prefix, reason in _REASONS:
        if key == prefix or key.startswith(prefix + "."):
            return reason
    return _OTHER


def _number(value: Any, what: str, where: Path) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(float(value)):
        raise ConfigError(f"{where}: {what} must be a finite number, got {value!r}", key_path="trace_bench")
    return float(value)


def _positive(value: Any, what: str, where: Path) -> float:
    number = _number(value, what, where)
    if number <= 0:
        raise ConfigError(f"{where}: {what} must be positive (seconds), got {value!r}", key_path="evaluator.timeout")
    return number


def message_text(value: Any, base: Path) -> tuple[str, str]:
    """A ``system_message`` value as text, and where it came from (``inline`` or the file's name).

    SkyDiscover's rule: a single line under 256 characters that names a file beside the config is
    that file.  Anything else is the message itself, however long (a long line is never tried as
    a path: the operating system refuses names past 255 bytes)."""
    if not isinstance(value, str) or not value.strip():
        return "", ""
    name = value.strip()
    if "\n" not in name and len(name) < 256 and len(name.encode("utf-8")) < 256:
        try:
            candidate = base / name
            if candidate.is_file() and candidate.resolve().is_relative_to(base.resolve()):
                return candidate.read_text(encoding="utf-8"), name
        except (OSError, ValueError):
            pass
    return value, "inline"


def _mapping(data: Any, key: str) -> dict[str, Any]:
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, dict) else {}


def _dialect(data: dict[str, Any], kind: Kind) -> str:
    if kind == "shinka":
        return "shinka"
    if kind == "container" or any(key in data for key in _SKYDISCOVER_KEYS):
        return "skydiscover"
    return "openevolve"


def _thresholds(value: Any, default: tuple[float, ...], where: Path) -> tuple[float, ...]:
    if value is None:
        return default
    values = value if isinstance(value, list) else [value]
    return tuple(_number(item, "evaluator.cascade_thresholds", where) for item in values)


def _load(source: Path) -> dict[str, Any]:
    import yaml

    try:
        data = yaml.safe_load(source.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{source} is not valid YAML: {exc}", key_path="--root") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{source} must be a mapping", key_path="--root")
    return data


def _own(data: dict[str, Any], source: Path) -> dict[str, Any]:
    own = data.get("trace_bench") or {}
    if not isinstance(own, dict) or set(own) - set(OWN_KEYS):
        unknown = sorted(set(own) - set(OWN_KEYS)) if isinstance(own, dict) else own
        raise ConfigError(f"{source}: unknown trace_bench keys {unknown}; allowed: {', '.join(OWN_KEYS)}",
                          key_path="trace_bench")
    direction = str(own.get("direction", "max"))
    if direction not in ("max", "min"):
        raise ConfigError(f"{source}: trace_bench.direction must be max or min, got {direction!r}",
                          key_path="trace_bench.direction")
    suite = str(own.get("suite", SUITE))
    if not suite.replace("_", "").replace("-", "").isalnum():
        raise ConfigError(f"{source}: trace_bench.suite must be a plain name, got {suite!r}",
                          key_path="trace_bench.suite")
    for flag in ("timing_in_feedback", "llm"):
        if flag in own and not isinstance(own[flag], bool):
            raise ConfigError(f"{source}: trace_bench.{flag} must be true or false", key_path=f"trace_bench.{flag}")
    return {
        "suite": suite, "direction": direction, "metric": str(own.get("metric", "combined_score")),
        "best_known": _number(own["best_known"], "best_known", source) if "best_known" in own else None,
        "best_known_source": str(own.get("best_known_source", "")),
        "failure_score": _number(own["failure_score"], "failure_score", source) if "failure_score" in own else None,
        "timing_in_feedback": bool(own.get("timing_in_feedback", False)), "llm": own.get("llm"),
    }


_SYS_MSG = re.compile(r"sys_msg|system_message|system_prompt", re.I)
_HMS = re.compile(r"^(\d+):(\d{1,2}):(\d{1,2})$")


def shinka_script_settings(folder: Path) -> tuple[str, float | None]:
    """From ShinkaEvolve's ``run_evo.py`` (parsed, never run): the task system message it defines
    (a module-level string named ``*sys_msg*``) and its job's ``time="HH:MM:SS"`` in seconds."""
    script = folder / "run_evo.py"
    try:
        tree = ast.parse(script.read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return "", None
    message = ""
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Constant) \
                and isinstance(statement.value.value, str) and not message \
                and any(isinstance(t, ast.Name) and _SYS_MSG.search(t.id) for t in statement.targets):
            message = statement.value.value
    seconds = None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")).endswith("JobConfig"):
            for keyword in node.keywords:
                if keyword.arg == "time" and isinstance(keyword.value, ast.Constant):
                    match = _HMS.match(str(keyword.value.value))
                    if match:
                        hours, minutes, secs = (int(x) for x in match.groups())
                        seconds = float(hours * 3600 + minutes * 60 + secs) or None
    return message, seconds


def read_settings(folder: Path, kind: Kind = "evaluator", stages: tuple[str, ...] = (), protocol: str = "evaluate",
                  requested: Any = None) -> FolderSettings:
    """The folder's :class:`FolderSettings` (see the module doc); :class:`ConfigError` for a config
    that cannot be read or a value that cannot be used."""
    source, note = choose_config(folder, kind, requested)
    data = _load(source) if source is not None else {}
    where = source or folder
    own = _own(data, where)
    dialect = _dialect(data, kind)
    prompt, evaluator, evo = _mapping(data, "prompt"), _mapping(data, "evaluator"), _mapping(data, "evo_config")
    base = source.parent if source is not None else folder
    message, origin = message_text(prompt.get("system_message") or evo.get("task_sys_msg"), base)
    timeout = evaluator.get("timeout")
    timeout_s = _positive(timeout, "evaluator.timeout", where) if timeout is not None else None
    if kind == "shinka":
        script_message, script_time = shinka_script_settings(folder)
        if not message and script_message:
            message, origin = script_message, "run_evo.py"
        timeout_s = timeout_s or script_time
    iterations = data.get("max_iterations", evo.get("num_generations"))
    cascade = evaluator.get("cascade_evaluation", True)
    language = data.get("language") or evo.get("language") or ""
    features: tuple[str, ...] = ()
    if dialect == "openevolve":
        dimensions = _mapping(data, "database").get("feature_dimensions", list(OPENEVOLVE_FEATURES))
        features = tuple(str(item) for item in dimensions) if isinstance(dimensions, list) else OPENEVOLVE_FEATURES
    config_data = {key: value for key, value in data.items() if key != "trace_bench"}
    ignored = tuple((key, reason) for key in _flatten(config_data)
                    if (reason := _reason(key, kind, stages, protocol)) is not None)
    return FolderSettings(
        suite=own["suite"], config_file=source.name if source is not None else "", config_note=note, dialect=dialect,
        system_message=message, system_message_source=origin,
        iterations=int(iterations) if isinstance(iterations, int) and not isinstance(iterations, bool)
        and iterations > 0 else None,
        timeout_s=timeout_s, cascade=cascade is not False,
        thresholds=_thresholds(evaluator.get("cascade_thresholds"), THRESHOLDS.get(dialect, ()), where),
        max_stages=MAX_STAGES.get(dialect, 3), language=str(language),
        best_known=own["best_known"], best_known_source=own["best_known_source"], direction=own["direction"],
        metric=own["metric"], failure_score=own["failure_score"], timing_in_feedback=own["timing_in_feedback"],
        feature_dimensions=features, llm=own["llm"], ignored=ignored)
