"""Seeded evaluations (sandbox side): one rule for evaluators in process and in child interpreters.

The peers' evaluators draw random numbers (a search with restarts, sampled test cases) without
seeding them, so the same program scored differently from one evaluation to the next and two runs
of one config disagreed.  Every evaluation therefore starts from :data:`SEED`:

- in the sandboxed process, ``random`` and ``numpy.random`` are seeded before the evaluator is
  imported (as a fresh interpreter would be, see below), and ``PYTHONHASHSEED`` is 0;
- every Python process the evaluator starts (``subprocess.Popen([sys.executable, ...])``, a
  ``multiprocessing`` pool, ShinkaEvolve-style runners) finds a ``sitecustomize`` on its
  ``PYTHONPATH`` that seeds ``random`` at start-up and ``numpy.random`` as soon as it is imported,
  with the same seed, and inherits ``PYTHONHASHSEED=0``.

The seed does not depend on the job's seed: a program's score is a function of its text, which is
what lets a job cache evaluations by program and two runs of one config agree.
"""

from __future__ import annotations

import os
import random

SEED = 0
SEED_VARIABLE = "TRACE_BENCH_EVAL_SEED"

_SITECUSTOMIZE = '''"""Written by trace-bench for an evaluation's child interpreters: seeds random at start-up and
numpy.random when it is imported, as the evaluation's own process is seeded."""
import os as _os
import random as _random
import sys as _sys

_SEED = int(_os.environ.get("TRACE_BENCH_EVAL_SEED", "0"))
_random.seed(_SEED)


class _SeedNumpyRandom:
    def find_spec(self, name, path=None, target=None):
        if name != "numpy.random":
            return None
        for finder in _sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
                run = spec.loader.exec_module

                def exec_module(module, _run=run):
                    _run(module)
                    module.seed(_SEED)

                spec.loader.exec_module = exec_module
                return spec
        return None


_sys.meta_path.insert(0, _SeedNumpyRandom())
'''


def seed_process() -> None:
    """Seed this process's generators (numpy's only when numpy is importable)."""
    random.seed(SEED)
    try:
        import numpy.random
    except ImportError:
        return
    numpy.random.seed(SEED)


def seed_children(directory: str) -> None:
    """Write the ``sitecustomize`` into ``directory`` and put it first on the ``PYTHONPATH`` that
    the evaluator's child interpreters inherit from this process's environment."""
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "sitecustomize.py"), "w", encoding="utf-8") as handle:
        handle.write(_SITECUSTOMIZE)
    previous = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = directory + (os.pathsep + previous if previous else "")
    os.environ[SEED_VARIABLE] = str(SEED)
    os.environ["PYTHONHASHSEED"] = "0"
