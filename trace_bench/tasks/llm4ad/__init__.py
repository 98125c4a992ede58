"""llm4ad:* tasks: LLM-driven algorithm design with real evaluators (our own implementations).

Each task asks for one Python function (a constructive heuristic, a priority rule, a packing or
an equation), scores it on seeded instances inside :func:`trace_bench.sandbox.run_sandboxed`,
and ships better heuristics as ``stub_candidates`` so offline stub runs improve for real.
Listing is static: :func:`discover` imports no task module and no numpy.  The optional
``llm4ad`` PyPI package adds ``llm4ad:pkg/<group>/<name>`` tasks (:mod:`.llm4ad_package`), and
the original Trace-Bench directory layout loads through ``--root`` (:mod:`.legacy_root`).
"""

from __future__ import annotations

from trace_bench.tasks.spec import TaskSpec, requires

SUITE = "llm4ad"
_PACKAGE = "trace_bench.tasks.llm4ad"

# name -> (description, scoring); the module is trace_bench.tasks.llm4ad.<name>
_TASKS: dict[str, tuple[str, str]] = {
    "tsp_construct": ("TSP: choose the next city of a tour (constructive heuristic).", "-mean tour length"),
    "cvrp_construct": ("Capacitated vehicle routing: choose the next customer or return to the depot.",
                       "-mean total route distance"),
    "knapsack_construct": ("0/1 knapsack: choose the next item to pack.", "mean packed value"),
    "online_bin_packing": ("Online bin packing: a priority function over bins (Weibull items).",
                           "-mean number of bins used"),
    "online_bin_packing_2o": ("Online bin packing with two objectives: bins used and Python lines per item.",
                              "weighted -(bins + 0.2 * lines per item)"),
    "circle_packing": ("Pack 26 disjoint circles in the unit square.", "sum of radii"),
    "admissible_set": ("Grow an admissible set A(8, 4) with a priority function.", "size of the set"),
    "set_cover_construct": ("Set cover: choose the next subset.", "-mean number of subsets"),
    "jssp_construct": ("Job-shop scheduling: a dispatching rule for the next operation.", "-mean makespan"),
    "oscillator1": ("Equation discovery: acceleration law of a damped nonlinear oscillator.",
                    "-MSE of the fitted equation"),
    "bactgrow": ("Equation discovery: bacterial growth rate from density, substrate, temperature and pH.",
                 "-MSE of the fitted equation"),
}


def discover() -> list[TaskSpec]:
    """Built-in tasks, then the optional ``llm4ad`` package's tasks (listed even when absent)."""
    specs = [
        TaskSpec(id=f"{SUITE}:{name}", suite=SUITE, description=description, module=f"{_PACKAGE}.{name}",
                 parameter_kinds=("code",), scoring=scoring, needs=("numpy",), availability=requires("numpy"),
                 tags=("algorithm-design",))
        for name, (description, scoring) in _TASKS.items()
    ]
    from trace_bench.tasks.llm4ad.llm4ad_package import discover_package

    return specs + discover_package()


def task_names() -> list[str]:
    return list(_TASKS)
