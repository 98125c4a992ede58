"""Read run directories into pandas frames: one row per job, per curve point and per LLM call.

Every file is read through the store (``trace_bench.store.RunStore``), which owns the run
directory's format and its versions.  Everything a user may point us at by mistake (a wrong
folder, a run killed mid-write, a hand-edited file, a run written by a newer trace-bench) becomes
a ``RunDirError`` whose message names the file and the problem, so the CLI prints one line instead
of a traceback.  Curves arrive as rows of strings and are assembled into one frame at the end: a
pandas parser per small file costs ~1 ms, which dominates on 1,000-job runs.

A task under one set of eval_kwargs is its own task: the frames' ``task`` column holds the task's
label (``internal:numeric_param[target=5]`` when a run has the task under several eval_kwargs; the
id otherwise), so every ranking, test and table groups by it; ``task_id`` keeps the bare id.  Each
job row carries ``planned``: how many seeds its arm planned in its run (the manifest), so an arm
with failed or missing seeds is known to be incomplete.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd

from trace_bench._util.errors import TraceBenchError
from trace_bench.analysis.axes import run_condition
from trace_bench.store.columns import Column
from trace_bench.store.models import ARM_FIELDS, CURVE_COLUMNS, LLMCall, ManifestJob, StoreError
from trace_bench.store.ranking import variant_of
from trace_bench.store.run_store import RunStore
from trace_bench.store.status import RAN, SUCCESSFUL

SCORED_STATUSES = tuple(sorted(str(status) for status in SUCCESSFUL))
#: statuses of jobs that ran (all but ``skipped``): an arm's cost per job averages them all
RAN_STATUSES = tuple(sorted(str(status) for status in RAN))
ARM = list(ARM_FIELDS)
JOB_KEYS = ["run_id", "job_id", *ARM, "seed", "status"]
REQUIRED_COLUMNS = ("job_id", "task", "trainer", "seed", "status", "score_best")
LLM_CALL_COLUMNS = ("ts", "role", "model", "phase", "prompt_tokens", "completion_tokens", "cost_usd",
                    "latency_s", "cached", "retries", "error")


class RunDirError(TraceBenchError, ValueError):
    """A run directory that cannot be read; the message names the file and what is wrong with it."""


@dataclass
class RunSet:
    """Frames of one or more runs.  ``jobs`` has one typed row per job (plus ``scored``, true for jobs
    whose best score enters statistics); ``curves`` has the curve points joined with the job keys;
    ``llm_calls`` (read on first use: events logs can be large) has one row per LLM call."""

    jobs: pd.DataFrame
    curves: pd.DataFrame
    manifests: dict[str, dict[str, Any]]
    snapshots: dict[str, dict[str, Any]]
    run_dirs: dict[str, Path] = field(default_factory=dict)

    @cached_property
    def llm_calls(self) -> pd.DataFrame:
        frames = [_read_llm_calls(run_dir, self.jobs[self.jobs["run_id"] == run_id])
                  for run_id, run_dir in self.run_dirs.items()]
        return pd.concat(frames, ignore_index=True) if frames else _empty_llm_calls()

    @property
    def run_ids(self) -> list[str]:
        return list(self.run_dirs)


def load_runs(paths: str | Path | Sequence[str | Path]) -> RunSet:
    """Load run directories (a path or a list of paths) into one ``RunSet``."""
    items = [paths] if isinstance(paths, (str, Path)) else list(paths)
    if not items:
        raise RunDirError("no run directory given")
    jobs, curves = [], []
    manifests: dict[str, dict[str, Any]] = {}
    snapshots: dict[str, dict[str, Any]] = {}
    dirs: dict[str, Path] = {}
    for item in items:
        run_dir = Path(item)
        if not run_dir.is_dir():
            raise RunDirError(f"{run_dir}: no such run directory")
        store = RunStore(run_dir)
        manifest = _read_manifest(store)
        run_id = str(manifest.get("run_id") or run_dir.name)
        if run_id in dirs:
            raise RunDirError(f"{run_dir}: same run_id {run_id!r} as {dirs[run_id]}; give each run once")
        frame = split_pooled_tasks(_read_results(store, run_id), manifest)
        frame["planned"] = _planned_seeds(manifest, frame)
        jobs.append(frame)
        curves.append(_read_curves(store, frame))
        manifests[run_id] = manifest
        snapshots[run_id] = _read_snapshot(store)
        dirs[run_id] = run_dir
    return RunSet(pd.concat(jobs, ignore_index=True), pd.concat(curves, ignore_index=True), manifests,
                  snapshots, dirs)


def load_jobs(run_dir: str | Path) -> pd.DataFrame:
    """One run's typed job rows alone (``RunSet.jobs`` without curves, manifests of other runs or
    events): what a view needs that only shows per-job numbers, such as the UI's frontier; with the
    seeds each arm ``planned`` (its manifest), so an arm with missing seeds is known to be incomplete."""
    path = Path(run_dir)
    if not path.is_dir():
        raise RunDirError(f"{path}: no such run directory")
    store = RunStore(path)
    manifest = _read_manifest(store)
    frame = split_pooled_tasks(_read_results(store, str(manifest.get("run_id") or path.name)), manifest)
    frame["planned"] = _planned_seeds(manifest, frame)
    return frame


def _read_manifest(store: RunStore) -> dict[str, Any]:
    """The manifest's head, and of each job entry what the axes of a comparison need (the entries
    are read one at a time: a large run's whole manifest would dwarf its results)."""
    try:
        manifest = store.read_manifest_head()
        if manifest is None:
            raise RunDirError(f"{store.manifest_path}: missing (is {store.root} a trace-bench run directory?)")
        jobs = [_axes_of(entry) for entry in store.manifest_entries()]
    except StoreError as exc:
        raise RunDirError(str(exc)) from None
    return {**manifest.model_dump(mode="json", exclude={"jobs"}), "jobs": jobs}


