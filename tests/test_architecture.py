"""The layers hold: every import of the package follows docs/architecture.md (DESIGN §2's arrows),
and no module imports itself through a cycle.

Imports are read from the source (AST), so imports inside functions and under ``TYPE_CHECKING``
count as much as module-level ones: a cycle or a backwards import hidden in a function is still a
design cycle.  A module named by a string is an import too: ``import_module("trace_bench.x")``
and any string constant that is exactly a module path (``"trace_bench.x"`` or
``"trace_bench.x:attr"``, as in the executor's job body and the template's preloads).

``runner/job/`` (what runs inside a job process) is a layer of its own, ``runner.job``: the driver
(the other modules of ``runner/``) imports no trainer, task or ``opto`` code.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import REPO

PACKAGE = REPO / "trace_bench"
DOC = REPO / "docs" / "architecture.md"
HEAVY = ("opto", "litellm", "gradio", "ray", "matplotlib")
LIGHT_LAYERS = ("config", "registry", "store", "analysis")


def _modules() -> dict[str, tuple[Path, bool]]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def _imports(modules: dict[str, tuple[Path, bool]], strings: bool = True) -> dict[str, list[tuple[str, int, bool]]]:
    """module -> [(imported name, line, at module level)] for every import in its source (and,
    with ``strings``, every module it names by a string)."""
    out: dict[str, list[tuple[str, int, bool]]] = {}
    for name, (path, is_package) in modules.items():
        package = name if is_package else name.rpartition(".")[0]
        found: list[tuple[str, int, bool]] = []
        _visit(ast.parse(path.read_text(encoding="utf-8")), True, package, modules, found, strings)
        out[name] = found
    return out


MODULE_STRING = re.compile(r"^trace_bench(\.\w+)+(:\w+)?$")


def _named(child: ast.AST, modules: dict[str, tuple[Path, bool]]) -> str | None:
    """The module a string constant names (``"trace_bench.a.b"`` or ``"trace_bench.a.b:attr"``)."""
    if isinstance(child, ast.Constant) and isinstance(child.value, str) and MODULE_STRING.match(child.value):
        name = child.value.partition(":")[0]
        if _owner(name, modules) not in (None, "trace_bench"):
            return name
    return None


def _visit(node: ast.AST, top: bool, package: str, modules: dict[str, tuple[Path, bool]],
           found: list[tuple[str, int, bool]], strings: bool = True) -> None:
    for child in ast.iter_child_nodes(node):
        named = _named(child, modules) if strings else None
        if named is not None:  # a string import: import_module("..."), a body or preload by name
            found.append((named, child.lineno, False))
        inner = top and not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.dump(child.test):
            inner = False
        if isinstance(child, ast.Import):
            found.extend((alias.name, child.lineno, top) for alias in child.names)
        elif isinstance(child, ast.ImportFrom):
            base = child.module or ""
            if child.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - child.level + 1] + ([base] if base else []))
            found.extend((f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base, child.lineno, top)
                         for alias in child.names)
        _visit(child, inner, package, modules, found, strings)


def _owner(name: str, modules: dict[str, tuple[Path, bool]]) -> str | None:
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _layer(module: str) -> str:
    parts = module.split(".")
    if parts[1:3] == ["runner", "job"]:
        return "runner.job"  # the in-job package: a layer of its own
    return parts[1] if len(parts) > 1 else "trace_bench"


def _allowed() -> dict[str, set[str]]:
    text = DOC.read_text(encoding="utf-8")
    table = text.split("<!-- layers:begin -->")[1].split("<!-- layers:end -->")[0]
    allowed: dict[str, set[str]] = {}
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`"):
            # layer names outside the parentheses; what is inside says why
            beyond = set(re.findall(r"`([^`]+)`", re.sub(r"\([^)]*\)", "", cells[2])))
            assert not beyond or "(" in cells[2], f"{cells[0]}: an arrow beyond DESIGN §2 says why"
            allowed[cells[0].strip("`")] = set(re.findall(r"`([^`]+)`", re.sub(r"\([^)]*\)", "", cells[1]))) | beyond
    return allowed


def test_the_layer_table_is_complete_and_points_one_way() -> None:
    allowed = _allowed()
    layers = {_layer(m) for m in _modules()}
    assert layers == set(allowed), f"layers missing from docs/architecture.md: {sorted(layers - set(allowed))}; " \
                                   f"listed but absent: {sorted(set(allowed) - layers)}"
    for layer, targets in allowed.items():
        assert targets <= set(allowed), f"{layer} may import unknown layers {sorted(targets - set(allowed))}"
    state: dict[str, int] = {}

    def visit(layer: str, path: tuple[str, ...]) -> None:
        assert state.get(layer) != 1, f"the layer table has a cycle: {' -> '.join((*path, layer))}"
        if state.get(layer) == 2:
            return
        state[layer] = 1
        for target in allowed[layer]:
            visit(target, (*path, layer))
        state[layer] = 2

    for layer in allowed:
        visit(layer, ())


def test_every_import_follows_the_layer_table() -> None:
    modules, allowed = _modules(), _allowed()
    wrong = []
    for module, found in _imports(modules).items():
        for name, line, _ in found:
            target = _owner(name, modules)
            if target is None or target == "trace_bench":
                continue
            source_layer, target_layer = _layer(module), _layer(target)
            if target_layer == "_util":  # leaf helpers any layer may use
                continue
            if source_layer != target_layer and target_layer not in allowed.get(source_layer, set()):
                wrong.append(f"{module}:{line} imports {target} ({source_layer} -> {target_layer})")
    assert not wrong, "imports against docs/architecture.md:\n" + "\n".join(wrong)


def test_no_import_cycle_between_modules() -> None:
    modules = _modules()
    graph: dict[str, set[str]] = defaultdict(set)
    for module, found in _imports(modules).items():
        for name, _, _ in found:
            target = _owner(name, modules)
            if target is not None and target != module and target != "trace_bench":
                graph[module].add(target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def connect(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph[node]:
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in list(modules):
        if node not in index:
            connect(node)
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_light_layers_import_no_heavy_library_at_module_level() -> None:
    modules = _modules()
    heavy = []
    for module, found in _imports(modules).items():
        if _layer(module) not in LIGHT_LAYERS:
            continue
        heavy += [f"{module}:{line} imports {name}" for name, line, top in found
                  if top and name.split(".")[0] in HEAVY]
    assert not heavy, "\n".join(heavy)


#: what the store may import of the config: the typed blocks a job's specification embeds
CONFIG_MODELS = ("trace_bench.config.models", "trace_bench.config.identity", "trace_bench.config.model_names")


def test_the_store_imports_only_the_config_models() -> None:
    """The store's one arrow beyond DESIGN §2: its records embed the config's frozen ``llm`` and
    ``budget`` blocks and the LLM identity (one typed specification from the YAML file to the job
    process); it never reaches the loader, the messages or anything else of ``config``, and ``config``
    imports no store (the layer table has no arrow back)."""
    modules = _modules()
    found = [f"{module}:{line} imports {name}" for module, imports in _imports(modules).items()
             if _layer(module) == "store" for name, line, _ in imports
             if _layer(_owner(name, modules) or "trace_bench") == "config" and _owner(name, modules) not in CONFIG_MODELS]
    assert found == [], "\n".join(found)
    assert _allowed()["config"] == set()


DRIVER_FORBIDDEN = ("opto", "trace_bench.trainers", "trace_bench.runner.job")
#: what the driver may import of the tasks package: the suites' static metadata (a task's record, the
#: Suite protocol the registry types its suites with)
TASK_METADATA = ("trace_bench.tasks", "trace_bench.tasks.spec", "trace_bench.tasks.suite")


def test_the_driver_imports_no_trainer_task_or_opto_code() -> None:
    """DESIGN §2: the driver side of ``runner`` imports no trainer, task or opto code (it names the
    in-job package by module path, for the job process to import)."""
    modules = _modules()
    driver = [m for m in modules if m.startswith("trace_bench.runner") and _layer(m) == "runner"]
    direct = [f"{module}:{line} imports {name}" for module, found in _imports(modules, strings=False).items()
              if module in driver for name, line, _ in found
              if name.startswith(DRIVER_FORBIDDEN) or name.split(".")[0] == "opto"
              or (name.startswith("trace_bench.tasks") and name not in TASK_METADATA)]
    assert not direct, "\n".join(direct)
    code = ("import importlib, json, sys\n"
            f"for name in {driver!r}:\n    importlib.import_module(name)\n"
            "print(json.dumps(sorted(sys.modules)))")
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                       cwd=REPO).stdout)
    assert [m for m in loaded if m.startswith(DRIVER_FORBIDDEN) or m.split(".")[0] == "opto"] == []
    assert [m for m in loaded if m.startswith("trace_bench.tasks") and m not in TASK_METADATA] == []


def test_no_core_package_names_a_legacy_module() -> None:
    """Compatibility in one place: the old names on core packages resolve through one helper and
    one table (trace_bench/legacy/names.py); no layer's ``__init__`` names ``legacy``."""
    naming = [str(path.relative_to(REPO)) for path in PACKAGE.glob("*/__init__.py")
              if path.parent.name != "legacy" and "legacy" in _code_of(path)]
    assert naming == []


