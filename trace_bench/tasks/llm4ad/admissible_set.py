"""llm4ad:admissible_set: a priority function that grows a large admissible set (FunSearch-style).

An admissible set A(n, w) is a set of vectors in {0, 1, 2}^n, each with exactly w non-zero
entries, such that any three distinct vectors have a coordinate whose three values form the
multiset {0, 1, 2}, {0, 0, 1} or {0, 0, 2}.  ``priority(el, n, w)`` ranks every weight-w vector;
the evaluator adds vectors greedily in that order, skipping any that would break the rule.
Score = size of the set.  Kept small (n=8, w=4: 1120 vectors) so an evaluation takes < 1 s.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from trace_bench.tasks.llm4ad.evalkit import InvalidSolution, load_candidate
from trace_bench.tasks.llm4ad.problem import CodeTask, Run, build_problem

TEMPLATE = '''def priority(el, n, w):
    """No preference: vectors are taken in enumeration order."""
    return 0.0
'''

BALANCED = '''def priority(el, n, w):
    """Prefer vectors with as many 1s as 2s."""
    ones = sum(1 for x in el if x == 1)
    return -abs(ones - w / 2)
'''

EVEN_GAPS = '''import numpy as np


def priority(el, n, w):
    """Prefer vectors whose non-zero positions are evenly spaced around the cycle 0..n-1."""
    pos = [i for i, x in enumerate(el) if x]
    gaps = np.diff(pos + [pos[0] + n])
    return -float(np.var(gaps))
'''

SPREAD_BALANCED = '''import numpy as np


def priority(el, n, w):
    """Spread-out support first, then balance between 1s and 2s."""
    pos = [i for i, x in enumerate(el) if x]
    ones = sum(1 for x in el if x == 1)
    return -float(np.var(pos)) - 0.1 * abs(ones - w / 2)
'''

TASK = CodeTask(
    name="admissible_set",
    entry="priority",
    signature="(el: tuple[int, ...], n: int, w: int) -> float",
    description=("Admissible sets: build a large set of vectors in {0,1,2}^n (n=8), each with exactly w=4 non-zero "
                 "entries, such that any three distinct vectors have a coordinate where their values are "
                 "{0,1,2}, {0,0,1} or {0,0,2} as multisets. priority(el, n, w) scores each candidate vector; "
                 "vectors are added greedily from the highest priority, skipping any that would break the rule. "
                 "Maximize the size of the resulting set."),
    constraints="Return one finite float per vector (higher = considered earlier).",
    template=TEMPLATE,
    stub_candidates=(BALANCED, EVEN_GAPS, SPREAD_BALANCED),
    evaluator=f"{__name__}:evaluate",
    scoring="size of the admissible set",
    defaults={"n_instances": 1, "n": 8, "w": 4},
)


def _bad_table() -> np.ndarray:
    """BAD[3*a + b, c]: coordinate values (a, b, c) do *not* separate the triple."""
    good = {(0, 1, 2), (0, 0, 1), (0, 0, 2)}
    table = np.ones((9, 3), dtype=bool)
    for a, b, c in itertools.product(range(3), repeat=3):
        if tuple(sorted((a, b, c))) in good:
            table[3 * a + b, c] = False
    return table


BAD = _bad_table()


def weight_vectors(n: int, w: int) -> np.ndarray:
    rows = []
    for support in itertools.combinations(range(n), w):
        for values in itertools.product((1, 2), repeat=w):
            row = [0] * n
            for i, x in zip(support, values, strict=True):
                row[i] = x
            rows.append(row)
    return np.array(rows, dtype=np.int8)


def greedy_set(vectors: np.ndarray, priorities: np.ndarray) -> np.ndarray:
    """Add vectors by descending priority (stable), dropping those a chosen pair would block."""
    queue = vectors[np.argsort(-priorities, kind="stable")]
    chosen: list[np.ndarray] = []
    while len(queue):
        v, queue = queue[0], queue[1:]
        if chosen and len(queue):
            codes = 3 * np.array(chosen) + v[None, :]
            blocked = BAD[codes[:, None, :], queue[None, :, :]].all(-1).any(0)
            queue = queue[~blocked]
        chosen.append(v)
    return np.array(chosen)


def is_admissible(vectors: np.ndarray) -> bool:
    """Brute-force check of the definition (used by tests on small sets)."""
    for a, b, c in itertools.combinations(range(len(vectors)), 3):
        if BAD[3 * vectors[a] + vectors[b], vectors[c]].all():
            return False
    return True


def solve(payload: dict[str, Any]) -> np.ndarray:
    """Sandbox target: the candidate's priority of every weight-w vector, in enumeration order."""
    priority = load_candidate(payload["program"], TASK.entry)
    n, w = int(payload["n"]), int(payload["w"])
    vectors = weight_vectors(n, w)
    scores = np.empty(len(vectors))
    for k, row in enumerate(vectors):
        value = priority(tuple(int(x) for x in row), n, w)
        try:
            scores[k] = float(value)
        except (TypeError, ValueError) as exc:
            raise InvalidSolution(f"priority must return a float, got {type(value).__name__}") from exc
    if not np.all(np.isfinite(scores)):
        raise InvalidSolution("priority returned a non-finite value")
    return scores


def evaluate(payload: dict[str, Any], run: Run) -> dict[str, Any]:
    """Trusted: build the set greedily from the candidate's priorities and count it."""
    n, w = int(payload["n"]), int(payload["w"])
    vectors = weight_vectors(n, w)
    scores = np.asarray(run(f"{__name__}:solve", payload), dtype=float)
    if scores.shape != (len(vectors),) or not np.all(np.isfinite(scores)):
        raise InvalidSolution(f"expected {len(vectors)} finite priorities, got an array of shape {scores.shape}")
    size = len(greedy_set(vectors, scores))
    distinct = len(np.unique(scores))
    return {"score": float(size), "instance_scores": [size],
            "worst": f"priority gave {distinct} distinct values for {len(vectors)} vectors (ties keep enumeration "
                     "order)",
            "summary": f"Admissible set of size {size} for n={n}, w={w} (higher is better)."}


def build_trace_problem(**eval_kwargs: Any) -> dict[str, Any]:
    return build_problem(TASK, eval_kwargs)
