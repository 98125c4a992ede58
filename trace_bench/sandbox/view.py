"""Which of trace-bench's own files a sandbox sees: its own modules and what its targets import.

Why not the whole package: ``trace_bench`` holds every task's trusted half, the generators of
hidden data (the equation tasks' true laws and noise), the loaders of hidden tests and the
references.  A candidate that could import them could regenerate its own target (it did: MSE 0
on ``llm4ad:oscillator1``).  So a sandbox sees :data:`CORE` (the sandbox package, which runs
every call, and the modules it imports) plus, for each target module it serves, that module's
import closure inside ``trace_bench``: every ``trace_bench`` module the file imports (anywhere
in it, under ``TYPE_CHECKING`` too), recursively, with the ``__init__.py`` of each package on the
way.  Nothing else of the package exists in the sandbox, whether ``trace_bench`` is an editable
checkout or installed inside a site-packages directory the sandbox sees (then the package's
directory is covered by an empty tmpfs and these files are bound on top of it).

A target that must not see a module of ``trace_bench`` therefore must not import it; the import
closure is computed from the source (no import runs), in the job process, when the sandbox starts,
with what each file imports kept beside the package's byte code by the file's stamp
(:mod:`trace_bench.sandbox.import_index`).
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import os
from pathlib import Path

from trace_bench.sandbox.import_index import Entry, ImportIndex, fill, index_path

PACKAGE = "trace_bench"
# The sandbox's own code: the zygote, supervisor and child run in every sandbox.
CORE_MODULES = ("trace_bench.sandbox", "trace_bench._util.processes")


@functools.cache
def package_root() -> Path:
    return Path(__file__).resolve().parent.parent


def module_file(name: str) -> Path | None:
    """The source file of ``trace_bench`` module ``name`` (its ``__init__.py`` for a package), or None."""
    parts = name.split(".")
    if parts[0] != PACKAGE:
        return None
    base = package_root().joinpath(*parts[1:])
    for candidate in (base / "__init__.py", base.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def _module_name(path: Path) -> str:
    relative = path.relative_to(package_root().parent).with_suffix("")
    parts = list(relative.parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


#: the fields that hold statements (an import is a statement, and no expression holds one): the
#: bodies of modules, classes, functions, ``if``/``for``/``while``/``with``/``try``, their ``else``
#: and ``finally``, ``except`` handlers and ``match`` cases
_STATEMENT_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


def _import_nodes(tree: ast.AST, *, in_functions: bool) -> list[ast.Import | ast.ImportFrom]:
    """Import statements of ``tree``; those inside function bodies only if ``in_functions``.

    Walks statements only (every import there is, at a tenth of the cost of visiting every
    expression node: this ran in every job whose task has a trainable code node)."""
    found: list[ast.Import | ast.ImportFrom] = []
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not in_functions:
            continue
        for name in _STATEMENT_FIELDS:
            children = getattr(node, name, None)
            if isinstance(children, list):
                pending.extend(children)
    return found


def _resolved(node: ast.Import | ast.ImportFrom, package: str) -> list[str]:
    """``trace_bench`` modules (and ``module.name`` candidates) one import statement names."""
    if isinstance(node, ast.Import):
        found = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join([*anchor, base] if base else anchor)
        found = [base, *(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")]
    return [name for name in found if name == PACKAGE or name.startswith(PACKAGE + ".")]


def _parse(path: Path) -> Entry | None:
    """What ``path``'s import statements outside and inside function bodies name (see
    :data:`~trace_bench.sandbox.import_index.Entry`); None where it cannot be read or parsed."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    except (OSError, SyntaxError, ValueError):
        return None
    own = _module_name(path)
    package = own if path.name == "__init__.py" else own.rpartition(".")[0]
    outside = {name for node in _import_nodes(tree, in_functions=False) for name in _resolved(node, package)}
    everywhere = {name for node in _import_nodes(tree, in_functions=True) for name in _resolved(node, package)}
    return sorted(outside), sorted(everywhere - outside)


@functools.cache
def import_index() -> ImportIndex:
    """This package's :class:`~trace_bench.sandbox.import_index.ImportIndex` (parsing with :func:`_parse`)."""
    return ImportIndex(index_path(package_root()), _parse)


def _imported(path: Path, *, in_functions: bool) -> set[str]:
    """``trace_bench`` modules (and ``module.name`` candidates) that ``path`` imports.

    A package's ``__init__.py`` is read for what runs when the package is imported (its top level);
    any other module for every import it holds, since its functions may run in a call."""
    entry = import_index().imports(path)
    if entry is None:
        return set()
    outside, inside = entry
    return {*outside, *inside} if in_functions else set(outside)


def _with_parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


@functools.cache
def closure(modules: frozenset[str]) -> tuple[str, ...]:
    """Source files of ``modules`` and of every ``trace_bench`` module they import, recursively, with
    the ``__init__.py`` of each package on the way; every module of a package named in ``modules``."""
    files: set[Path] = set()
    pending = [name for module in modules for name in _with_parents(module)]
    seen: set[str] = set()
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        path = module_file(name)
        if path is None:
            continue
        files.add(path)
        if path.name == "__init__.py" and name in modules:  # a whole package asked for: all its modules
            pending.extend(f"{name}.{child.stem}" for child in path.parent.glob("*.py"))
        for imported in _imported(path, in_functions=path.name != "__init__.py" or name in modules):
            pending.extend(_with_parents(imported))
    import_index().save()
    return tuple(sorted(str(path) for path in files))


def visible_files(modules: frozenset[str]) -> list[str]:
    """The files of ``trace_bench`` a sandbox serving ``modules`` sees: :data:`CORE_MODULES` and the
    targets' closures, with their byte-code caches where those exist (nothing is compiled here)."""
    sources = closure(frozenset({*CORE_MODULES, *modules}))
    cached = []
    for source in sources:
        try:
            compiled = importlib.util.cache_from_source(source)
        except (NotImplementedError, ValueError):
            continue
        if os.path.isfile(compiled):
            cached.append(compiled)
    return [*sources, *cached]


def main() -> int:
    """``python -m trace_bench.sandbox.view``: index the imports of the whole installed package
    (``make install`` runs it after byte-compiling the package)."""
    count = fill(import_index(), sorted(package_root().rglob("*.py")))
    print(f"indexed the imports of {count} files in {index_path(package_root())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
