"""llm4ad:bactgrow: discover a bacterial growth-rate law from data (LLM-SR-style).

Data: seeded samples of population density B, substrate concentration S, temperature T and pH,
with growth rates dB/dt from a hidden model (Monod uptake x logistic crowding x temperature and
pH optima) plus 1% multiplicative noise.  ``equation(B, S, T, pH, params)`` proposes a form with
up to 10 free parameters, fitted by least squares from all ones on the training samples; score =
-MSE (the test split's samples are scored with the parameters fitted on the training split).  Parameters
enter with unit scale, so a good form writes known scales in (e.g. ``T - 30 * params[3]``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from trace_bench.tasks.llm4ad.evalkit import rng
from trace_bench.tasks.llm4ad.fitting import FITTING_MODULE, MAX_PARAMS, evaluate_fit, noise_floor
from trace_bench.tasks.llm4ad.problem import CodeTask, Run, build_problem

TEMPLATE = '''import numpy as np


def equation(B, S, T, pH, params):
    """Linear in every variable."""
    return params[0] * B + params[1] * S + params[2] * T + params[3] * pH + params[4]
'''

MONOD_TEMPERATURE = '''import numpy as np


def equation(B, S, T, pH, params):
    """Monod substrate uptake with a temperature optimum; crowding and pH ignored."""
    monod = S / (np.abs(2 * params[1]) + S)
    temperature = np.exp(-((T - 30 * params[2]) / (5 * params[3])) ** 2)
    return params[0] * B * monod * temperature
'''

FULL_MODEL = '''import numpy as np


def equation(B, S, T, pH, params):
    """Monod uptake, logistic crowding, and Gaussian optima in temperature and pH."""
    monod = S / (np.abs(2 * params[1]) + S)
    crowding = 1 - B / (5 * params[2])
    temperature = np.exp(-((T - 30 * params[3]) / (5 * params[4])) ** 2)
    acidity = np.exp(-((pH - 7 * params[5]) / params[6]) ** 2)
    return params[0] * B * monod * crowding * temperature * acidity
'''

NOISE = 0.01  # relative: each rate is the hidden law's times (1 + NOISE * a standard normal)


def _points(settings: Any) -> int:
    return int(settings["n_points"]) * max(1, int(settings["n_instances"]))


def score_bounds(settings: Any, train_seed: int, test_seed: int) -> dict[str, Any]:
    """The best -MSE the data allows an honest equation: the variance of the multiplicative noise on each
    split's samples, less what chance and the fit can take off it (:func:`~.fitting.noise_floor`)."""
    points = _points(settings)

    def variances(seed: int) -> np.ndarray:
        (B, S, T, pH), _ = dataset(seed, points)
        return (NOISE * true_rate(B, S, T, pH)) ** 2

    return {"train": -noise_floor(variances(train_seed), held_out=False),
            "test": -noise_floor(variances(test_seed), held_out=True),
            "why": f"the data's noise: {100 * NOISE:g}% of each growth rate, Gaussian"}


TASK = CodeTask(
    name="bactgrow",
    entry="equation",
    signature="(B: np.ndarray, S: np.ndarray, T: np.ndarray, pH: np.ndarray, params: np.ndarray) -> np.ndarray",
    description=("Equation discovery: find the growth rate dB/dt of a bacterial culture as a function of population "
                 "density B, substrate concentration S, temperature T (degrees C) and pH. params is an array of "
                 f"{MAX_PARAMS} free constants fitted to the data by least squares starting from all ones, so only "
                 "the form of the equation matters. Minimize the mean squared error."),
    constraints=f"Return an array shaped like B; use at most {MAX_PARAMS} params; numpy operations only.",
    template=TEMPLATE,
    stub_candidates=(MONOD_TEMPERATURE, FULL_MODEL),
    evaluator=f"{__name__}:evaluate",
    scoring="-MSE of the fitted equation",
    sandbox_modules=(FITTING_MODULE,),  # never this module: it holds the hidden law
    defaults={"n_instances": 1, "n_points": 500},
    score_bounds=score_bounds,
)


def true_rate(B: np.ndarray, S: np.ndarray, T: np.ndarray, pH: np.ndarray) -> np.ndarray:
    return (1.2 * B * S / (1.8 + S) * (1 - B / 6.0) * np.exp(-(((T - 33.0) / 6.0) ** 2))
            * np.exp(-(((pH - 6.8) / 1.1) ** 2)))


def dataset(seed: int, n_points: int) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    gen = rng(seed, 8)
    B = gen.uniform(0.1, 5.5, n_points)
    S = gen.uniform(0.05, 10.0, n_points)
    T = gen.uniform(15.0, 45.0, n_points)
    pH = gen.uniform(4.5, 9.0, n_points)
    rate = true_rate(B, S, T, pH) * (1 + NOISE * gen.standard_normal(n_points))
    return (B, S, T, pH), rate


def evaluate(payload: dict[str, Any], run: Run) -> dict[str, Any]:
    """Trusted: the data is made here; the candidate's equation is fitted on the training split (in the
    sandbox) and scored on the payload's split with those parameters."""
    inputs, rate = dataset(int(payload["seed"]), _points(payload))
    train_seed = int(payload.get("train_seed", payload["seed"]))
    if train_seed == int(payload["seed"]):
        fit = evaluate_fit(payload, run, TASK.entry, (inputs, rate))
    else:
        fit = evaluate_fit(payload, run, TASK.entry, dataset(train_seed, _points(payload)), (inputs, rate))
    worst = int(np.argmax(np.abs(fit["errors"])))
    B, S, T, pH = (a[worst] for a in inputs)
    return {"score": -fit["mse"], "instance_scores": [fit["mse"]],
            "worst": f"largest error {fit['errors'][worst]:.3g} at B={B:.2f}, S={S:.2f}, T={T:.1f}, pH={pH:.2f}",
            "summary": f"Fitted MSE {fit['mse']:.4g} on {len(rate)} points (variance of the data "
                       f"{float(np.var(rate)):.4g}; lower is better)."}


def build_trace_problem(**eval_kwargs: Any) -> dict[str, Any]:
    return build_problem(TASK, eval_kwargs)
