"""Tasks of the optional ``llm4ad`` PyPI package as ``llm4ad:pkg/<group>/<name>``.

The package's own dependency list pulls torch, CUDA wheels and GUI toolkits that its evaluators
never use, so it is an opt-in install (``pip install --no-deps llm4ad==1.11 numpy pytz``).
Discovery only looks at files (``importlib.util.find_spec`` plus a directory scan) and never
imports the package; without it, the 26 tasks of version 1.11 are listed as unavailable with
the install hint.  A problem wraps the package's ``Evaluation`` class: its template is the
trainable code, and ``evaluate_program`` runs inside our sandbox (never the package's own
``SecureEvaluator``, which changes the process-wide multiprocessing start method).

Trust: the package's evaluator and the candidate run in two sandboxed processes
(:func:`run_package_checker`, :func:`serve_package_candidate`), joined by
:mod:`trace_bench.sandbox.rpc`: the evaluator, with the package and its data, calls the candidate's
function through a proxy and computes the score from the plain data it answers; the candidate's
process has no evaluator and cannot see the ``llm4ad`` package (its instance and target data are
covered).  The evaluator may not run the candidate's source in its own process (an audit hook in
that process, where no candidate code ever runs, refuses to compile it).  The job accepts one
finite number from the evaluator.  An evaluator that hands the heuristic something other than
plain data (an environment object, a callback) cannot be evaluated this way and fails saying so.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import math
from pathlib import Path
from typing import Any

from trace_bench.tasks.spec import TaskSpec, Unavailable, UnavailableKind

INSTALL_HINT = "install llm4ad (pip install --no-deps llm4ad==1.11 numpy pytz)"
MODULE = "trace_bench.tasks.llm4ad.llm4ad_package"
KNOWN_TASKS: tuple[str, ...] = (
    "optimization/admissible_set", "optimization/bp_1d_construct", "optimization/bp_2d_construct",
    "optimization/cflp_construct", "optimization/cvrp_construct", "optimization/jssp_construct",
    "optimization/knapsack_construct", "optimization/online_bin_packing", "optimization/online_bin_packing_2O",
    "optimization/ovrp_construct", "optimization/qap_construct", "optimization/set_cover_construct",
    "optimization/tsp_construct", "optimization/tsp_gls_2O", "optimization/vrptw_construct",
    "science_discovery/bactgrow", "science_discovery/feynman_srsd", "science_discovery/ode_1d",
    "science_discovery/oscillator1", "science_discovery/oscillator2", "science_discovery/stresstrain",
    "machine_learning/acrobot", "machine_learning/car_mountain", "machine_learning/car_mountain_continue",
    "machine_learning/moon_lander", "machine_learning/pendulum",
)


def package_root() -> Path | None:
    """Directory of the installed ``llm4ad`` package, found without importing it."""
    try:
        spec = importlib.util.find_spec("llm4ad")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def installed_tasks(root: Path) -> list[str]:
    """``group/name`` for every ``task/<group>/<name>/evaluation.py`` under the package."""
    base = root / "task"
    if not base.is_dir():
        return []
    found = []
    for group in sorted(p for p in base.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))):
        for task in sorted(p for p in group.iterdir() if (p / "evaluation.py").is_file()):
            found.append(f"{group.name}/{task.name}")
    return found


def _unavailable() -> Unavailable:
    return Unavailable(UnavailableKind.MISSING_PACKAGE, INSTALL_HINT)


def discover_package() -> list[TaskSpec]:
    root = package_root()
    names = installed_tasks(root) if root is not None else list(KNOWN_TASKS)
    availability = None if root is not None else _unavailable
    return [
        TaskSpec(id=f"llm4ad:pkg/{name}", suite="llm4ad", description=f"llm4ad package task {name}",
                 module=MODULE, parameter_kinds=("code",), scoring="the llm4ad evaluator's score (higher is better)",
                 needs=("llm4ad", "numpy"), availability=availability, default_eval_kwargs={"task": name},
                 tags=("llm4ad-package", "sandbox"))
        for name in names
    ]


def find_evaluation_class(module: Any) -> type:
    """The class in an ``evaluation`` module that has ``evaluate_program`` and a template."""
    for _, obj in inspect.getmembers(module, inspect.isclass):
        if obj.__module__ == module.__name__ and hasattr(obj, "evaluate_program"):
            return obj
    raise ImportError(f"{module.__name__} defines no class with evaluate_program()")


def _entry_and_signature(template: str) -> tuple[str, str]:
    for node in ast.parse(template).body:
        if isinstance(node, ast.FunctionDef):
            returns = f" -> {ast.unparse(node.returns)}" if node.returns is not None else ""
            return node.name, f"({ast.unparse(node.args)}){returns}"
    raise ValueError("the llm4ad template defines no function")


def serve_package_candidate(payload: dict[str, Any]) -> None:
    """Sandbox target (no evaluator, no llm4ad package here): serve the candidate's function."""
    from trace_bench.sandbox.rpc import serve
    from trace_bench.tasks.llm4ad.evalkit import CANDIDATE_FILENAME, load_candidate

    try:
        function = load_candidate(payload["program"], payload["entry"])
    except Exception as exc:  # noqa: BLE001 - the checker reports it with its type
        serve(payload, None, {"kind": type(exc).__name__, "message": str(exc)[:2000]})
        return
    serve(payload, function, filename=CANDIDATE_FILENAME)


