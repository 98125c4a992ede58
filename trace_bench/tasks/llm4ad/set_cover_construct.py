"""llm4ad:set_cover_construct: a constructive heuristic for unweighted set cover.

Instances: a universe of ``n_elements`` elements and ``n_subsets`` random subsets (each element
is in a subset with probability 5-15%, and every element is in at least one subset; seeded).
At each step ``select_next_subset`` picks one not-yet-chosen subset that covers at least one
uncovered element, until everything is covered.  Score = -mean number of subsets used.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from trace_bench.tasks.llm4ad.evalkit import InvalidSolution, as_int, constructive, dims, rng
from trace_bench.tasks.llm4ad.problem import CodeTask, build_problem

TEMPLATE = '''import numpy as np


def select_next_subset(uncovered, membership, chosen):
    """Cover the first uncovered element with the first subset that contains it."""
    element = int(np.flatnonzero(uncovered)[0])
    return int(np.flatnonzero(membership[:, element] & ~chosen)[0])
'''

GREEDY = '''import numpy as np


def select_next_subset(uncovered, membership, chosen):
    """Classic greedy: the subset covering the most uncovered elements."""
    gain = (membership & uncovered).sum(axis=1)
    gain[chosen] = -1
    return int(np.argmax(gain))
'''

RARE_FIRST = '''import numpy as np


def select_next_subset(uncovered, membership, chosen):
    """Greedy weighted by rarity: elements that few subsets contain count for more."""
    frequency = membership[~chosen].sum(axis=0).astype(float)
    weight = np.where(uncovered, 1.0 / np.maximum(frequency, 1.0), 0.0)
    rarest = int(np.argmax(np.where(uncovered, -frequency, -np.inf)))
    gain = (membership * weight).sum(axis=1)
    gain[chosen | ~membership[:, rarest]] = -1.0
    return int(np.argmax(gain))
'''

TASK = CodeTask(
    name="set_cover_construct",
    entry="select_next_subset",
    signature="(uncovered: np.ndarray, membership: np.ndarray, chosen: np.ndarray) -> int",
    description=("Set cover, constructive: choose as few subsets as possible so that every element of the "
                 "universe is in at least one chosen subset. At each step select_next_subset gets uncovered "
                 "(bool per element), membership (bool matrix, subsets x elements) and chosen (bool per "
                 "subset) and returns the index of the next subset to choose. Minimize the number of subsets."),
    constraints="Return the index of a subset that is not chosen yet and covers at least one uncovered element.",
    template=TEMPLATE,
    stub_candidates=(GREEDY, RARE_FIRST),
    evaluator=f"{__name__}:evaluate",
    scoring="-mean number of subsets used",
    defaults={"n_instances": 8, "n_elements": 150, "n_subsets": 80},
)


def instances(seed: int, n_instances: int, n_elements: int, n_subsets: int) -> list[np.ndarray]:
    gen = rng(seed, 5)
    out = []
    for _ in range(n_instances):
        density = gen.uniform(0.05, 0.15, size=(n_subsets, 1))
        membership = gen.random((n_subsets, n_elements)) < density
        for element in np.flatnonzero(~membership.any(axis=0)):
            membership[gen.integers(n_subsets), element] = True
        out.append(membership)
    return out


def cover_size(select: Any, membership: np.ndarray) -> int:
    n_subsets, n_elements = membership.shape
    uncovered = np.ones(n_elements, dtype=bool)
    chosen = np.zeros(n_subsets, dtype=bool)
    while uncovered.any():
        k = as_int(select(uncovered.copy(), membership.copy(), chosen.copy()), "select_next_subset's return value")
        if not 0 <= k < n_subsets:
            raise InvalidSolution(f"select_next_subset returned {k}; valid indices are 0..{n_subsets - 1}")
        if chosen[k]:
            raise InvalidSolution(f"subset {k} was already chosen")
        if not (membership[k] & uncovered).any():
            raise InvalidSolution(f"subset {k} covers no uncovered element")
        chosen[k] = True
        uncovered &= ~membership[k]
    return int(chosen.sum())


def _data(payload: dict[str, Any]) -> list[np.ndarray]:
    return instances(*dims(payload, "n_elements", "n_subsets"))


solve, evaluate = constructive(
    TASK, _data, cover_size, label="subsets used", higher_is_better=False, fmt=".0f",
    summary=lambda mean, used, _, payload: (
        f"Mean cover size {mean:.3f} subsets over {len(used)} instances ({payload['n_elements']} elements, "
        f"{payload['n_subsets']} subsets; lower is better)."))


def build_trace_problem(**eval_kwargs: Any) -> dict[str, Any]:
    return build_problem(TASK, eval_kwargs)
