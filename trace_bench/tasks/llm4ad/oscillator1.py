"""llm4ad:oscillator1: discover the acceleration law of a damped nonlinear oscillator from data.

Data: ``n_instances`` trajectories of a hidden oscillator ``a = f(x, v)`` (a Duffing-type
restoring force with linear and quadratic damping), integrated with RK4 from seeded initial
states and sampled at 150 points each, with a little Gaussian noise on the accelerations.
``equation(x, v, params)`` proposes a form with up to 10 free parameters; the evaluator fits
them by least squares on the training trajectories and scores -MSE.  The test split uses other
trajectories (another seed), scored with the parameters fitted on the training split, never refitted.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from trace_bench.tasks.llm4ad.evalkit import rng
from trace_bench.tasks.llm4ad.fitting import FITTING_MODULE, MAX_PARAMS, evaluate_fit, noise_floor
from trace_bench.tasks.llm4ad.problem import CodeTask, Run, build_problem

NOISE = 1e-3
_TRUE = {"k": 1.3, "eps": 0.6, "c": 0.15, "q": 0.2}

TEMPLATE = '''import numpy as np


def equation(x, v, params):
    """Linear damped oscillator: a = -k x - c v (+ offset)."""
    return params[0] * x + params[1] * v + params[2]
'''

CUBIC = '''import numpy as np


def equation(x, v, params):
    """Duffing restoring force with linear damping."""
    return params[0] * x + params[1] * x ** 3 + params[2] * v
'''

CUBIC_QUADRATIC_DRAG = '''import numpy as np


def equation(x, v, params):
    """Duffing restoring force, linear damping and quadratic (air-drag-like) damping."""
    return params[0] * x + params[1] * x ** 3 + params[2] * v + params[3] * v * np.abs(v)
'''

def score_bounds(settings: Any, train_seed: int, test_seed: int) -> dict[str, Any]:
    """The best -MSE the data allows an honest equation: the noise's variance, less what chance and a fit
    of :data:`MAX_PARAMS` parameters can take off it (:func:`~.fitting.noise_floor`)."""
    variances = np.full(150 * max(1, int(settings["n_instances"])), NOISE**2)
    return {"train": -noise_floor(variances, held_out=False), "test": -noise_floor(variances, held_out=True),
            "why": f"the data's noise: Gaussian with standard deviation {NOISE:g} on every acceleration"}


TASK = CodeTask(
    name="oscillator1",
    entry="equation",
    signature="(x: np.ndarray, v: np.ndarray, params: np.ndarray) -> np.ndarray",
    description=("Equation discovery: find the mathematical law of a damped nonlinear oscillator. Given position x "
                 "and velocity v, equation(x, v, params) returns the acceleration. params is an array of "
                 f"{MAX_PARAMS} free constants that are fitted to the data by least squares (starting from all "
                 "ones), so only the form of the equation matters. Minimize the mean squared error."),
    constraints=f"Return an array shaped like x; use at most {MAX_PARAMS} params; numpy operations only.",
    template=TEMPLATE,
    stub_candidates=(CUBIC, CUBIC_QUADRATIC_DRAG),
    evaluator=f"{__name__}:evaluate",
    scoring="-MSE of the fitted equation",
    sandbox_modules=(FITTING_MODULE,),  # never this module: it holds the hidden law
    defaults={"n_instances": 4},
    score_bounds=score_bounds,
)


def true_acceleration(x: np.ndarray, v: np.ndarray) -> np.ndarray:
    return -_TRUE["k"] * x - _TRUE["eps"] * x**3 - _TRUE["c"] * v - _TRUE["q"] * v * np.abs(v)


def simulate(x0: np.ndarray, v0: np.ndarray, steps: int = 3000, dt: float = 0.005) -> tuple[np.ndarray, np.ndarray]:
    """RK4 trajectories for all initial states at once; arrays of shape (steps, len(x0))."""
    x, v = np.asarray(x0, dtype=float).copy(), np.asarray(v0, dtype=float).copy()
    xs, vs = np.empty((steps, len(x))), np.empty((steps, len(x)))
    for i in range(steps):
        xs[i], vs[i] = x, v
        a1 = true_acceleration(x, v)
        x2, v2 = x + 0.5 * dt * v, v + 0.5 * dt * a1
        a2 = true_acceleration(x2, v2)
        x3, v3 = x + 0.5 * dt * v2, v + 0.5 * dt * a2
        a3 = true_acceleration(x3, v3)
        x4, v4 = x + dt * v3, v + dt * a3
        a4 = true_acceleration(x4, v4)
        x = x + dt / 6.0 * (v + 2 * v2 + 2 * v3 + v4)
        v = v + dt / 6.0 * (a1 + 2 * a2 + 2 * a3 + a4)
    return xs, vs


def dataset(seed: int, n_trajectories: int, points: int = 150) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    gen = rng(seed, 7)
    starts = gen.uniform(-2.0, 2.0, size=(max(1, n_trajectories), 2))
    xs, vs = simulate(starts[:, 0], starts[:, 1])
    keep = [np.sort(gen.choice(len(xs), size=points, replace=False)) for _ in range(len(starts))]
    x = np.concatenate([xs[k, j] for j, k in enumerate(keep)])
    v = np.concatenate([vs[k, j] for j, k in enumerate(keep)])
    return x, v, true_acceleration(x, v) + gen.normal(0.0, NOISE, size=x.shape)


def evaluate(payload: dict[str, Any], run: Run) -> dict[str, Any]:
    """Trusted: the data is made here; the candidate's equation is fitted on the training split (in the
    sandbox) and scored on the payload's split with those parameters."""
    n_instances = int(payload["n_instances"])
    x, v, a = dataset(int(payload["seed"]), n_instances)
    train_seed = int(payload.get("train_seed", payload["seed"]))
    if train_seed == int(payload["seed"]):
        fit = evaluate_fit(payload, run, TASK.entry, ((x, v), a))
    else:
        train_x, train_v, train_a = dataset(train_seed, n_instances)
        fit = evaluate_fit(payload, run, TASK.entry, ((train_x, train_v), train_a), ((x, v), a))
    worst = int(np.argmax(np.abs(fit["errors"])))
    params = ", ".join(f"{p:.4g}" for p in fit["params"])
    return {"score": -fit["mse"], "instance_scores": [fit["mse"]],
            "worst": f"largest error {fit['errors'][worst]:.3g} at x={x[worst]:.3f}, v={v[worst]:.3f}",
            "summary": f"Fitted MSE {fit['mse']:.4g} on {len(x)} points (noise floor ~{NOISE**2:.0e}; lower is "
                       f"better). Fitted params: [{params}]."}


def build_trace_problem(**eval_kwargs: Any) -> dict[str, Any]:
    return build_problem(TASK, eval_kwargs)
