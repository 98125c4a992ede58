"""What a task folder's evaluator needs installed, found before any job runs.

Two readings, neither imports anything:

- :func:`missing_imports`: the modules the evaluator's Python files import at their top level
  (outside ``try`` blocks and functions), the folder's own modules left out, that this interpreter
  (the sandbox's: the same installation) cannot find.  A task with one is unavailable, its reason
  naming the package and the install command; ``validate --strict`` then also imports the evaluator
  in the sandbox (:meth:`~.guide.DiscoveryGuide.load_fault`), which catches the rest.
- :func:`requirement_problems`: ``requirements.txt`` (the folder's and its evaluator directory's):
  each line's distribution, not installed (FAIL) or installed at a version the line excludes (WARN).

Three modules are never reported: ``openevolve.evaluation_result`` and
``skydiscover.evaluation.evaluation_result`` (a dataclass each) and ShinkaEvolve's ``shinka.core``
(for ``run_shinka_eval``), which the sandbox provides when the library is absent (:mod:`.peer_results`).
"""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
from pathlib import Path

from trace_bench.tasks.discovery.peer_results import STAND_INS

#: import name -> the distribution to install, where they differ
DISTRIBUTIONS = {
    "yaml": "pyyaml", "sklearn": "scikit-learn", "Stemmer": "PyStemmer", "cv2": "opencv-python", "PIL": "pillow",
    "shinka": "shinka-evolve", "bs4": "beautifulsoup4", "dotenv": "python-dotenv", "Levenshtein": "python-Levenshtein",
    "google.genai": "google-genai", "attr": "attrs", "dateutil": "python-dateutil", "skimage": "scikit-image",
}
_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._\-]*)(\[[^\]]*\])?\s*(.*)$")


