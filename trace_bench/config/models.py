"""The experiment config: pydantic models for the original Trace-Bench schema plus our keys.

Every key and alias of the original is accepted (``runs_root``, ``n_concurrent``, ``seed``,
``job-timeout``, trainer-entry ``name``/``trainer``/``key``, top-level trainer knobs such as
``ps_steps``); unknown keys are errors, never silently ignored.

The ``llm`` and ``budget`` blocks are frozen: a job's specification (``JobSpec`` in the store)
embeds the same objects, from the YAML file to the job process (inspect_ai's ``EvalSpec`` embeds its
``GenerateConfig`` the same way), never a dictionary rebuilt downstream.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any, Literal, cast

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from trace_bench._util.entry_points import skip_empty_pydantic_plugin_scan
from trace_bench._util.errors import ConfigError
from trace_bench.config.messages import config_error, format_loc
from trace_bench.config.model_names import Role
from trace_bench.config.race import RaceConfig, check_race_seeds
from trace_bench.config.safe_yaml import MAX_NODES

skip_empty_pydantic_plugin_scan()  # before the first model: pydantic looks for plugins there

# Trainer knobs the original accepts at the top level of a config; they join the global
# trainer kwargs of every trainer entry.
TOP_LEVEL_KNOBS = (
    "threads", "num_threads", "optimizer_kwargs", "ps_steps", "ps_batches", "ps_candidates", "ps_proposals",
    "ps_mem_update", "gepa_iters", "gepa_train_bs", "gepa_merge_every", "gepa_pareto_subset", "verbose",
)

SECRET_HINT = "secrets never go in a config: name an environment variable with llm.api_key_env"


SAFE_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, allow_inf_nan=False)


class _Frozen(_Strict):
    """A block a job's specification embeds: never changed once validated."""

    model_config = ConfigDict(frozen=True)


class BudgetConfig(_Frozen):
    """Per-job limits; whichever is reached first stops the trainer (status budget_exhausted).
    ``evaluations`` counts the trainer's task evaluations (rollouts), for every trainer, LLM or not.  The
    job's ``Budget`` (``trace_bench.llm.budget``) holds this object as its limits."""

    llm_calls: int | None = Field(default=None, ge=1)
    tokens: int | None = Field(default=None, ge=1)
    usd: float | None = Field(default=None, gt=0)
    wall_s: float | None = Field(default=None, gt=0)
    evaluations: int | None = Field(default=None, ge=1)


class AnalysisConfig(_Frozen):
    """How the run is read: ``at`` lists spends (in the budget's unit: its first limit among
    llm_calls, tokens, usd, wall_s; LLM calls without a budget) at which ``table``, report.html, the
    UI and ``verdict --metric at_<value>`` read each arm's anytime curve (docs/analysis.md,
    "Scores at equal spend").  Not part of the config's identity: it changes no job."""

    model_config = ConfigDict(defer_build=True)

    at: list[float] = Field(default_factory=list, description="spends at which each arm's curve is read")

    @field_validator("at")
    @classmethod
    def _positive(cls, values: list[float]) -> list[float]:
        if any(not value > 0 for value in values):
            raise ValueError("every spend in analysis.at must be > 0")
        return sorted(set(values))


class PriceConfig(_Frozen):
    input_per_mtok: float = Field(ge=0)
    output_per_mtok: float = Field(ge=0)


class RoleConfig(_Frozen):
    model: str | None = None
    provider: str | None = None
    base_url: str | None = Field(default=None, validation_alias=AliasChoices("base_url", "api_base"))
    api_key_env: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None


