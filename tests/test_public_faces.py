"""The public faces a plugin's author imports from: ``trace_bench.trainers`` and ``trace_bench.tasks``
(and the contract checks, ``trace_bench.testing``).  Each exports with ``__all__`` what an author
needs, every name resolves, importing a face stays cheap, and the guides for authors
(docs/adding-*.md) import from these faces only."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FACES = ("trace_bench.trainers", "trace_bench.tasks", "trace_bench.testing")
#: what an author needs from each face, at least (the issue's list and the guides' names)
NEEDED = {"trace_bench.trainers": {"Trainer", "TrainerParams", "TrainerContext", "Unavailable"},
          "trace_bench.tasks": {"TaskSpec", "Problem", "Guide", "get_llm", "Unavailable", "requires"}}
FENCE = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


@pytest.mark.parametrize("face", FACES)
def test_every_exported_name_resolves(face: str) -> None:
    module = importlib.import_module(face)
    assert module.__all__ == sorted(module.__all__) and len(set(module.__all__)) == len(module.__all__)
    assert NEEDED.get(face, set()) <= set(module.__all__)
    for name in module.__all__:
        assert getattr(module, name) is not None, f"{face}.{name}"
    with pytest.raises(AttributeError):
        module.NoSuchName  # noqa: B018 - the lookup is the test


def test_a_face_imports_nothing_heavy() -> None:
    """Importing a face (as every suite and trainer module does, through its package) loads none of the
    names it exports: the registry lists tasks and trainers without pydantic or opto."""
    code = ("import sys, trace_bench.tasks, trace_bench.trainers; "
            "print(sorted(m for m in ('pydantic', 'opto', 'trace_bench.trainers.base', 'trace_bench.tasks.problem') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == "[]"


def _imports_in_docs() -> list[tuple[str, str]]:
    found = []
    for page in sorted((REPO / "docs").glob("adding-*.md")):
        for block in FENCE.findall(page.read_text(encoding="utf-8")):
            for node in ast.walk(ast.parse(block)):
                if isinstance(node, ast.ImportFrom) and node.module:
                    found.append((page.name, node.module))
                elif isinstance(node, ast.Import):
                    found += [(page.name, alias.name) for alias in node.names]
    return found


def test_the_guides_for_authors_import_only_from_the_faces() -> None:
    imports = _imports_in_docs()
    assert any(module == "trace_bench.trainers" for _, module in imports)  # the walk finds them
    assert any(module == "trace_bench.tasks" for _, module in imports)
    outside = [f"{page}: {module}" for page, module in imports
               if module.split(".")[0] == "trace_bench" and module not in FACES]
    assert outside == []
