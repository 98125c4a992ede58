"""The entry-point lookup that skips the metadata scan finds what the standard lookup finds."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from trace_bench._util.entry_points import declares


def test_a_group_declared_on_the_path_is_found_as_the_standard_lookup_finds_it(tmp_path: Path) -> None:
    """In a fresh interpreter: what earlier tests of this process installed (import hooks, path
    entries, importlib's caches) must not decide what either lookup sees."""
    group = "trace_bench_scan_test.plugins"
    info = tmp_path / "plugins" / "scan_demo-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: scan_demo\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[{group}]\ndemo = scan_demo:Demo\n", encoding="utf-8")
    code = textwrap.dedent(f"""
        import json, sys
        from importlib.metadata import entry_points as standard
        from trace_bench._util.entry_points import declares, entry_points
        before = [declares({group!r}), [ep.value for ep in entry_points({group!r})]]
        sys.path.insert(0, {str(tmp_path / "plugins")!r})
        after = [declares({group!r}), [ep.value for ep in entry_points({group!r})],
                 [ep.value for ep in standard(group={group!r})]]
        print(json.dumps([before, after]))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True)
    before, after = json.loads(out.stdout.strip().splitlines()[-1])
    assert before == [False, []]
    assert after == [True, ["scan_demo:Demo"], ["scan_demo:Demo"]]


def test_a_zip_on_the_path_makes_it_ask_the_standard_lookup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    archive = tmp_path / "plugins.zip"
    archive.write_bytes(b"PK\x05\x06" + b"\0" * 18)  # an empty zip archive
    monkeypatch.setattr(sys, "path", [str(archive), *sys.path])
    assert declares("trace_bench_scan_test.nothing")