class LLMConfig(_Frozen):
    """The ``llm`` block: provider, endpoint, model and sampling of the run, each role's own
    (``roles``), and the transport (retries, timeouts, concurrency, cache).  Key *names* only
    (``api_key_env``), never keys."""

    provider: str | None = None
    base_url: str | None = Field(default=None, validation_alias=AliasChoices("base_url", "api_base"))
    model: str | None = None
    api_key_env: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    roles: dict[Role, RoleConfig] = Field(default_factory=dict)
    max_concurrency: int | None = Field(default=None, ge=1)
    cache: Literal["off", "read_write", "replay"] = "off"
    cache_path: str | None = None
    max_retries: int = Field(default=4, ge=0)
    timeout_s: float = Field(default=120.0, gt=0)
    prices: dict[str, PriceConfig] = Field(default_factory=dict)
    dspy_model: str | None = None
    any_model: bool = Field(default=False, description="the endpoint answers any model name (llama.cpp, some "
                            "proxies): the preflight accepts a model its /models listing does not name, with a "
                            "warning (it checks with a one-token completion); not part of the config hash")
    transcripts: bool = Field(default=True, description="keep every LLM call's messages and answers in the job's "
                              "artifacts/transcript.jsonl (masked); not part of the config hash")
    transcript_max_chars: int = Field(default=20_000, ge=100, description="a transcript text longer than this "
                                      "keeps its head and tail around a marker; not part of the config hash")
    transcript_max_mb: float = Field(default=50.0, gt=0, description="a job's transcript past this size keeps "
                                     "its calls' figures but no text; not part of the config hash")

    @classmethod
    def of(cls, llm: LLMConfig | Mapping[str, Any] | None) -> LLMConfig:
        """``llm`` as the typed block: itself, or a mapping (the block as JSON) validated."""
        return llm if isinstance(llm, LLMConfig) else cls.model_validate(dict(llm or {}))

    def role(self, role: str) -> RoleConfig:
        """The role's own settings (empty when the config gives the role none)."""
        return self.roles.get(cast(Role, role)) or _NO_ROLE

    @model_validator(mode="before")
    @classmethod
    def _no_inline_secrets(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for key in ("api_key", "key", "openai_api_key", "token"):
                if key in data:
                    raise ValueError(f"llm.{key} is not allowed: {SECRET_HINT}")
        return data

    @model_validator(mode="after")
    def _replay_needs_a_cache(self) -> LLMConfig:
        if self.cache == "replay" and not self.cache_path:
            # without a path the cache would be the new run's own, empty one: every call would miss
            raise ValueError("cache 'replay' needs cache_path (a recorded run's llm_cache.sqlite); "
                             "to re-run a recorded run offline use: trace-bench run --replay RUN")
        return self


_NO_ROLE = RoleConfig()


class TaskEntry(_Strict):
    model_config = ConfigDict(defer_build=True)

    id: str = Field(validation_alias=AliasChoices("id", "key", "task"))
    eval_kwargs: dict[str, Any] = Field(default_factory=dict)

    @field_validator("id")
    @classmethod
    def _non_empty(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("task id is empty")
        return value.strip()


class TrainerEntry(BaseModel):
    """A trainer and its params variants; other keys beside ``id`` are trainer knobs."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, allow_inf_nan=False, defer_build=True)

    id: str = Field(validation_alias=AliasChoices("id", "name", "trainer", "key"))
    params_variants: list[dict[str, Any]] | None = None
    params: dict[str, Any] | None = Field(default=None, validation_alias=AliasChoices("params", "trainer_kwargs"))
    optimizer: str | None = None
    optimizer_kwargs: dict[str, Any] = Field(default_factory=dict)
    guide: str | None = None
    guide_kwargs: dict[str, Any] = Field(default_factory=dict)
    logger: str | None = None
    logger_kwargs: dict[str, Any] = Field(default_factory=dict)

    @property
    def knobs(self) -> dict[str, Any]:
        return {k.replace("-", "_"): v for k, v in (self.model_extra or {}).items()}

    def variants(self) -> list[dict[str, Any]]:
        if self.params_variants:
            return [dict(v) for v in self.params_variants]
        return [dict(self.params or {})]


class RayConfig(_Strict):
    """Per-job Ray resources and the cluster address (``None`` starts a local cluster)."""

    model_config = ConfigDict(defer_build=True)

    address: str | None = None
    num_cpus: float = Field(default=1.0, gt=0)
    num_gpus: float = Field(default=0.0, ge=0)
    memory_mb: int | None = Field(default=None, ge=1)


class RunConfig(_Strict):
    """A whole experiment: tasks x trainers x params variants x seeds."""

    model_config = ConfigDict(defer_build=True)

    run_id: str | None = None
    runs_dir: str = Field(default="runs", validation_alias=AliasChoices("runs_dir", "runs_root"))
    mode: Literal["stub", "real"] = "stub"
    seeds: list[int] = Field(default_factory=lambda: [123])
    max_workers: int = Field(default=1, ge=1, validation_alias=AliasChoices("max_workers", "n_concurrent"))
    fail_fast: bool = False
    resume: Literal["auto", "failed", "none"] = "auto"
    job_timeout: float | None = Field(default=None, ge=0)
    job_memory_mb: int | None = Field(default=None, ge=64)
    tasks: list[TaskEntry] = Field(default_factory=list)
    trainers: list[TrainerEntry] = Field(default_factory=list)
    llm: LLMConfig = Field(default_factory=LLMConfig)
    budget: BudgetConfig = Field(default_factory=BudgetConfig)
    analysis: AnalysisConfig = Field(default_factory=AnalysisConfig)
    tags: list[str] = Field(default_factory=list)
    eval_kwargs: dict[str, Any] = Field(default_factory=dict)
    trainer_kwargs: dict[str, Any] = Field(default_factory=dict)
    race: RaceConfig | None = Field(default=None, description="race the seeds (trace_bench.config.race); none: "
                                    "every arm runs every seed")
    executor: Literal["local", "ray"] = "local"
    max_retries: int = Field(default=0, ge=0, description="re-runs of a job whose worker process was lost")
    ray: RayConfig = Field(default_factory=RayConfig)
    trackers: list[Literal["mlflow", "tensorboard", "wandb"]] = Field(default_factory=list)
    sandbox: Literal["strong", "weak"] = Field(
        default="strong", description="weak: run LLM-written code without bubblewrap where it is unavailable")

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = {str(k).replace("-", "_") if str(k) in _HYPHEN_KEYS else k: v for k, v in data.items()}
        if "seed" in data:
            if "seeds" in data:
                raise ValueError("give either 'seed' or 'seeds', not both")
            seed = data.pop("seed")
            data["seeds"] = seed if isinstance(seed, list) else [seed]
        # the original normalised '-' to '_' in these knobs (ps-steps, gepa-iters, ...)
        knobs = {str(k).replace("-", "_"): data.pop(k) for k in list(data)
                 if str(k).replace("-", "_") in TOP_LEVEL_KNOBS}
        if knobs:
            merged = dict(data.get("trainer_kwargs") or {})
            for key, value in knobs.items():
                merged.setdefault(key, value)
            data["trainer_kwargs"] = merged
        tasks = data.get("tasks")
        if isinstance(tasks, list):
            data["tasks"] = [{"id": t} if isinstance(t, str) else t for t in tasks]
        trainers = data.get("trainers")
        if isinstance(trainers, list):
            data["trainers"] = [{"id": t} if isinstance(t, str) else t for t in trainers]
        return data

    @classmethod
    def from_dict(cls, data: Any) -> RunConfig:
        """The original Trace-Bench's constructor name for :func:`parse_config` (unknown keys and bad
        values raise ``ConfigError``, a ``ValueError``)."""
        return parse_config(data)

    @field_validator("run_id")
    @classmethod
    def _safe_run_id(cls, value: str | None) -> str | None:
        if value is not None and not SAFE_RUN_ID.fullmatch(value):
            raise ValueError("must be one directory name of letters, digits, '.', '_' or '-' (at most 128, "
                             "starting with a letter or digit); it cannot be a path: use runs_dir or --runs-dir for "
                             "where runs go")
        return value

    @field_validator("seeds")
    @classmethod
    def _seeds(cls, value: list[int]) -> list[int]:
        if not value:
            raise ValueError("seeds is empty: give at least one seed")
        if len(set(value)) != len(value):
            raise ValueError("seeds has duplicates")
        return value

    @model_validator(mode="after")
    def _race_within_seeds(self) -> RunConfig:
        if self.race is not None:
            check_race_seeds(self.race, self.seeds)
        return self

    @field_validator("tags", mode="before")
    @classmethod
    def _tags(cls, value: Any) -> Any:
        return [str(v) for v in value] if isinstance(value, list) else value


_HYPHEN_KEYS = {"job-timeout", "n-concurrent", "max-workers", "runs-dir", "fail-fast", "job-memory-mb"}

RUN_LOCAL_FIELDS = ("run_id", "runs_dir", "max_workers", "resume", "force", "executor", "ray", "trackers", "analysis",
                    "max_retries", "sandbox")


def _model_at(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model that owns the mapping at ``loc`` (for 'did you mean' on unknown keys)."""
    path = tuple(p for p in loc if not isinstance(p, int))
    table: dict[tuple[str, ...], type[BaseModel]] = {
        (): RunConfig, ("llm",): LLMConfig, ("budget",): BudgetConfig, ("ray",): RayConfig,
        ("analysis",): AnalysisConfig,
        ("tasks",): TaskEntry,
        ("race",): RaceConfig,
    }
    if len(path) == 3 and path[:2] == ("llm", "roles"):
        return RoleConfig
    if len(path) == 3 and path[:2] == ("llm", "prices"):
        return PriceConfig
    return table.get(path)


def _reject_non_finite(data: Any, file: str | None) -> None:
    """NaN and infinity anywhere in a config are errors: every run file is strict JSON, which has neither."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(data, ())]
    budget = 4 * MAX_NODES  # a file is bounded by the loader; a cyclic dict from Python is left to pydantic
    while stack and budget:
        budget -= 1
        value, loc = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(f"{value} is not allowed: run files are JSON, which has no NaN or infinity",
                              file=file, key_path=format_loc(loc) or None, hint="use a finite number or null")
        if isinstance(value, dict):
            stack.extend((v, (*loc, k)) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, (*loc, i)) for i, v in enumerate(value))


def parse_config(data: Any, *, file: str | None = None) -> RunConfig:
    """Validate a config mapping; raises :class:`ConfigError` with the key path and a hint."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"the top level must be a mapping of keys, got {type(data).__name__}", file=file)
    for key in data:
        if not isinstance(key, str):
            raise ConfigError(f"keys must be strings, got {key!r}", file=file)
    _reject_non_finite(data, file)
    try:
        return RunConfig.model_validate(data)
    except ValidationError as exc:
        raise config_error(exc, _model_at, RunConfig, TOP_LEVEL_KNOBS).with_file(file) from None
    except (TypeError, ValueError) as exc:  # raised by a 'before' validator on odd shapes
        raise ConfigError(str(exc), file=file) from None