def _axes_of(entry: ManifestJob) -> dict[str, Any]:
    spec = entry.spec
    return {"job_id": spec.job_id, "task": spec.task, "task_label": spec.task_label, "eval_kwargs": spec.eval_kwargs,
            "trainer": spec.trainer,
            "seed": spec.seed, "params": spec.params, "params_label": spec.params_label,
            "llm_identity": spec.llm_identity.model_dump(mode="json"), "status": str(entry.status),
            "resolved": {"optimizer": spec.optimizer_name, "optimizer_kwargs": spec.optimizer_kwargs}}


def _planned_seeds(manifest: dict[str, Any], frame: pd.DataFrame) -> pd.Series:
    """Per job row, the seeds its arm planned in this run: the manifest's jobs of the arm, or the
    arm's rows when the manifest lists none (an older or partial run)."""
    counts: dict[tuple[str, str, str], int] = {}
    for entry in manifest.get("jobs") or []:
        label, params = variant_of(str(entry.get("task", "")), entry.get("task_label"), entry.get("params_label"))
        key = (label, str(entry.get("trainer", "")), params)
        counts[key] = counts.get(key, 0) + 1
    rows = frame.groupby(ARM)["job_id"].transform("count")
    planned = [counts.get((t, tr, p), 0) for t, tr, p in zip(frame["task"], frame["trainer"], frame["params_label"],
                                                             strict=True)]
    return pd.Series([max(a, int(b)) for a, b in zip(planned, rows, strict=True)], index=frame.index, dtype="int64")


def _variant_label(eval_kwargs: dict[str, Any]) -> str:
    """``k=v,...`` of a task's eval_kwargs, as the matrix labels a variant (``id[k=v]``)."""
    return ",".join(f"{k}={json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else v}"
                    for k, v in sorted(eval_kwargs.items())) or "default"


def split_pooled_tasks(frame: pd.DataFrame, manifest: dict[str, Any]) -> pd.DataFrame:
    """A run extended before extensions were checked may hold two tasks under one label (eval_kwargs
    changed under the same task id: one arm with seeds 1-3 twice).  Such a label's jobs are named by
    their eval_kwargs (``task[k=v]``, from the manifest), so no table pairs or pools them as one task."""
    if frame.empty or not frame.duplicated([*ARM, "seed"]).any():
        return frame
    kwargs = {str(e.get("job_id")): e.get("eval_kwargs") or {} for e in manifest.get("jobs") or []}
    pooled = set(frame.loc[frame.duplicated([*ARM, "seed"], keep=False), "task"])
    frame = frame.copy()
    for task in pooled:
        rows = frame["task"] == task
        frame.loc[rows, "task"] = [f"{task}[{_variant_label(kwargs.get(str(j), {}))}]" for j in frame.loc[rows, "job_id"]]
    return frame


def _read_snapshot(store: RunStore) -> dict[str, Any]:
    """The config snapshot is optional for reading results; compare uses it to name differing axes."""
    try:
        return store.read_snapshot() or {}
    except StoreError as exc:
        raise RunDirError(str(exc)) from None


def _read_results(store: RunStore, run_id: str) -> pd.DataFrame:
    path = store.results_csv_path
    try:
        header = (store.read_results_table() or ([], []))[0]
        table = store.read_result_rows(original=False)
    except StoreError as exc:
        raise RunDirError(str(exc)) from None
    if table is None:
        raise RunDirError(f"{path}: missing (is {store.root} a trace-bench run directory? the runner writes "
                          "results.csv after the first job finishes)")
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise RunDirError(f"{path}: missing column(s) {', '.join(missing)}")
    columns, rows = table
    if any(row[[c.name for c in columns].index("seed")] is None for row in rows):
        raise RunDirError(f"{path}: a job without a seed")
    return _typed_jobs(pd.DataFrame(rows, columns=[c.name for c in columns]), columns, run_id)


