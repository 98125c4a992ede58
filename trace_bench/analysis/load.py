"""Read run directories into pandas frames: one row per job, per curve point and per LLM call.

The run directory is the runner's contract (docs/artifacts.md).  Everything a user may point us at
by mistake (a wrong folder, a run killed mid-write, a hand-edited file) becomes a ``RunDirError``
whose message names the file and the problem, so the CLI prints one line instead of a traceback.
Curves and events are read with the ``csv``/``json`` modules and assembled into one frame at the
end: a pandas parser per small file costs ~1 ms, which dominates on 1,000-job runs.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

SCHEMA_VERSION = 1
SCORED_STATUSES = ("ok", "budget_exhausted")
ARM = ["task", "trainer", "params_label"]
JOB_KEYS = ["run_id", "job_id", *ARM, "seed", "status"]
REQUIRED_COLUMNS = ("job_id", "task", "trainer", "seed", "status", "score_best")
FLOAT_COLUMNS = ("score_initial", "score_final", "score_best", "score_test", "cost_usd", "time_seconds")
COUNT_COLUMNS = ("n_steps", "n_evals", "llm_calls", "cache_hits", "prompt_tokens", "completion_tokens",
                 "total_tokens")
CURVE_COLUMNS = ("step", "wall_s", "n_evals", "llm_calls", "tokens", "usd", "score", "best_score")
LLM_CALL_COLUMNS = ("ts", "role", "model", "phase", "prompt_tokens", "completion_tokens", "cost_usd",
                    "latency_s", "cached", "retries", "error")


class RunDirError(ValueError):
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
        manifest = _read_manifest(run_dir / "meta" / "manifest.json")
        run_id = str(manifest.get("run_id") or run_dir.name)
        if run_id in dirs:
            raise RunDirError(f"{run_dir}: same run_id {run_id!r} as {dirs[run_id]}; give each run once")
        frame = _read_results(run_dir / "results.csv", run_id)
        jobs.append(frame)
        curves.append(_read_curves(run_dir, frame))
        manifests[run_id] = manifest
        snapshots[run_id] = _read_snapshot(run_dir / "meta" / "config.snapshot.yaml")
        dirs[run_id] = run_dir
    return RunSet(pd.concat(jobs, ignore_index=True), pd.concat(curves, ignore_index=True), manifests,
                  snapshots, dirs)


def _read_manifest(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunDirError(f"{path}: missing (is {path.parent.parent} a trace-bench run directory?)") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise RunDirError(f"{path}: not valid JSON ({exc}); the file is truncated or was edited by hand") from None
    if not isinstance(data, dict):
        raise RunDirError(f"{path}: expected a JSON object, found {type(data).__name__}")
    version = data.get("schema_version", SCHEMA_VERSION)
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise RunDirError(f"{path}: schema_version {version!r} is newer than this trace-bench reads "
                          f"({SCHEMA_VERSION}); upgrade trace-bench")
    return data


def _read_snapshot(path: Path) -> dict[str, Any]:
    """The config snapshot is optional for reading results; compare uses it to name differing axes."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise RunDirError(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None
    return data if isinstance(data, dict) else {}


def _read_results(path: Path, run_id: str) -> pd.DataFrame:
    if not path.exists():
        raise RunDirError(f"{path}: missing (is {path.parent} a trace-bench run directory? the runner writes "
                          "results.csv after the first job finishes)")
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except pd.errors.EmptyDataError:
        raise RunDirError(f"{path}: empty file (no header row)") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise RunDirError(f"{path}: cannot be read as CSV ({str(exc).strip()})") from None
    missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
    if missing:
        raise RunDirError(f"{path}: missing column(s) {', '.join(missing)}")
    return _typed_jobs(frame, run_id, path)


