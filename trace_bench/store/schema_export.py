"""JSON Schemas of every run-directory record, for tools that read runs without trace-bench.

``python -m trace_bench.store.schema_export`` writes them to ``docs/schemas/`` (one file per
record, named after the file it describes); ``--check`` compares instead of writing and exits 1
when the committed schemas differ from the models (the test suite runs it).  Regenerate after
changing a model in ``trace_bench.store.models``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from trace_bench.store.models import (
    Attempts,
    CurveRow,
    EnvInfo,
    FilesIndex,
    GitInfo,
    Heartbeat,
    IntegrityReport,
    JobEvent,
    JobMeta,
    JobResult,
    LeaderboardRow,
    Manifest,
    RaceRecord,
    RunEvent,
    SpendEntry,
    StateFile,
    StateHistoryLine,
    Summary,
    TranscriptEntry,
)

#: schema file stem -> (model or union, what it describes)
RECORDS: dict[str, tuple[Any, str]] = {
    "manifest": (Manifest, "meta/manifest.json"),
    "env": (EnvInfo, "meta/env.json"),
    "git": (GitInfo, "meta/git.json"),
    "files_index": (FilesIndex, "meta/files_index.json"),
    "race": (RaceRecord, "meta/race.json (a raced run's rounds)"),
    "summary": (Summary, "summary.json"),
    "leaderboard_row": (LeaderboardRow, "a row of leaderboard.csv"),
    "run_event": (RunEvent, "a line of <run>/events.jsonl"),
    "job_meta": (JobMeta, "jobs/<job_id>/job_meta.json"),
    "job_result": (JobResult, "jobs/<job_id>/results.json (and a results.csv row)"),
    "attempts": (Attempts, "jobs/<job_id>/attempts.json"),
    "heartbeat": (Heartbeat, "jobs/<job_id>/heartbeat.json"),
    "spend_entry": (SpendEntry, "a line of jobs/<job_id>/llm_spend.jsonl"),
    "job_event": (JobEvent, "a line of jobs/<job_id>/events.jsonl"),
    "curve_row": (CurveRow, "a row of jobs/<job_id>/artifacts/curve.csv"),
    "state_file": (StateFile, "jobs/<job_id>/artifacts/{initial,best,final}_state.yaml"),
    "state_history_line": (StateHistoryLine, "a line of jobs/<job_id>/artifacts/state_history.jsonl"),
    "integrity": (IntegrityReport, "jobs/<job_id>/artifacts/integrity.json"),
    "transcript_entry": (TranscriptEntry, "a line of jobs/<job_id>/artifacts/transcript.jsonl"),
}
DEFAULT_DIR = Path(__file__).resolve().parents[2] / "docs" / "schemas"


def schema_of(name: str) -> dict[str, Any]:
    model, describes = RECORDS[name]
    schema = TypeAdapter(model).json_schema(mode="validation")
    doc = " ".join(str(schema.pop("description", "")).split())
    head = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": f"trace-bench/{name}.schema.json",
            "title": schema.pop("title", name),
            "description": f"trace-bench run directory, {describes}." + (f" {doc}" if doc else "")}
    return {**head, **schema}


def render(name: str) -> str:
    return json.dumps(schema_of(name), indent=2, ensure_ascii=False) + "\n"


def write_schemas(out_dir: Path = DEFAULT_DIR) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name in RECORDS:
        path = out_dir / f"{name}.schema.json"
        path.write_text(render(name), encoding="utf-8")
        written.append(path)
    return written


def stale_schemas(out_dir: Path = DEFAULT_DIR) -> list[str]:
    """Names whose committed schema differs from the model (or is missing), and stray files."""
    stale = []
    for name in RECORDS:
        path = out_dir / f"{name}.schema.json"
        if not path.is_file() or path.read_text(encoding="utf-8") != render(name):
            stale.append(name)
    expected = {f"{name}.schema.json" for name in RECORDS}
    stale += sorted(p.name for p in out_dir.glob("*.schema.json") if p.name not in expected)
    return stale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m trace_bench.store.schema_export", description=__doc__)
    parser.add_argument("--out", type=Path, default=DEFAULT_DIR, help="directory of the .schema.json files")
    parser.add_argument("--check", action="store_true", help="compare instead of writing; exit 1 when stale")
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_schemas(args.out)
        if stale:
            print(f"stale JSON schemas in {args.out}: {', '.join(stale)}; regenerate with "
                  "python -m trace_bench.store.schema_export", file=sys.stderr)
            return 1
        return 0
    for path in write_schemas(args.out):
        print(path)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