def _typed_jobs(frame: pd.DataFrame, columns: list[Column], run_id: str) -> pd.DataFrame:
    """The frame's dtypes from the record's column kinds: numbers as floats (NaN when empty), seeds as
    ints, flags as bools, timestamps as UTC datetimes, text as text ('' when empty); a job listed
    twice keeps its last row (results.csv is rebuilt from results.json, so duplicates only come
    from hand edits)."""
    frame["run_id"] = run_id
    for col in columns:
        if col.name == "seed":
            frame["seed"] = frame["seed"].astype("int64")
        elif col.kind in ("float", "int"):
            frame[col.name] = pd.to_numeric(frame[col.name], errors="coerce").astype("float64")
        elif col.kind == "bool":
            frame[col.name] = frame[col.name].map(lambda value: value is True)
        elif col.kind == "timestamp":
            frame[col.name] = pd.to_datetime(frame[col.name].fillna(""), errors="coerce", utc=True, format="ISO8601")
        elif col.kind == "str":
            frame[col.name] = frame[col.name].fillna("").astype(str)
    frame["params_label"] = frame["params_label"].replace("", "default")
    named = [variant_of(t, label, p) for t, label, p in zip(frame["task"], frame["task_label"], frame["params_label"],
                                                            strict=True)]
    frame["task_id"] = frame["task"]
    frame["task"] = [label for label, _ in named]  # each eval_kwargs variant is its own task
    frame["params_label"] = [params for _, params in named]
    frame["scored"] = frame["status"].isin(SCORED_STATUSES) & frame["score_best"].notna()
    frame["ran"] = frame["status"].isin(RAN_STATUSES)
    return frame.drop_duplicates("job_id", keep="last").reset_index(drop=True)


def _read_curves(store: RunStore, jobs: pd.DataFrame) -> pd.DataFrame:
    """Every job's curve.csv in one frame; a job without one (it failed before its first evaluation)
    simply has no points, and a torn row is dropped."""
    columns: list[str] = list(CURVE_COLUMNS)
    records: list[list[str]] = []
    owners: list[int] = []
    for position, job_id in enumerate(jobs["job_id"]):
        try:
            _, body = store.job(job_id).curve_cells()
        except StoreError as exc:
            raise RunDirError(str(exc)) from None
        records.extend(body)
        owners.extend([position] * len(body))
    curves = pd.DataFrame(records, columns=columns)
    kinds = curves.pop("kind").astype(str) if "kind" in curves else pd.Series(dtype=str)
    curves = curves.apply(pd.to_numeric, errors="coerce") if records else curves.astype(float)
    curves["kind"] = kinds.to_numpy() if records else kinds
    keys = jobs[JOB_KEYS].iloc[owners].reset_index(drop=True)
    return pd.concat([keys, curves], axis=1)


def _read_llm_calls(run_dir: Path, jobs: pd.DataFrame) -> pd.DataFrame:
    """One row per ``llm_call`` event of the jobs; a torn or corrupt line (a kill mid-write) is skipped."""
    store = RunStore(run_dir)
    rows: list[list[Any]] = []
    for keys in jobs[JOB_KEYS].itertuples(index=False):
        for event in store.job(keys.job_id).events(contains='"llm_call"'):
            if isinstance(event, LLMCall):
                rows.append([*keys, *(getattr(event, c) for c in LLM_CALL_COLUMNS)])
    frame = pd.DataFrame(rows, columns=[*JOB_KEYS, *LLM_CALL_COLUMNS])
    for column in ("prompt_tokens", "completion_tokens", "cost_usd", "latency_s", "retries"):
        frame[column] = pd.to_numeric(frame[column], errors="coerce")
    frame["cached"] = frame["cached"].map(lambda value: value is True)
    frame["error"] = frame["error"].fillna("").astype(str)
    return frame


def _empty_llm_calls() -> pd.DataFrame:
    return pd.DataFrame(columns=[*JOB_KEYS, *LLM_CALL_COLUMNS])


def distinguish_runs(runs: RunSet) -> RunSet:
    """Runs given together are pooled only when they extend one another: same mode and LLM, no
    (task, trainer, variant, seed) cell twice.  Otherwise they are different conditions (another
    LLM, say), and each run's trainers are named ``trainer @ run_id`` so no arm mixes them."""
    jobs = runs.jobs
    if jobs["run_id"].nunique() < 2:
        return runs
    conditions = {run_condition(runs.manifests[r], runs.snapshots[r], jobs[jobs["run_id"] == r])
                  for r in runs.run_ids}
    if len(conditions) < 2 and not jobs.duplicated([*ARM, "seed"]).any():
        return runs
    curves = runs.curves.copy()
    runs_jobs = jobs.assign(trainer=jobs["trainer"] + " @ " + jobs["run_id"])
    curves["trainer"] = curves["trainer"] + " @ " + curves["run_id"]
    return RunSet(runs_jobs, curves, runs.manifests, runs.snapshots, runs.run_dirs)


def ran_jobs(jobs: pd.DataFrame) -> pd.DataFrame:
    """The jobs that ran (every status but ``skipped``), over which an arm's cost per job is
    averaged: a failed job spent too, and a mean over the scored ones would make an arm that
    lost its expensive seeds look cheap."""
    return jobs[jobs["ran"]] if "ran" in jobs else jobs[jobs["status"].isin(RAN_STATUSES)]