def _typed_jobs(frame: pd.DataFrame, run_id: str, path: Path) -> pd.DataFrame:
    """Numbers as floats (NaN when empty), seeds as ints, flags as bools; a job listed twice keeps its
    last row (results.csv is rebuilt from results.json, so duplicates only come from hand edits)."""
    frame["run_id"] = run_id
    for column in ("suite", "params", "mode", "llm_model", "error", "selection_split"):
        if column not in frame:
            frame[column] = ""
    frame["params_label"] = frame.get("params_label", pd.Series("default", index=frame.index)).replace("", "default")
    seeds = pd.to_numeric(frame["seed"], errors="coerce")
    if seeds.isna().any():
        bad = frame.loc[seeds.isna(), "seed"].iloc[0]
        raise RunDirError(f"{path}: seed {bad!r} is not an integer")
    frame["seed"] = seeds.astype("int64")
    numeric = [*FLOAT_COLUMNS, *COUNT_COLUMNS, *(c for c in frame.columns if c.startswith("obj_"))]
    for column in numeric:
        frame[column] = pd.to_numeric(frame[column], errors="coerce") if column in frame else float("nan")
    frame["tokens_estimated"] = frame.get("tokens_estimated", pd.Series("", index=frame.index)).str.lower() \
        .isin(("true", "1", "yes"))
    for column in ("started_at", "finished_at"):
        text = frame[column] if column in frame else pd.Series("", index=frame.index)
        frame[column] = pd.to_datetime(text, errors="coerce", utc=True, format="ISO8601")
    frame["scored"] = frame["status"].isin(SCORED_STATUSES) & frame["score_best"].notna()
    return frame.drop_duplicates("job_id", keep="last").reset_index(drop=True)


def _read_curves(run_dir: Path, jobs: pd.DataFrame) -> pd.DataFrame:
    """Every job's curve.csv in one frame; a job without one (it failed before its first evaluation)
    simply has no points, and a torn row is dropped."""
    columns: list[str] = list(CURVE_COLUMNS)
    records: list[list[str]] = []
    owners: list[int] = []
    for position, job_id in enumerate(jobs["job_id"]):
        path = run_dir / "jobs" / job_id / "artifacts" / "curve.csv"
        try:
            with open(path, encoding="utf-8", newline="") as handle:
                rows = list(csv.reader(handle))
        except FileNotFoundError:
            continue
        except (OSError, UnicodeDecodeError, csv.Error) as exc:
            raise RunDirError(f"{path}: cannot be read ({exc})") from None
        if not rows:
            continue
        header, body = rows[0], rows[1:]
        lacking = [c for c in ("step", "best_score") if c not in header]
        if lacking:
            raise RunDirError(f"{path}: header lacks column(s) {', '.join(lacking)}")
        if header != columns:
            order = [header.index(c) if c in header else None for c in columns]
            body = [[row[i] if i is not None else "" for i in order] for row in body if len(row) == len(header)]
        else:
            body = [row for row in body if len(row) == len(header)]
        records.extend(body)
        owners.extend([position] * len(body))
    curves = pd.DataFrame(records, columns=columns)
    curves = curves.apply(pd.to_numeric, errors="coerce") if records else curves.astype(float)
    keys = jobs[JOB_KEYS].iloc[owners].reset_index(drop=True)
    return pd.concat([keys, curves], axis=1)


def _iter_llm_calls(path: Path) -> Iterable[dict[str, Any]]:
    """``llm_call`` events of one log; a torn or corrupt line (a kill mid-write) is skipped."""
    try:
        handle = open(path, encoding="utf-8", errors="replace")  # noqa: SIM115
    except FileNotFoundError:
        return
    with handle:
        for line in handle:
            if '"llm_call"' not in line:
                continue
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict) and event.get("type") == "llm_call":
                yield event


def _read_llm_calls(run_dir: Path, jobs: pd.DataFrame) -> pd.DataFrame:
    rows: list[list[Any]] = []
    for keys in jobs[JOB_KEYS].itertuples(index=False):
        for event in _iter_llm_calls(run_dir / "jobs" / keys.job_id / "events.jsonl"):
            rows.append([*keys, *(event.get(c) for c in LLM_CALL_COLUMNS)])
    frame = pd.DataFrame(rows, columns=[*JOB_KEYS, *LLM_CALL_COLUMNS])
    for column in ("prompt_tokens", "completion_tokens", "cost_usd", "latency_s", "retries"):
        frame[column] = pd.to_numeric(frame[column], errors="coerce")
    frame["cached"] = frame["cached"].map(lambda value: value is True)
    frame["error"] = frame["error"].fillna("").astype(str)
    return frame


def _empty_llm_calls() -> pd.DataFrame:
    return pd.DataFrame(columns=[*JOB_KEYS, *LLM_CALL_COLUMNS])
