"""Load run directories into pandas frames (jobs, curves, LLM calls)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from trace_bench.store.events import read_events

SCORED = ("ok", "budget_exhausted")
NUMERIC = ("score_initial", "score_final", "score_best", "score_test", "n_steps", "n_evals", "llm_calls",
           "cache_hits", "prompt_tokens", "completion_tokens", "total_tokens", "cost_usd", "time_seconds", "seed")


class RunDirError(ValueError):
    """A run directory that cannot be read; the message names the file and the problem."""


@dataclass
class RunSet:
    jobs: pd.DataFrame
    curves: pd.DataFrame
    manifests: dict[str, dict[str, Any]] = field(default_factory=dict)
    run_dirs: list[Path] = field(default_factory=list)

    def llm_calls(self) -> pd.DataFrame:
        rows = []
        for run_dir in self.run_dirs:
            for job_dir in sorted((run_dir / "jobs").glob("*")):
                for event in read_events(job_dir / "events.jsonl"):
                    if event.get("type") == "llm_call":
                        rows.append({"run_id": run_dir.name, "job_id": job_dir.name, **event})
        return pd.DataFrame(rows)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunDirError(f"{path}: missing") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise RunDirError(f"{path}: not valid JSON ({exc})") from None


def _read_results(run_dir: Path) -> pd.DataFrame:
    path = run_dir / "results.csv"
    if not path.exists():
        raise RunDirError(f"{path}: missing (is {run_dir} a trace-bench run directory?)")
    try:
        frame = pd.read_csv(path, dtype={"job_id": str, "run_id": str, "params_label": str, "error": str})
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise RunDirError(f"{path}: cannot be read as CSV ({exc})") from None
    missing = {"job_id", "task", "trainer", "seed", "status", "score_best"} - set(frame.columns)
    if missing:
        raise RunDirError(f"{path}: missing columns {', '.join(sorted(missing))}")
    for column in NUMERIC:
        if column in frame:
            frame[column] = pd.to_numeric(frame[column], errors="coerce")
    frame["params_label"] = frame["params_label"].fillna("default")
    frame["error"] = frame["error"].fillna("")
    frame["scored"] = frame["status"].isin(SCORED) & frame["score_best"].notna()
    return frame


def _read_curves(run_dir: Path, jobs: pd.DataFrame) -> pd.DataFrame:
    """All curve.csv files of a run in one frame (plain csv reading: pandas per file is slow)."""
    import csv

    records: list[list[Any]] = []
    header: list[str] | None = None
    for job_id in jobs["job_id"]:
        path = run_dir / "jobs" / str(job_id) / "artifacts" / "curve.csv"
        try:
            with open(path, encoding="utf-8", newline="") as handle:
                reader = csv.reader(handle)
                columns = next(reader, None)
                if not columns:
                    continue
                header = header or columns
                if columns != header:
                    continue
                records.extend([*row, job_id] for row in reader if len(row) == len(columns))
        except OSError:
            continue
    if header is None:
        return pd.DataFrame(columns=["job_id", "step", "llm_calls", "tokens", "usd", "wall_s", "score", "best_score",
                                     "task", "trainer", "params_label", "seed", "status", "run_id"])
    curves = pd.DataFrame(records, columns=[*header, "job_id"])
    for column in header:
        curves[column] = pd.to_numeric(curves[column], errors="coerce")
    keys = jobs.set_index("job_id")[["task", "trainer", "params_label", "seed", "status"]]
    curves = curves.join(keys, on="job_id")
    curves["run_id"] = run_dir.name
    return curves


def load_runs(paths: list[str | Path]) -> RunSet:
    jobs, curves, manifests, dirs = [], [], {}, []
    for raw in paths:
        run_dir = Path(raw)
        if not run_dir.is_dir():
            raise RunDirError(f"{run_dir}: not a directory")
        manifest = _read_json(run_dir / "meta" / "manifest.json")
        if not isinstance(manifest, dict):
            raise RunDirError(f"{run_dir / 'meta' / 'manifest.json'}: expected an object")
        frame = _read_results(run_dir)
        frame["run_id"] = run_dir.name
        jobs.append(frame)
        curves.append(_read_curves(run_dir, frame))
        manifests[run_dir.name] = manifest
        dirs.append(run_dir)
    return RunSet(pd.concat(jobs, ignore_index=True), pd.concat(curves, ignore_index=True), manifests, dirs)
