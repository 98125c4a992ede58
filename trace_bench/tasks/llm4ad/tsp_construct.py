"""llm4ad:tsp_construct: a constructive TSP heuristic, one ``select_next_node`` call per step.

Instances: ``n_instances`` random Euclidean instances of ``n_nodes`` cities in the unit square
(seeded).  The tour starts at city 0 and must return there; the heuristic picks each next city
from the unvisited ones.  Score = -mean tour length.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from trace_bench.tasks.llm4ad.evalkit import InvalidSolution, as_int, constructive, dims, distance_matrix, rng
from trace_bench.tasks.llm4ad.problem import CodeTask, build_problem

TEMPLATE = '''import numpy as np


def select_next_node(current_node, destination_node, unvisited_nodes, distance_matrix):
    """Nearest neighbour: go to the closest unvisited city."""
    distances = distance_matrix[current_node, unvisited_nodes]
    return int(unvisited_nodes[np.argmin(distances)])
'''

INSERTION_PLAN = '''import numpy as np

_plan = {}


def select_next_node(current_node, destination_node, unvisited_nodes, distance_matrix):
    """Build a farthest-insertion path once per instance and follow it."""
    key = (id(distance_matrix), int(current_node))
    if key in _plan and _plan[key] in set(unvisited_nodes.tolist()):
        return _plan[key]
    d = distance_matrix
    path = [int(current_node), int(destination_node)]
    todo = [int(v) for v in unvisited_nodes]
    nearest = np.minimum(d[todo, current_node], d[todo, destination_node])
    while todo:
        k = int(np.argmax(nearest))
        city = todo.pop(k)
        nearest = np.delete(nearest, k)
        a, b = np.array(path[:-1]), np.array(path[1:])
        pos = int(np.argmin(d[a, city] + d[city, b] - d[a, b]))
        path.insert(pos + 1, city)
        if todo:
            nearest = np.minimum(nearest, d[todo, city])
    _plan.clear()
    for a, b in zip(path[:-2], path[1:-1]):
        _plan[(id(distance_matrix), a)] = b
    return path[1]
'''

TWO_OPT_PLAN = '''import numpy as np

_plan = {}


def _two_opt(path, d):
    """Improve an open path whose first and last cities are fixed."""
    improved = True
    while improved:
        improved = False
        for i in range(1, len(path) - 2):
            a, b = path[i - 1], path[i]
            c, e = path[i:-1], path[i + 1:]
            gain = d[a, b] + d[c, e] - d[a, c] - d[b, e]
            j = int(np.argmax(gain))
            if gain[j] > 1e-12:
                path[i:i + j + 1] = path[i:i + j + 1][::-1]
                improved = True
    return path


def select_next_node(current_node, destination_node, unvisited_nodes, distance_matrix):
    """Plan a whole path (nearest neighbour + 2-opt) once, then follow it."""
    key = (id(distance_matrix), int(current_node))
    if key in _plan and _plan[key] in set(unvisited_nodes.tolist()):
        return _plan[key]
    todo = list(unvisited_nodes.tolist())
    path, here = [int(current_node)], int(current_node)
    while todo:
        nxt = min(todo, key=lambda j: distance_matrix[here, j])
        todo.remove(nxt)
        path.append(nxt)
        here = nxt
    path.append(int(destination_node))
    path = _two_opt(np.array(path), distance_matrix).tolist()
    _plan.clear()
    for a, b in zip(path[:-2], path[1:-1]):
        _plan[(id(distance_matrix), a)] = b
    return path[1]
'''

TASK = CodeTask(
    name="tsp_construct",
    entry="select_next_node",
    signature="(current_node: int, destination_node: int, unvisited_nodes: np.ndarray, "
              "distance_matrix: np.ndarray) -> int",
    description=("Travelling salesman, constructive: a tour starts at city 0, visits every city once and "
                 "returns to city 0. At each step select_next_node chooses the next city among the unvisited "
                 "ones. Minimize the total Euclidean tour length on random instances in the unit square."),
    constraints="Return one element of unvisited_nodes (an int city index).",
    template=TEMPLATE,
    stub_candidates=(INSERTION_PLAN, TWO_OPT_PLAN),
    evaluator=f"{__name__}:evaluate",
    scoring="-mean tour length",
    defaults={"n_instances": 8, "n_nodes": 50},
)


def instances(seed: int, n_instances: int, n_nodes: int) -> list[np.ndarray]:
    gen = rng(seed, 1)
    return [distance_matrix(gen.random((n_nodes, 2))) for _ in range(n_instances)]


def tour_length(select: Any, dist: np.ndarray) -> float:
    n = len(dist)
    unvisited = np.arange(1, n)
    current, total = 0, 0.0
    while len(unvisited):
        nxt = as_int(select(current, 0, unvisited.copy(), dist), "select_next_node's return value")
        position = np.flatnonzero(unvisited == nxt)
        if len(position) == 0:
            raise InvalidSolution(f"select_next_node returned {nxt}, which is not an unvisited city")
        total += dist[current, nxt]
        unvisited = np.delete(unvisited, position[0])
        current = nxt
    return total + dist[current, 0]


def _matrices(payload: dict[str, Any]) -> list[np.ndarray]:
    return instances(*dims(payload, "n_nodes"))


solve, evaluate = constructive(
    TASK, _matrices, tour_length, label="tour length", higher_is_better=False,
    summary=lambda mean, lengths, _, payload: (
        f"Mean tour length {mean:.4f} over {len(lengths)} instances of {payload['n_nodes']} cities "
        "(lower is better)."))


def build_trace_problem(**eval_kwargs: Any) -> dict[str, Any]:
    return build_problem(TASK, eval_kwargs)
