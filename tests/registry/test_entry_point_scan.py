"""The entry-point lookup that skips the metadata scan finds what the standard lookup finds."""

from __future__ import annotations

import sys
from importlib import machinery
from importlib.metadata import entry_points as standard
from pathlib import Path

import pytest

from trace_bench._util.entry_points import declares, entry_points


def test_a_group_declared_on_the_path_is_found_as_the_standard_lookup_finds_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    group = "trace_bench_scan_test.plugins"
    # what earlier tests of this process may have installed (an import hook that finds distributions,
    # a zip on the path) makes the scan unsure, which is the case the next test covers
    monkeypatch.setattr(sys, "meta_path", [finder for finder in sys.meta_path if finder is machinery.PathFinder
                                           or not hasattr(finder, "find_distributions")])
    monkeypatch.setattr(sys, "path", [entry for entry in sys.path if not Path(entry or ".").is_file()])
    assert not declares(group) and entry_points(group) == ()
    info = tmp_path / "scan_demo-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: scan_demo\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[{group}]\ndemo = scan_demo:Demo\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert declares(group)
    assert [ep.value for ep in entry_points(group)] == [ep.value for ep in standard(group=group)] == ["scan_demo:Demo"]


def test_a_zip_on_the_path_makes_it_ask_the_standard_lookup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    archive = tmp_path / "plugins.zip"
    archive.write_bytes(b"PK\x05\x06" + b"\0" * 18)  # an empty zip archive
    monkeypatch.setattr(sys, "path", [str(archive), *sys.path])
    assert declares("trace_bench_scan_test.nothing")