def _code_of(path: Path) -> str:
    """The source without docstrings and comments: what the module does, not what it says."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            body[0].value.value = ""
    return ast.unparse(tree)


RUN_FILE_NAMES = frozenset({"meta", "jobs", "tb", "artifacts", "config.snapshot.yaml", "manifest.json", "job_meta.json",
                            "results.json", "events.jsonl", "curve.csv", "results.csv", "summary.json",
                            "leaderboard.csv", "env.json", "stdout.log"})
#: places outside store/ that build such a path for a reason of their own
NOT_RUN_FILES = {
    "trace_bench/sandbox/view.py": "the package's own directory, not a run's",
    "trace_bench/tasks/terminal_bench/problem.py": "a task's folder under the artifacts directory the job hands it "
                                                   "(tasks import no store)",
}


def test_nothing_outside_the_store_builds_a_run_path() -> None:
    """DESIGN §2: nothing outside ``store`` opens a file of a run directory; the store's classes
    name every file (``RunStore``/``JobStore`` paths and readers).  Caught here: a path built from a
    run file's name (``root / "meta"``) or a walk up from a job's directory (``.parent.parent``)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = str(path.relative_to(REPO))
        if relative.startswith("trace_bench/store/") or relative in NOT_RUN_FILES:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and isinstance(node.right, ast.Constant) \
                    and node.right.value in RUN_FILE_NAMES:
                found.append(f"{relative}:{node.lineno} builds .../{node.right.value}")
            if isinstance(node, ast.Attribute) and node.attr == "parent" and isinstance(node.value, ast.Attribute) \
                    and node.value.attr == "parent":
                found.append(f"{relative}:{node.lineno} walks up with .parent.parent")
    assert not found, "\n".join(found)


