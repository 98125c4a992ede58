"""llm4ad:cvrp_construct: a constructive heuristic for the capacitated vehicle routing problem.

Instances: a depot (node 0) and ``n_customers`` customers in the unit square with integer
demands 1..9 and vehicle capacity ``capacity`` (seeded).  Vehicles leave the depot one after
another; at each step ``select_next_node`` picks a customer that still fits the vehicle, or the
depot to end the route.  Score = -mean total distance of all routes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from trace_bench.tasks.llm4ad.evalkit import InvalidSolution, as_int, constructive, dims, distance_matrix, rng
from trace_bench.tasks.llm4ad.problem import CodeTask, build_problem

TEMPLATE = '''import numpy as np


def select_next_node(current_node, depot, unvisited_nodes, rest_capacity, demands, distance_matrix):
    """Nearest feasible customer; back to the depot when nothing fits."""
    feasible = unvisited_nodes[demands[unvisited_nodes] <= rest_capacity]
    if len(feasible) == 0:
        return depot
    return int(feasible[np.argmin(distance_matrix[current_node, feasible])])
'''

SWEEP_BIAS = '''import numpy as np


def select_next_node(current_node, depot, unvisited_nodes, rest_capacity, demands, distance_matrix):
    """Nearest feasible customer, penalising customers far from the depot early in a route."""
    feasible = unvisited_nodes[demands[unvisited_nodes] <= rest_capacity]
    if len(feasible) == 0:
        return depot
    d = distance_matrix
    fill = rest_capacity / max(rest_capacity + demands[feasible].min(), 1)
    cost = d[current_node, feasible] - 0.3 * fill * d[depot, feasible] + 0.2 * (1 - fill) * d[feasible, depot]
    return int(feasible[np.argmin(cost)])
'''

SAVINGS_PLAN = '''import numpy as np

_next = {}


def _savings_routes(depot, customers, demands, d, capacity):
    """Clarke-Wright savings: merge routes end to end while capacity allows."""
    route_of = {c: [c] for c in customers}
    load = {id(r): demands[r[0]] for r in route_of.values()}
    pairs = [(d[depot, i] + d[depot, j] - d[i, j], i, j) for a, i in enumerate(customers)
             for j in customers[a + 1:]]
    pairs.sort(reverse=True)
    for saving, i, j in pairs:
        if saving <= 0:
            break
        ri, rj = route_of[i], route_of[j]
        if ri is rj or load[id(ri)] + load[id(rj)] > capacity:
            continue
        if ri[-1] != i:
            ri.reverse()
        if rj[0] != j:
            rj.reverse()
        if ri[-1] != i or rj[0] != j:
            continue
        merged = ri + rj
        load[id(merged)] = load[id(ri)] + load[id(rj)]
        for c in merged:
            route_of[c] = merged
    seen, routes = set(), []
    for r in route_of.values():
        if id(r) not in seen:
            seen.add(id(r))
            routes.append(r)
    return routes


def select_next_node(current_node, depot, unvisited_nodes, rest_capacity, demands, distance_matrix):
    """Follow a savings plan computed at the first call; fall back to nearest feasible."""
    key = (id(distance_matrix), int(current_node))
    if current_node == depot and len(unvisited_nodes) == len(demands) - 1:
        capacity = rest_capacity
        routes = _savings_routes(depot, [int(c) for c in unvisited_nodes], demands, distance_matrix, capacity)
        routes.sort(key=lambda r: distance_matrix[depot, r[0]])
        _next.clear()
        _next["starts"] = [r[0] for r in routes]
        for r in routes:
            for a, b in zip(r, r[1:] + [depot]):
                _next[(id(distance_matrix), a)] = b
    left = set(int(c) for c in unvisited_nodes)
    if current_node != depot:
        nxt = _next.get(key)
        if nxt is not None and (nxt == depot or (nxt in left and demands[nxt] <= rest_capacity)):
            return nxt
    else:
        for start in _next.get("starts", []):
            if start in left:
                return start
    feasible = unvisited_nodes[demands[unvisited_nodes] <= rest_capacity]
    if len(feasible) == 0:
        return depot
    return int(feasible[np.argmin(distance_matrix[current_node, feasible])])
'''

TASK = CodeTask(
    name="cvrp_construct",
    entry="select_next_node",
    signature="(current_node: int, depot: int, unvisited_nodes: np.ndarray, rest_capacity: float, "
              "demands: np.ndarray, distance_matrix: np.ndarray) -> int",
    description=("Capacitated vehicle routing, constructive: vehicles with a fixed capacity start and end at "
                 "the depot and together must serve every customer's demand exactly once. At each step "
                 "select_next_node picks the next customer for the current vehicle, or the depot to end its "
                 "route. Minimize the total distance travelled on random instances in the unit square."),
    constraints=("Return the depot or an element of unvisited_nodes whose demand is <= rest_capacity; "
                 "returning the depot while at the depot is invalid."),
    template=TEMPLATE,
    stub_candidates=(SWEEP_BIAS, SAVINGS_PLAN),
    evaluator=f"{__name__}:evaluate",
    scoring="-mean total route distance",
    defaults={"n_instances": 8, "n_customers": 50, "capacity": 40},
)


def instances(seed: int, n_instances: int, n_customers: int) -> list[tuple[np.ndarray, np.ndarray]]:
    gen = rng(seed, 2)
    out = []
    for _ in range(n_instances):
        points = gen.random((n_customers + 1, 2))
        demands = np.concatenate([[0], gen.integers(1, 10, size=n_customers)]).astype(float)
        out.append((distance_matrix(points), demands))
    return out


def route_distance(select: Any, dist: np.ndarray, demands: np.ndarray, capacity: float) -> float:
    depot, current, rest, total = 0, 0, capacity, 0.0
    unvisited = np.arange(1, len(dist))
    for _ in range(4 * len(dist) + 4):
        if not len(unvisited):
            return total + dist[current, depot]
        nxt = as_int(select(current, depot, unvisited.copy(), rest, demands.copy(), dist),
                     "select_next_node's return value")
        if nxt == depot:
            if current == depot:
                raise InvalidSolution("select_next_node returned the depot while the vehicle is at the depot")
            total += dist[current, depot]
            current, rest = depot, capacity
            continue
        position = np.flatnonzero(unvisited == nxt)
        if len(position) == 0:
            raise InvalidSolution(f"select_next_node returned {nxt}, which is neither the depot nor unvisited")
        if demands[nxt] > rest:
            raise InvalidSolution(f"customer {nxt} (demand {demands[nxt]:g}) does not fit the remaining "
                                  f"capacity {rest:g}")
        total += dist[current, nxt]
        rest -= demands[nxt]
        unvisited = np.delete(unvisited, position[0])
        current = nxt
    raise InvalidSolution("the routes did not serve every customer within the step limit")


def _data(payload: dict[str, Any]) -> list[tuple[np.ndarray, np.ndarray, float]]:
    capacity = float(payload["capacity"])
    return [(dist, demands, capacity) for dist, demands in instances(*dims(payload, "n_customers"))]


solve, evaluate = constructive(
    TASK, _data, lambda select, instance: route_distance(select, *instance), label="route distance",
    higher_is_better=False, summary=lambda mean, totals, _, payload: (
        f"Mean total distance {mean:.4f} over {len(totals)} instances of {payload['n_customers']} customers, "
        f"capacity {float(payload['capacity']):g} (lower is better)."))


def build_trace_problem(**eval_kwargs: Any) -> dict[str, Any]:
    return build_problem(TASK, eval_kwargs)
