"""The sandbox view's import index: the same closure as parsing every file, parsed again when a
file changes, written only where byte code may be."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from trace_bench.sandbox import view
from trace_bench.sandbox.import_index import Entry, ImportIndex, fill, index_path


class CountingParser:
    def __init__(self) -> None:
        self.parsed: list[Path] = []

    def __call__(self, path: Path) -> Entry | None:
        self.parsed.append(path)
        return view._parse(path)


def _closure_with(index: ImportIndex, monkeypatch: pytest.MonkeyPatch, modules: frozenset[str]) -> tuple[str, ...]:
    monkeypatch.setattr(view, "import_index", lambda: index)
    view.closure.cache_clear()
    try:
        return view.closure(modules)
    finally:
        view.closure.cache_clear()


def test_a_filled_index_gives_the_closure_parsing_gives_without_parsing(monkeypatch: pytest.MonkeyPatch,
                                                                       tmp_path: Path) -> None:
    from trace_bench.tasks.code_nodes.execution import TARGET_MODULE

    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    modules = frozenset({*view.CORE_MODULES, TARGET_MODULE})
    first = CountingParser()
    parsed = _closure_with(ImportIndex(tmp_path / "index.json", first), monkeypatch, modules)
    assert len(first.parsed) > 40 and (tmp_path / "index.json").is_file()
    again = CountingParser()
    indexed = _closure_with(ImportIndex(tmp_path / "index.json", again), monkeypatch, modules)
    assert indexed == parsed and again.parsed == []
    assert str(view.module_file(TARGET_MODULE)) in indexed
    assert str(view.package_root() / "tasks" / "discovery" / "best_known.py") not in indexed


def test_a_changed_file_is_parsed_again_and_the_others_are_not(monkeypatch: pytest.MonkeyPatch,
                                                               tmp_path: Path) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "a.py").write_text("import trace_bench.sandbox.codec\n", encoding="utf-8")
    (package / "b.py").write_text("def f():\n    import trace_bench.sandbox.frames\n", encoding="utf-8")
    monkeypatch.setattr(view, "_module_name", lambda path: f"trace_bench.pkg.{path.stem}")
    parser = CountingParser()
    files = sorted(package.glob("*.py"))
    assert fill(ImportIndex(tmp_path / "index.json", parser), files) == 2
    parser.parsed.clear()
    index = ImportIndex(tmp_path / "index.json", parser)
    assert index.imports(package / "b.py") == ([], ["trace_bench.sandbox.frames"])
    (package / "a.py").write_text("import trace_bench.sandbox.rpc  # another module now\n", encoding="utf-8")
    assert index.imports(package / "a.py") == (["trace_bench.sandbox.rpc"], [])
    assert parser.parsed == [package / "a.py"]
    index.save()
    stored = json.loads((tmp_path / "index.json").read_text(encoding="utf-8"))["files"]
    assert stored[str(package / "a.py")][2] == ["trace_bench.sandbox.rpc"]
    assert stat_mode(tmp_path / "index.json") == 0o644


def stat_mode(path: Path) -> int:
    return os.stat(path).st_mode & 0o777


def test_nothing_is_written_where_byte_code_is_not(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from trace_bench.tasks.code_nodes.execution import TARGET_MODULE

    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    _closure_with(ImportIndex(tmp_path / "index.json", view._parse), monkeypatch, frozenset({TARGET_MODULE}))
    assert not (tmp_path / "index.json").exists()
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    read_only = tmp_path / "ro"
    read_only.mkdir(mode=0o555)
    if os.access(read_only, os.W_OK):  # root writes anywhere: a directory that cannot exist instead
        read_only = tmp_path / "a-file"
        read_only.write_text("", encoding="utf-8")
    index = ImportIndex(read_only / "index.json", view._parse)
    assert _closure_with(index, monkeypatch, frozenset({TARGET_MODULE}))  # no error: parsed, not kept


def test_a_damaged_or_foreign_index_is_ignored(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from trace_bench.tasks.code_nodes.execution import TARGET_MODULE

    target = view.module_file(TARGET_MODULE)
    assert target is not None
    modules = frozenset({TARGET_MODULE})
    expected = _closure_with(ImportIndex(tmp_path / "none.json", view._parse), monkeypatch, modules)
    stat = os.stat(target)
    hidden = "trace_bench.tasks.discovery.best_known"
    for text in ("{not json", json.dumps({"format": 99, "files": {}}),
                 # an entry whose stamp is not the file's: parsed again, its names not used
                 json.dumps({"format": 1, "files": {str(target): [stat.st_mtime_ns + 1, stat.st_size, [hidden], []]}}),
                 # the file's stamp, but no list of names
                 json.dumps({"format": 1, "files": {str(target): [stat.st_mtime_ns, stat.st_size, 7, None]}})):
        (tmp_path / "index.json").write_text(text, encoding="utf-8")
        assert _closure_with(ImportIndex(tmp_path / "index.json", view._parse), monkeypatch, modules) == expected
    assert str(view.module_file(hidden)) not in expected


def test_the_package_index_lives_beside_its_byte_code() -> None:
    path = index_path(view.package_root())
    assert path.parent == view.package_root() / "__pycache__"
    assert sys.implementation.cache_tag in path.name
