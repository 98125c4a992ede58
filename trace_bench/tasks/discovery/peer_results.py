"""The peers' ``EvaluationResult`` modules, made cheap to import in the sandbox (sandbox side).

OpenEvolve's and SkyDiscover's evaluators return ``EvaluationResult(metrics, artifacts)``, a plain
dataclass, imported as ``from openevolve.evaluation_result import EvaluationResult`` (or
``skydiscover.evaluation.evaluation_result``).  Importing it the usual way runs the library's
``__init__``, which imports the whole library and its LLM clients: about two seconds, paid again in
every evaluation, since each runs in a fresh process.  :func:`install` loads the module file itself
under bare parent packages instead (only when the evaluator imports nothing else of the library, a
fact the job reads from its source); where the library is not installed, an equivalent dataclass of
ours stands in, so such evaluators run unchanged either way.

ShinkaEvolve's ``shinka.core`` is treated alike for evaluators that import only ``run_shinka_eval``
from it: the library where it is installed, else trace-bench's implementation of the same contract
(:mod:`.shinka_eval`).
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
import types
from dataclasses import dataclass, field
from typing import Any

from trace_bench.tasks.discovery import shinka_eval

STAND_INS = ("openevolve.evaluation_result", "skydiscover.evaluation.evaluation_result", "shinka.core")


@dataclass
class EvaluationResult:
    """Metrics (what scores the program) and artifacts (text for the feedback), as the peers define it."""

    metrics: dict[str, Any]
    artifacts: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, metrics: dict[str, Any]) -> EvaluationResult:
        return cls(metrics=metrics)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.metrics)

    def has_artifacts(self) -> bool:
        return bool(self.artifacts)

    def get_artifact_keys(self) -> list[str]:
        return list(self.artifacts)


def _bare_package(name: str, location: str) -> types.ModuleType:
    module = types.ModuleType(name)
    spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
    spec.submodule_search_locations = [location]
    module.__spec__, module.__path__, module.__package__ = spec, [location], name
    sys.modules[name] = module
    return module


def _stand_in(name: str) -> None:
    parts = name.split(".")
    for depth in range(1, len(parts)):
        parent = ".".join(parts[:depth])
        sys.modules.setdefault(parent, types.ModuleType(parent))
    module = types.ModuleType(name)
    if name == "shinka.core":
        module.run_shinka_eval = shinka_eval.run_shinka_eval  # type: ignore[attr-defined]
    else:
        module.EvaluationResult = EvaluationResult  # type: ignore[attr-defined]
    sys.modules[name] = module
    setattr(sys.modules[".".join(parts[:-1])], parts[-1], module)


def install(names: list[str]) -> None:
    """Make each module of ``names`` (among :data:`STAND_INS`) importable without its library's
    ``__init__`` (see the module doc)."""
    for name in names:
        if name not in STAND_INS or name in sys.modules:
            continue
        parts = name.split(".")
        if parts[0] in sys.modules:
            continue  # the library is loaded already: the usual import is cheap
        try:
            spec = importlib.util.find_spec(parts[0])  # finds the top-level package, runs nothing
        except (ImportError, ValueError):
            spec = None
        if spec is None or not spec.submodule_search_locations:
            _stand_in(name)
            continue
        location = list(spec.submodule_search_locations)[0]
        for depth in range(1, len(parts)):
            _bare_package(".".join(parts[:depth]), location)
            location = f"{location}/{parts[depth]}"
        try:
            importlib.import_module(name)
        except ImportError:
            for depth in range(1, len(parts) + 1):
                sys.modules.pop(".".join(parts[:depth]), None)
            _stand_in(name)