def _refuse_compiling(program: str) -> None:
    """Refuse, in this process, to compile the candidate's source: it runs only in its own sandbox."""
    import sys

    text = program.strip()

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event != "compile" or len(args) < 2 or not isinstance(args[0], (str, bytes)):
            return
        if str(args[1]).endswith(".py"):  # a module being imported (its file may quote the template)
            return
        source = (args[0].decode("utf-8", "replace") if isinstance(args[0], bytes) else args[0]).strip()
        if text and source and (text in source or (source in text and len(source) > 40)):
                raise RuntimeError("the llm4ad evaluator tried to run the candidate's code in its own process; "
                                   "trace-bench runs candidate code only in the candidate's sandbox")

    sys.addaudithook(hook)


def run_package_checker(payload: dict[str, Any]) -> float:
    """Sandbox target (the package and its data, never candidate code): the package's ``evaluate_program``,
    calling the candidate's function through a proxy; returns the score it computes."""
    from trace_bench.tasks.llm4ad.evalkit import InvalidSolution, open_candidate

    proxy = open_candidate(payload)
    module = importlib.import_module(payload["module"])
    evaluation = find_evaluation_class(module)()
    _refuse_compiling(str(payload["program"]))
    result = evaluation.evaluate_program(payload["program"], proxy)
    if isinstance(result, (tuple, list)) and result:
        result = result[0]
    if isinstance(result, dict):
        result = result.get("score")
    if result is None:
        raise InvalidSolution("the llm4ad evaluator returned None (the solution is invalid)")
    try:
        score = float(result)
    except (TypeError, ValueError) as exc:
        raise InvalidSolution(f"the llm4ad evaluator returned {type(result).__name__}, not a number") from exc
    if not math.isfinite(score):
        raise InvalidSolution(f"the llm4ad evaluator returned a non-finite score ({score})")
    return score


def evaluate(payload: dict[str, Any], run: Any) -> dict[str, Any]:
    """Trusted: accept one finite number from the sandboxed package evaluator."""
    from trace_bench.tasks.llm4ad.evalkit import InvalidSolution

    score = run(f"{MODULE}:run_package_checker", payload,
                candidate=(f"{MODULE}:serve_package_candidate", {"program": payload["program"],
                                                                 "entry": payload["entry"]}))
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
        raise InvalidSolution(f"the llm4ad evaluator's answer is not a finite number: {str(score)[:80]}")
    return {"score": float(score), "summary": f"llm4ad evaluator score {float(score):.6g} (higher is better)."}


def build_trace_problem(task: str = "", **eval_kwargs: Any) -> dict[str, Any]:
    """Problem for one package task, e.g. ``task="optimization/tsp_construct"``."""
    from trace_bench.tasks.llm4ad.problem import CodeTask, build_problem

    group, _, name = task.partition("/")
    if not group or not name:
        raise ValueError(f"llm4ad package task must look like '<group>/<name>', got {task!r}")
    if package_root() is None:
        raise ImportError(f"llm4ad:pkg/{task} needs the llm4ad package: {INSTALL_HINT}")
    module_name = f"llm4ad.task.{group}.{name}.evaluation"
    module = importlib.import_module(module_name)
    evaluation = find_evaluation_class(module)()
    template = str(getattr(evaluation, "template_program", None) or getattr(module, "template_program", ""))
    description = str(getattr(evaluation, "task_description", None) or getattr(module, "task_description", "")
                      or f"llm4ad task {task}")
    entry, signature = _entry_and_signature(template)
    spec = CodeTask(name=f"pkg/{task}", entry=entry, signature=signature, description=description,
                    constraints="Keep the function's name and arguments.", template=template, stub_candidates=(),
                    evaluator=f"{MODULE}:evaluate", scoring="the llm4ad evaluator's score", packages=("llm4ad",),
                    candidate_hides=("llm4ad",),
                    defaults={"n_instances": 1, "module": module_name, "entry": entry, "timeout_seconds": 60.0})
    problem = build_problem(spec, eval_kwargs)
    problem["metadata"]["source"] = "llm4ad package"
    return problem
