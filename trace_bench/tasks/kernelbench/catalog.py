"""KernelBench problems: four small ones shipped here, plus any local KernelBench checkout.

A problem is one Python file in KernelBench's format: ``class Model(nn.Module)`` with ``forward``,
``get_inputs()`` (the forward arguments) and ``get_init_inputs()`` (the constructor arguments).
Its id is ``level<N>/<file stem>``.  The shipped problems are ``level0/*`` (ours: elementwise add,
ReLU, matmul + bias, softmax).  A checkout of ScalingIntelligence/KernelBench is found through env
``TRACE_BENCH_KERNELBENCH_ROOT`` (the repository root, or its ``KernelBench/`` data directory);
listing only reads file names.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

SHIPPED = Path(__file__).resolve().parent / "problems"
ROOT_ENV = "TRACE_BENCH_KERNELBENCH_ROOT"
_LEVEL = re.compile(r"level(\d+)$")


@dataclass(frozen=True)
class KernelProblem:
    problem_id: str  # level<N>/<stem>
    path: Path

    @property
    def level(self) -> int:
        match = _LEVEL.match(self.problem_id.split("/", 1)[0])
        return int(match.group(1)) if match else 0

    def source(self) -> str:
        return self.path.read_text(encoding="utf-8")

    def summary(self) -> str:
        """The first line of the file's docstring, else a description from its name."""
        text = self.source()
        match = re.search(r'^\s*"""(.+?)(?:"""|$)', text, re.M)
        return match.group(1).strip() if match else self.problem_id.split("/", 1)[1].replace("_", " ")


def _levels(root: Path) -> list[Path]:
    base = root / "KernelBench" if (root / "KernelBench").is_dir() else root
    if not base.is_dir():
        return []
    return sorted((p for p in base.iterdir() if p.is_dir() and _LEVEL.match(p.name)), key=lambda p: int(p.name[5:]))


def _order(path: Path) -> tuple[int, str]:
    match = re.match(r"(\d+)_", path.name)
    return (int(match.group(1)) if match else 1 << 30, path.name)


def problems(root: str | None = None) -> dict[str, KernelProblem]:
    """Every problem by id: shipped ones, then the checkout's (a checkout id wins on a clash)."""
    found: dict[str, KernelProblem] = {}
    roots = [SHIPPED]
    checkout = root or os.environ.get(ROOT_ENV)
    if checkout:
        roots.append(Path(checkout).expanduser())
    for base in roots:
        for level in _levels(base):
            for path in sorted(level.glob("*.py"), key=_order):
                problem_id = f"{level.name}/{path.stem}"
                found[problem_id] = KernelProblem(problem_id, path)
    return found


def initial_candidate(reference: str) -> str:
    """A correct starting point: the reference itself, with a ``ModelNew`` that is the same model."""
    return reference.rstrip("\n") + "\n\n\nclass ModelNew(Model):\n    \"\"\"To optimize: replace with custom kernels.\"\"\"\n"