#: exceptions of the package outside the one root, and why
OUTSIDE_THE_ROOT = {"BudgetExhausted": "a stop signal: a BaseException, so that a library's `except Exception` "
                                       "cannot swallow it"}


def _exception_classes() -> dict[str, set[str]]:
    """Every class the package defines that is an exception, with the names of its ancestors (read
    from the source: a base named ``x.Name`` is the class ``Name``; builtins by their own names)."""
    import builtins

    bases: dict[str, set[str]] = defaultdict(set)
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases[node.name] |= {ast.unparse(base).rpartition(".")[2] for base in node.bases}

    def ancestors(name: str) -> set[str]:
        seen: set[str] = set()
        todo = list(bases.get(name, ()))
        while todo:
            current = todo.pop()
            if current not in seen:
                seen.add(current)
                todo.extend(bases.get(current, ()))
        return seen

    def builtin_exception(name: str) -> bool:
        value = getattr(builtins, name, None)
        return isinstance(value, type) and issubclass(value, BaseException)

    found = {name: ancestors(name) for name in bases}
    return {name: names for name, names in found.items() if any(builtin_exception(a) for a in names)}


def test_every_exception_derives_from_the_one_root() -> None:
    """One root for the project's errors (optuna's ``OptunaError``): ``except TraceBenchError``
    catches every error trace-bench raises, and the built-in bases each class had stay."""
    import trace_bench
    from trace_bench._util.errors import TraceBenchError

    classes = _exception_classes()
    assert len(classes) >= 45, sorted(classes)  # the walk finds them (about 50 today)
    outside = sorted(name for name, found in classes.items()
                     if name != "TraceBenchError" and "TraceBenchError" not in found and name not in OUTSIDE_THE_ROOT)
    assert outside == [], f"exceptions outside TraceBenchError: {outside}"
    assert trace_bench.TraceBenchError is TraceBenchError and issubclass(TraceBenchError, Exception)


