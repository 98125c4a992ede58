"""Provide the ``opto.trainer`` names that original task modules import, on ``opto`` 0.1.3.8.

Task modules written for the original Trace-Bench import ``opto.trainer.guide.Guide`` and
``opto.trainer.objectives.ObjectiveConfig``, which exist only on OpenTrace's experimental
branch.  When the installed ``opto`` lacks them, :func:`install` registers small modules under
those names that point at trace-bench's own implementations.  A newer ``opto`` that has them
is left untouched.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import sys
import types
from typing import Any


def _has(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


class BaseLogger:
    def __init__(self, log_dir: str = "./logs", **kwargs: Any) -> None:
        self.log_dir = log_dir

    def log(self, name: str, data: Any, step: int, **kwargs: Any) -> None:
        pass


class ConsoleLogger(BaseLogger):
    def log(self, name: str, data: Any, step: int, **kwargs: Any) -> None:
        print(f"[Step {step}] {name}: {data}")


class NullLogger(BaseLogger):
    pass


def exact_match_metric(question: Any, answer: Any, info: Any) -> float:
    return float(answer == info)


class DummyLLM:
    """``opto.utils.llm.DummyLLM`` of newer opto: wraps a function returning text."""

    def __init__(self, callable_fn: Any = None) -> None:
        self.callable = callable_fn or (lambda *a, **k: '{"suggestion": {}}')

    def __bool__(self) -> bool:
        return True

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from trace_bench.llm.types import ChatResponse, Usage

        return ChatResponse.from_texts([str(self.callable(*args, **kwargs))], Usage(), "dummy")

    create = __call__


def install() -> None:
    """Register the shim modules (idempotent; no-op where opto already provides them)."""
    import opto

    from trace_bench.tasks.guide import Guide
    from trace_bench.trainers.objectives import ObjectiveConfig

    if not _has("opto.trainer"):
        package = types.ModuleType("opto.trainer")
        package.__path__ = []  # a namespace for the submodules below
        package.__file__ = __file__
        sys.modules["opto.trainer"] = package
        opto.trainer = package
        guide = types.ModuleType("opto.trainer.guide")
        guide.__file__ = __file__
        guide.Guide = Guide  # type: ignore[attr-defined]
        guide.AutoGuide = Guide  # type: ignore[attr-defined]
        guide.exact_match_metric = exact_match_metric  # type: ignore[attr-defined]
        objectives = types.ModuleType("opto.trainer.objectives")
        objectives.__file__ = __file__
        objectives.ObjectiveConfig = ObjectiveConfig  # type: ignore[attr-defined]
        loggers = types.ModuleType("opto.trainer.loggers")
        loggers.__file__ = __file__
        for cls in (BaseLogger, ConsoleLogger, NullLogger):
            setattr(loggers, cls.__name__, cls)
        loggers.DefaultLogger = ConsoleLogger  # type: ignore[attr-defined]
        for module in (guide, objectives, loggers):
            sys.modules[module.__name__] = module
            setattr(package, module.__name__.rsplit(".", 1)[1], module)
    with contextlib.redirect_stdout(io.StringIO()):  # opto prints its LLM backend on import; keep it out of user output
        import opto.utils.llm as llm_module

    if not hasattr(llm_module, "DummyLLM"):
        llm_module.DummyLLM = DummyLLM
