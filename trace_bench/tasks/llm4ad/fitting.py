"""Parameter fitting for the equation-discovery tasks (oscillator1, bactgrow), numpy only.

A candidate equation has free parameters; the evaluator fits them to data and scores the
fitted error, so the LLM is judged on the *form* of the equation.  A small Levenberg-Marquardt
with forward-difference Jacobians is enough for ten parameters and a few hundred points, runs
in milliseconds, and gives the same answer on every machine (scipy would be an optional,
version-dependent dependency of the score).

Scoring takes three sandboxed processes, two joined by pipes (:func:`evaluate_fit`,
:mod:`trace_bench.sandbox.rpc`).  The *fit*: the candidate's process gets the training inputs and
serves its equation, parameters in, predictions out (:func:`serve_equation`); the fitter's process,
which never runs candidate code, holds the training targets and runs the fit, asking the candidate
for each prediction (:func:`fit_with_candidate`).  The *score*: a third process, fresh, gets the
candidate, the fitted parameters and the inputs of every split to score, and returns its predictions
(:func:`predict`); the job computes each split's error from them.  So:

- the candidate never sees a target value, and a held-out split is never fitted: its targets stay in
  the job, and its score uses the parameters fitted on the training split;
- what the fit's probes tell the candidate cannot reach a score.  A candidate that remembers the
  probes can read residuals out of the fitter's steps (a chosen Jacobian makes each step echo about
  ten of them), but the predictions that are scored come from a process that has seen no probe: they
  are a function of the fitted parameters and the inputs alone, as a stateless equation's are.  What
  the training targets can pass to a score is bounded by the fitted parameters themselves
  (:data:`MAX_PARAMS` float64 values, 640 bits: at best about one bit per training point, which the
  audit would see as a fit beyond the data's noise), and nothing of a held-out split's targets
  reaches any process a candidate runs in.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from trace_bench.tasks.llm4ad.evalkit import InvalidSolution, load_candidate, open_candidate

MAX_PARAMS = 10
FITTING_MODULE = __name__  # the only module of an equation task that its sandbox shows
_FITTER, _SERVER, _PREDICT = f"{__name__}:fit_with_candidate", f"{__name__}:serve_equation", f"{__name__}:predict"


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

    def answer(params: Any) -> np.ndarray:
        return predictions(equation, inputs, np.asarray(params, dtype=float))

    serve(payload, answer, filename=CANDIDATE_FILENAME)


def fit_with_candidate(payload: dict[str, Any]) -> dict[str, Any]:
    """Sandbox target (no candidate code here): fit the parameters on the training targets, asking the
    candidate's process for each prediction; returns the fitted parameters."""
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
    return {"params": params}


def predict(payload: dict[str, Any]) -> list[np.ndarray]:
    """Sandbox target (a fresh candidate process that has seen no probe of the fit): the equation's
    predictions at the fitted parameters, on the inputs of each split."""
    equation = load_candidate(payload["program"], payload["entry"])
    params = np.asarray(payload["params"], dtype=float)
    return [predictions(equation, tuple(np.asarray(a, dtype=float) for a in inputs), params)
            for inputs in payload["splits"]]


Split = tuple[tuple[np.ndarray, ...], np.ndarray]  # (inputs, targets)


def evaluate_fit(payload: dict[str, Any], run: Callable[..., Any], entry: str, train: Split,
                 scored: Split | None = None) -> dict[str, Any]:
    """Trusted: fit on ``train`` with the candidate apart from the targets (two sandboxed processes),
    then predict ``scored`` (default: ``train`` itself) in a fresh one, and measure the error here.

    ``scored`` is a held-out split: its targets never leave the job and its inputs reach only the
    fresh process, with the parameters fitted on ``train``."""
    inputs, target = train
    fitted = run(_FITTER, {"target": target},
                 candidate=(_SERVER, {"program": payload["program"], "entry": entry, "inputs": list(inputs)}))
    if not isinstance(fitted, dict):
        raise InvalidSolution("the fit gave no parameters")
    params = np.asarray(fitted.get("params"), dtype=float)
    if params.shape != (MAX_PARAMS,) or not np.all(np.isfinite(params)):
        raise InvalidSolution(f"the fit returned parameters of shape {params.shape} (expected {MAX_PARAMS} finite)")
    score_inputs, score_target = scored if scored is not None else train
    answer = run(_PREDICT, {"program": payload["program"], "entry": entry, "params": params,
                            "splits": [list(score_inputs)]})
    if not isinstance(answer, list) or len(answer) != 1:
        raise InvalidSolution("the equation gave no predictions at the fitted parameters")
    predicted = np.asarray(answer[0], dtype=float)
    if predicted.shape != score_target.shape:
        raise InvalidSolution(f"the predictions have shape {predicted.shape}, not {score_target.shape}")
    errors = predicted - score_target
    mse = float(np.mean(errors**2))
    if not np.isfinite(mse):
        raise InvalidSolution("the fitted equation gives NaN or inf on the data")
    return {"params": params, "mse": mse, "errors": errors}


FLOOR_PROBABILITY = 1e-6  # how rarely an honest fit scores beyond the noise floor by chance
_FLOOR_Z = -4.753  # the standard normal's FLOOR_PROBABILITY quantile


def noise_floor(variances: np.ndarray, held_out: bool) -> float:
    """The lowest MSE an honest fit reaches but with probability :data:`FLOOR_PROBABILITY`, on data whose
    targets carry independent Gaussian noise of the given per-point ``variances``.

    The residuals of the true law are that noise: their MSE is a weighted chi-square, read as a
    chi-square with the effective number of points (Welch-Satterthwaite), whose lower quantile is
    Wilson and Hilferty's.  On the training split the fit absorbs up to :data:`MAX_PARAMS` of those
    points.  A fit below the floor has learnt the noise: the audit flags it."""
    variances = np.asarray(variances, dtype=float)
    total = float(variances.sum())
    if total <= 0:
        return 0.0
    points = len(variances)
    effective = total**2 / float((variances**2).sum())
    if not held_out:
        effective = max(effective * (1.0 - MAX_PARAMS / points), 1.0)
    quantile = max(1.0 - 2.0 / (9.0 * effective) + _FLOOR_Z * math.sqrt(2.0 / (9.0 * effective)), 0.0) ** 3
    return total / points * (1.0 if held_out else max(1.0 - MAX_PARAMS / points, 0.0)) * quantile