def _spelled(predicate: Callable[[ast.AST], bool]) -> list[str]:
    """The modules of the package with a node that ``predicate`` accepts (once per node)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if predicate(node):
                found.append(str(path.relative_to(REPO)))
    return found


def test_the_roles_and_the_spend_keys_are_declared_once() -> None:
    """One declaration each: the LLM roles (``config/model_names.py``) and the spend's keys (the
    ``Spend`` model: ``"usd"`` is spelled there and nowhere else; everything else derives its
    columns, axes and limits from the model's fields)."""
    roles = _spelled(lambda node: isinstance(node, (ast.Assign, ast.AnnAssign)) and any(
        isinstance(target, ast.Name) and target.id == "ROLES"
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])))
    assert roles == ["trace_bench/config/model_names.py"]
    usd = _spelled(lambda node: isinstance(node, ast.Constant) and node.value == "usd")
    assert usd == ["trace_bench/store/models/spend.py"]


def test_the_cost_axis_choices_are_the_frontiers() -> None:
    """``table --cost-axis`` offers exactly the frontier's cost axes (the budget's counted figures from
    ``Spend``, then evaluations and the wall clock), in their order."""
    from trace_bench.analysis.frontier import COST_COLUMNS
    from trace_bench.cli.main import build_parser, cost_axes

    assert list(cost_axes()) == list(COST_COLUMNS)
    parser = build_parser()
    assert parser.parse_args(["table", "run", "--cost-axis", "evaluations"]).cost_axis == "evaluations"
    with pytest.raises(SystemExit):
        parser.parse_args(["table", "run", "--cost-axis", "dollars"])


def test_the_task_registry_finds_no_hook_by_hasattr() -> None:
    """A suite's hooks are declared (its row of trace_bench/tasks/suites.json, or a plugin's HOOKS) and
    called through the Suite protocol: the registry asks no module what it happens to define."""
    tree = ast.parse((PACKAGE / "registry" / "tasks.py").read_text(encoding="utf-8"))
    probes = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call)
              and isinstance(node.func, ast.Name) and node.func.id == "hasattr"]
    assert probes == []


MAX_FUNCTION_LINES = 80
MAX_MODULE_LINES = 400
#: what is still over a size rule, and why; each entry is a debt to pay, never a place to add to
OVERSIZED: dict[str, str] = {}


def _sizes() -> dict[str, int]:
    """Every module's length in lines, and every function's (``path:name``, from its ``def`` to its
    last line, nested functions included)."""
    sizes = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = str(path.relative_to(REPO))
        text = path.read_text(encoding="utf-8")
        sizes[relative] = len(text.splitlines())
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno is not None:
                key = f"{relative}:{node.name}"
                sizes[key] = max(sizes.get(key, 0), node.end_lineno - node.lineno + 1)
    return sizes


def test_no_function_over_80_lines_and_no_module_over_400() -> None:
    """STYLE: small modules with one responsibility, functions that fit on a screen.  The few still
    over a rule are listed in OVERSIZED with the reason; one that shrank below it leaves the list."""
    sizes = _sizes()
    over = {name for name, size in sizes.items()
            if size > (MAX_FUNCTION_LINES if ":" in name else MAX_MODULE_LINES)}
    assert over - set(OVERSIZED) == set(), "over the size rules:\n" + "\n".join(
        f"{name}: {sizes[name]} lines" for name in sorted(over - set(OVERSIZED)))
    assert set(OVERSIZED) - over == set(), f"no longer oversized, remove from OVERSIZED: {sorted(set(OVERSIZED) - over)}"