def _top_level_imports(source: str) -> list[str]:
    """Dotted module names a file imports unconditionally at import time."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return names


def _local(folder: Path, workdir: Path) -> set[str]:
    names = set()
    for directory in {folder, workdir}:
        for item in directory.iterdir() if directory.is_dir() else []:
            names.add(item.stem if item.suffix == ".py" else item.name)
    return names


def _found(module: str) -> bool:
    top = module.split(".")[0]
    if top in sys.stdlib_module_names or top in sys.builtin_module_names:
        return True
    try:
        return importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
        return False


def install_hint(module: str) -> str:
    top = module.split(".")[0]
    return f"pip install {DISTRIBUTIONS.get(module, DISTRIBUTIONS.get(top, top))}"


def missing_imports(folder: Path, evaluator: str, workdir: str = "") -> list[str]:
    """``"<module> (pip install <dist>)"`` for each module the evaluator's files import at their
    top level that is not installed (the evaluator and the folder's modules it imports)."""
    base = folder / workdir if workdir else folder
    local = _local(folder, base)
    pending, seen, missing = [folder / evaluator], set(), []  # type: list[Path], set[Path], list[str]
    while pending:
        path = pending.pop()
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        for module in _top_level_imports(path.read_text(encoding="utf-8", errors="replace")):
            top = module.split(".")[0]
            if top in local:
                pending += [base / f"{top}.py", folder / f"{top}.py"]
                continue
            if module in STAND_INS or any(module.startswith(name + ".") for name in STAND_INS):
                continue
            if not _found(module) and top not in {m.split(" ")[0] for m in missing}:
                missing.append(f"{top} ({install_hint(module)})")
    return missing


def requirement_files(folder: Path, workdir: str = "") -> list[Path]:
    candidates = [folder / "requirements.txt"] + ([folder / workdir / "requirements.txt"] if workdir else [])
    return [path for path in candidates if path.is_file()]


def requirement_problems(folder: Path, workdir: str = "") -> list[tuple[str, str]]:
    """``(verdict, detail)`` per requirement line this environment does not meet: FAIL when the
    distribution is not installed, WARN when its version is outside the line's specifier."""
    from importlib import metadata

    problems: list[tuple[str, str]] = []
    for path in requirement_files(folder, workdir):
        for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
            line = raw.split("#", 1)[0].strip()
            match = _REQUIREMENT.match(line) if line and not line.startswith("-") else None
            if match is None:
                continue
            name, spec = match.group(1), match.group(3).split(";", 1)[0].strip()
            try:
                version = metadata.version(name)
            except metadata.PackageNotFoundError:
                problems.append(("FAIL", f"{path.name} needs {line}, which is not installed: pip install -r {path}"))
                continue
            if spec and not _satisfies(version, spec):
                problems.append(("WARN", f"{path.name} asks for {line}; {name} {version} is installed"))
    return problems


def _satisfies(version: str, spec: str) -> bool:
    try:
        from packaging.specifiers import InvalidSpecifier, SpecifierSet
        from packaging.version import InvalidVersion, Version
    except ImportError:
        return True
    try:
        return Version(version) in SpecifierSet(spec)
    except (InvalidSpecifier, InvalidVersion):
        return True


_LLM_CLIENTS = ("openai", "litellm", "dspy", "langchain_openai", "textgrad", "guidance")
_LLM_VARIABLES = re.compile(r"OPENAI_API_BASE|OPENAI_BASE_URL|OPENAI_API_KEY")


def evaluator_modules(folder: Path, evaluator: str, workdir: str = "") -> list[Path]:
    """The evaluator's file and the folder's modules it imports (anywhere in them), transitively:
    what runs when it evaluates (a folder's other scripts, a baseline agent, a plotter, do not)."""
    base = folder / workdir if workdir else folder
    local = _local(folder, base)
    pending, found = [folder / evaluator], []  # type: list[Path], list[Path]
    while pending:
        path = pending.pop()
        if path in found or not path.is_file():
            continue
        found.append(path)
        for name in _imports_anywhere(path):
            top = name.split(".")[0]
            if top in local:
                pending += [base / f"{top}.py", folder / f"{top}.py"]
    return found


def imports_of(folder: Path, evaluator: str, workdir: str = "") -> set[str]:
    """Top-level names of every module the evaluator's modules import, anywhere in them."""
    return {name.split(".")[0] for path in evaluator_modules(folder, evaluator, workdir)
            for name in _imports_anywhere(path)}


def calls_an_llm(folder: Path, evaluator: str, workdir: str = "") -> bool:
    """Whether the evaluator's modules import an OpenAI-compatible LLM client or read the variables
    such clients read (``OPENAI_API_BASE``, ...)."""
    for path in evaluator_modules(folder, evaluator, workdir):
        try:
            source = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if _LLM_VARIABLES.search(source):
            return True
    return bool(imports_of(folder, evaluator, workdir) & set(_LLM_CLIENTS))


def _imports_anywhere(path: Path) -> list[str]:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return []
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return names


SHINKA_LAUNCHER = "run_evo.py"  # ShinkaEvolve's launcher: read for two settings, never run


def lean_imports(folder: Path) -> tuple[str, ...]:
    """The peers' result modules (:data:`STAND_INS`) the folder's Python files import, where they
    import nothing else of that library (then the sandbox loads them without the library's
    ``__init__``, see :mod:`.peer_results`); ShinkaEvolve's launcher is never run, so its imports do
    not count."""
    imported = [name for path in folder.rglob("*.py") if "private" not in path.relative_to(folder).parts[:1]
                and path.name != SHINKA_LAUNCHER for name in _imports_anywhere(path)]
    lean = []
    for module in STAND_INS:
        library = module.split(".")[0]
        of_library = {name for name in imported if name == library or name.startswith(library + ".")}
        if module in of_library and of_library <= {module}:
            lean.append(module)
    return tuple(lean)


def llm_configs(folder: Path, workdir: str = "") -> tuple[str, ...]:
    """The folder's YAML files (its top and its evaluator's directory) with an ``llm`` section: where an
    evaluator that reads its own config finds its endpoint (pointed at the run's gateway)."""
    import yaml

    found = []
    for directory in dict.fromkeys([folder, folder / workdir]):
        for path in sorted([*directory.glob("*.yaml"), *directory.glob("*.yml")]):
            try:
                data = yaml.safe_load(path.read_text(encoding="utf-8"))
            except (OSError, yaml.YAMLError):
                continue
            if isinstance(data, dict) and "llm" in data:
                found.append(path.relative_to(folder).as_posix())
    return tuple(found)


_DOWNLOADS = ("load_dataset", "hf_hub_download", "snapshot_download", "urlretrieve", "download")


def network_reads(folder: Path, evaluator: str, workdir: str = "") -> list[str]:
    """Calls in the evaluator's modules that fetch data over the network (``load_dataset``, ...):
    the sandbox has no network, so such an evaluator fails there unless its data is in the folder."""
    found: set[str] = set()
    for path in evaluator_modules(folder, evaluator, workdir):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        except (OSError, SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", getattr(node.func, "attr", ""))
                if name in _DOWNLOADS:
                    found.add(name)
    return sorted(found)
