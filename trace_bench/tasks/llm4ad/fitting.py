"""Parameter fitting for the equation-discovery tasks (oscillator1, bactgrow), numpy only.

A candidate equation has free parameters; the evaluator fits them to data and scores the
fitted error, so the LLM is judged on the *form* of the equation.  A small Levenberg-Marquardt
with forward-difference Jacobians is enough for ten parameters and a few hundred points, runs
in milliseconds, and gives the same answer on every machine (scipy would be an optional,
version-dependent dependency of the score).

Scoring takes two sandboxed calls (:func:`evaluate_fit`): one fits the parameters (it must see
the target values), a fresh one evaluates the equation at those parameters on the inputs alone,
and the job computes the error from those predictions.  A candidate that tampers with the fit
can only return worse parameters; it never sees the target while its predictions are taken.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from trace_bench.tasks.llm4ad.evalkit import InvalidSolution, load_candidate

MAX_PARAMS = 10
FITTING_MODULE = __name__  # the only module of an equation task that its sandbox shows
_FIT, _PREDICT = f"{__name__}:fit_target", f"{__name__}:predict_target"


def predictions(equation: Callable[..., Any], inputs: tuple[np.ndarray, ...], params: np.ndarray) -> np.ndarray:
    """The equation's output as a float array shaped like the data (a scalar is broadcast)."""
    out = equation(*[a.copy() for a in inputs], params.copy())
    try:
        arr = np.asarray(out, dtype=float)
        return np.broadcast_to(arr, inputs[0].shape).astype(float)
    except (TypeError, ValueError) as exc:
        raise InvalidSolution(f"the equation must return an array shaped like its inputs {inputs[0].shape}, "
                              f"got {type(out).__name__} {getattr(out, 'shape', '')}") from exc


def _cost(residual: np.ndarray) -> float:
    value = float(residual @ residual)
    return value if np.isfinite(value) else np.inf


def levenberg_marquardt(residuals: Callable[[np.ndarray], np.ndarray], p0: np.ndarray,
                        max_iter: int = 200, tol: float = 1e-13) -> tuple[np.ndarray, float]:
    """Minimize ``sum(residuals(p)**2)``; returns (params, cost).  Deterministic."""
    p = np.asarray(p0, dtype=float).copy()
    r = residuals(p)
    cost = _cost(r)
    if not np.isfinite(cost):
        raise InvalidSolution("the equation returns NaN or inf at the initial parameters (all ones)")
    damping = 1e-3
    for _ in range(max_iter):
        jac = np.empty((len(r), len(p)))
        for j in range(len(p)):
            h = 1e-6 * (1.0 + abs(p[j]))
            shifted = p.copy()
            shifted[j] += h
            column = (residuals(shifted) - r) / h
            jac[:, j] = np.where(np.isfinite(column), column, 0.0)
        gradient, hessian = jac.T @ r, jac.T @ jac
        improved = False
        for _ in range(12):
            system = hessian + damping * (np.diag(np.diag(hessian)) + 1e-12 * np.eye(len(p)))
            try:
                step = np.linalg.solve(system, -gradient)
            except np.linalg.LinAlgError:
                damping *= 10.0
                continue
            trial = p + step
            trial_r = residuals(trial)
            trial_cost = _cost(trial_r)
            if trial_cost < cost:
                converged = cost - trial_cost <= tol * max(cost, 1e-300)
                p, r, cost, improved = trial, trial_r, trial_cost, True
                damping = max(damping / 3.0, 1e-12)
                if converged:
                    return p, cost
                break
            damping = min(damping * 4.0, 1e12)
        if not improved:
            break
    return p, cost


def fit_equation(equation: Callable[..., Any], inputs: tuple[np.ndarray, ...], target: np.ndarray) -> dict[str, Any]:
    """Fit the equation's parameters to (inputs, target); returns params, MSE and per-point errors."""

    def residuals(params: np.ndarray) -> np.ndarray:
        return predictions(equation, inputs, params) - target

    params, _ = levenberg_marquardt(residuals, np.ones(MAX_PARAMS))
    errors = residuals(params)
    mse = float(np.mean(errors**2))
    if not np.isfinite(mse):
        raise InvalidSolution("the fitted equation gives NaN or inf on the data")
    return {"params": params, "mse": mse, "errors": errors}


def _inputs(payload: dict[str, Any]) -> tuple[np.ndarray, ...]:
    return tuple(np.asarray(a, dtype=float) for a in payload["inputs"])


def fit_target(payload: dict[str, Any]) -> np.ndarray:
    """Sandbox target: the fitted parameters of the candidate's equation."""
    equation = load_candidate(payload["program"], payload["entry"])
    return fit_equation(equation, _inputs(payload), np.asarray(payload["target"], dtype=float))["params"]


def predict_target(payload: dict[str, Any]) -> np.ndarray:
    """Sandbox target: the candidate's equation at given parameters (this process never sees the target)."""
    equation = load_candidate(payload["program"], payload["entry"])
    return predictions(equation, _inputs(payload), np.asarray(payload["params"], dtype=float))


def evaluate_fit(payload: dict[str, Any], run: Callable[[str, dict[str, Any]], Any], entry: str,
                 inputs: tuple[np.ndarray, ...], target: np.ndarray) -> dict[str, Any]:
    """Trusted: fit in one sandboxed call, predict in another, measure the error here."""
    common = {"program": payload["program"], "entry": entry, "inputs": list(inputs)}
    params = np.asarray(run(_FIT, {**common, "target": target}), dtype=float)
    if params.shape != (MAX_PARAMS,) or not np.all(np.isfinite(params)):
        raise InvalidSolution(f"the fit returned parameters of shape {params.shape} (expected {MAX_PARAMS} finite)")
    predicted = np.asarray(run(_PREDICT, {**common, "params": params}), dtype=float)
    if predicted.shape != target.shape:
        raise InvalidSolution(f"the predictions have shape {predicted.shape}, not {target.shape}")
    errors = predicted - target
    mse = float(np.mean(errors**2))
    if not np.isfinite(mse):
        raise InvalidSolution("the fitted equation gives NaN or inf on the data")
    return {"params": params, "mse": mse, "errors": errors}
