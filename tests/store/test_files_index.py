"""meta/files_index.json built incrementally equals the index built from nothing, whatever changed
between the two: job directories gone, new ones between old names, files added, an old index in
another order (the previous index is read in step with the walk, never held whole)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from trace_bench.store.files_index import write_files_index


def _tree(root: Path, names: list[str]) -> None:
    (root / "meta").mkdir(parents=True, exist_ok=True)
    (root / "events.jsonl").write_text("{}\n")
    (root / "results.csv").write_text("job_id\n")
    for name in names:
        job = root / "jobs" / name
        (job / "artifacts").mkdir(parents=True, exist_ok=True)
        (job / "results.json").write_text("{}")
        (job / "curve.csv").write_text("step\n0\n")
        (job / "artifacts" / "best.yaml").write_text("x: 1\n")


def _listing(target: Path) -> list[dict[str, object]]:
    return [f for f in json.loads(target.read_text())["files"] if f["path"] != "meta/files_index.json"]


def _whole(root: Path, tmp: Path) -> list[dict[str, object]]:
    target = tmp / "whole.json"
    write_files_index(root, target)
    return _listing(target)


def _age(root: Path) -> None:
    """Date every job directory well before the index about to be written, as when they were
    written by an earlier invocation (a directory touched in the index's own tick is walked again)."""
    past = os.stat(root).st_mtime_ns - 10 * 10**9
    for job in (root / "jobs").iterdir():
        os.utime(job, ns=(past, past))


def test_incremental_equals_whole_after_removals_insertions_and_edits(tmp_path: Path) -> None:
    root = tmp_path / "run"
    _tree(root, ["b1", "b3", "b5", "b7"])
    _age(root)
    target = root / "meta" / "files_index.json"
    assert write_files_index(root, target) == 2 + 4 * 3
    os.rename(root / "jobs" / "b3", tmp_path / "gone")  # a directory the old index lists, now gone
    _tree(root, ["b0", "b4", "b9"])  # new ones before, between and after the old names
    (root / "jobs" / "b5" / "extra.txt").write_text("12345")  # an edited directory: walked again
    count = write_files_index(root, target)
    listing = _listing(target)
    assert listing == _whole(root, tmp_path)
    assert count == len(listing) + 1  # the previous index itself is listed too
    paths = [f["path"] for f in listing]
    assert "jobs/b5/extra.txt" in paths and not any(p.startswith("jobs/b3/") for p in paths)
    assert paths == sorted(paths, key=lambda p: p.split("/"))


def test_an_unchanged_directory_keeps_its_old_lines(tmp_path: Path) -> None:
    root = tmp_path / "run"
    _tree(root, ["a", "b"])
    _age(root)
    target = root / "meta" / "files_index.json"
    write_files_index(root, target)
    # plant a size the walk would not find: kept verbatim means the old line was reused, not re-walked
    text = target.read_text()
    planted = text.replace('{"path": "jobs/a/curve.csv", "bytes": 7}', '{"path": "jobs/a/curve.csv", "bytes": 999}')
    assert planted != text
    target.write_text(planted)
    write_files_index(root, target)
    assert {"path": "jobs/a/curve.csv", "bytes": 999} in _listing(target)


def test_an_old_index_with_its_jobs_out_of_order_is_rebuilt_right(tmp_path: Path) -> None:
    root = tmp_path / "run"
    _tree(root, ["a", "b", "c"])
    _age(root)
    target = root / "meta" / "files_index.json"
    write_files_index(root, target)
    head, *entries = target.read_text().rstrip("\n").removesuffix("]}").splitlines()
    entries = [e.rstrip(",") for e in entries]
    jobs = [e for e in entries if e.startswith('{"path": "jobs/')]
    by_job = sorted(jobs, key=lambda e: e.split("/")[1], reverse=True)  # c's lines, then b's, then a's
    others = [e for e in entries if e not in jobs]
    target.write_text(head + "\n" + ",\n".join(others + by_job) + "\n]}\n")
    write_files_index(root, target)
    assert _listing(target) == _whole(root, tmp_path)
