"""Parameter fitting for the equation-discovery tasks (oscillator1, bactgrow), numpy only.

A candidate equation has free parameters; the evaluator fits them to data and scores the
fitted error, so the LLM is judged on the *form* of the equation.  A small Levenberg-Marquardt
with forward-difference Jacobians is enough for ten parameters and a few hundred points, runs
in milliseconds, and gives the same answer on every machine (scipy would be an optional,
version-dependent dependency of the score).

Scoring takes two sandboxed processes joined by pipes (:func:`evaluate_fit`,
:mod:`trace_bench.sandbox.rpc`): the candidate's process gets the inputs it must predict on and
serves its equation, parameters in, predictions out (:func:`serve_equation`); the fitter's process,
which never runs candidate code, holds the target values and runs the fit, asking the candidate
for each prediction (:func:`fit_with_candidate`).  The job computes the error from the fitted
predictions.  So the candidate never sees a target value, and tampering with anything in its own
process changes only its predictions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from trace_bench.tasks.llm4ad.evalkit import InvalidSolution, load_candidate, open_candidate

MAX_PARAMS = 10
FITTING_MODULE = __name__  # the only module of an equation task that its sandbox shows
_FITTER, _SERVER = f"{__name__}:fit_with_candidate", f"{__name__}:serve_equation"


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


def serve_equation(payload: dict[str, Any]) -> None:
    """Sandbox target (the candidate's process, which never sees a target): serve the equation's
    predictions on the payload's inputs, for the parameters the fitter asks about."""
    from trace_bench.sandbox.rpc import serve
    from trace_bench.tasks.llm4ad.evalkit import CANDIDATE_FILENAME

    try:
        equation = load_candidate(payload["program"], payload["entry"])
    except Exception as exc:  # noqa: BLE001 - the fitter reports it with its type
        serve(payload, None, {"kind": type(exc).__name__, "message": str(exc)[:2000]})
        return
    inputs = _inputs(payload)

    def predict(params: Any) -> np.ndarray:
        return predictions(equation, inputs, np.asarray(params, dtype=float))

    serve(payload, predict, filename=CANDIDATE_FILENAME)


def fit_with_candidate(payload: dict[str, Any]) -> dict[str, Any]:
    """Sandbox target (no candidate code here): fit the parameters, asking the candidate's process for
    each prediction; returns the fitted parameters and the predictions at them."""
    from trace_bench.sandbox.rpc import CandidateGone

    proxy = open_candidate(payload)
    target = np.asarray(payload["target"], dtype=float)

    def remote(params: np.ndarray) -> np.ndarray:
        try:
            predicted = np.asarray(proxy(params), dtype=float)
        except CandidateGone:
            raise
        except Exception as exc:
            if getattr(exc, "candidate_error_type", "") == "InvalidSolution":
                raise InvalidSolution(str(exc)) from None
            raise
        if predicted.shape != target.shape:
            raise InvalidSolution(f"the predictions have shape {predicted.shape}, not {target.shape}")
        return predicted

    params, _ = levenberg_marquardt(lambda p: remote(p) - target, np.ones(MAX_PARAMS))
    return {"params": params, "predicted": remote(params)}


def evaluate_fit(payload: dict[str, Any], run: Callable[..., Any], entry: str,
                 inputs: tuple[np.ndarray, ...], target: np.ndarray) -> dict[str, Any]:
    """Trusted: fit with the candidate apart from the target (two sandboxed processes), measure the
    error here."""
    fitted = run(_FITTER, {"target": target},
                 candidate=(_SERVER, {"program": payload["program"], "entry": entry, "inputs": list(inputs)}))
    if not isinstance(fitted, dict):
        raise InvalidSolution("the fit gave no parameters")
    params = np.asarray(fitted.get("params"), dtype=float)
    if params.shape != (MAX_PARAMS,) or not np.all(np.isfinite(params)):
        raise InvalidSolution(f"the fit returned parameters of shape {params.shape} (expected {MAX_PARAMS} finite)")
    predicted = np.asarray(fitted.get("predicted"), dtype=float)
    if predicted.shape != target.shape:
        raise InvalidSolution(f"the predictions have shape {predicted.shape}, not {target.shape}")
    errors = predicted - target
    mse = float(np.mean(errors**2))
    if not np.isfinite(mse):
        raise InvalidSolution("the fitted equation gives NaN or inf on the data")
    return {"params": params, "mse": mse, "errors": errors}
