"""ShinkaEvolve's ``run_shinka_eval`` where ShinkaEvolve is not installed (sandbox side).

ShinkaEvolve's examples score a program with ``from shinka.core import run_shinka_eval`` inside their
``evaluate.py``: it loads the program, calls one of its functions ``num_runs`` times, validates and
aggregates the runs, and writes ``metrics.json`` and ``correct.json`` into the results directory
(what trace-bench reads back, :mod:`.protocols`).  The library itself brings LLM clients, a web UI
and some thirty dependencies, none of which that function needs, so a folder would be unavailable
for want of them.  :func:`run_shinka_eval` is trace-bench's own implementation of the same contract
(its parameters, its return value, the files it writes and the metrics it adds), installed by
:mod:`.peer_results` as ``shinka.core`` only where the library is absent.

Differences, by design: runs are always sequential (``run_workers`` only changes the wall time in the
library; the results are the same and in the same order), and early stopping, which needs the
library's statistics, is refused with the install command rather than silently ignored.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import pickle
import time
from collections.abc import Callable
from typing import Any

INSTALL = "pip install shinka-evolve"
DEFAULT_METRICS_ON_ERROR: dict[str, Any] = {
    "combined_score": 0.0, "execution_time_mean": 0.0, "execution_time_std": 0.0, "num_successful_runs": 0,
    "num_valid_runs": 0, "num_invalid_runs": 0, "all_validation_errors": [],
}


def _load(program_path: str, name: str) -> Callable[..., Any]:
    spec = importlib.util.spec_from_file_location("program", program_path)
    if spec is None or spec.loader is None:
        raise ImportError(f"Could not load the program at {program_path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not hasattr(module, name):
        raise AttributeError(f"Experiment function '{name}' not found in {program_path}")
    return getattr(module, name)


def _spread(times: list[float]) -> tuple[float, float]:
    if not times:
        return 0.0, 0.0
    mean = math.fsum(times) / len(times)
    return mean, math.sqrt(math.fsum((t - mean) ** 2 for t in times) / len(times))


def _write(results_dir: str, metrics: dict[str, Any], correct: bool, error: str | None) -> None:
    os.makedirs(results_dir, exist_ok=True)
    with open(os.path.join(results_dir, "correct.json"), "w", encoding="utf-8") as handle:
        json.dump({"correct": correct, "error": error}, handle, indent=4)
    with open(os.path.join(results_dir, "metrics.json"), "w", encoding="utf-8") as handle:
        json.dump(metrics, handle, indent=4)


def _scored(runs: list[Any], times: list[float], aggregate: Callable[[list[Any]], dict[str, Any]] | None,
            validation: tuple[int, int, list[str]] | None) -> dict[str, Any]:
    if aggregate is not None:
        metrics = aggregate(runs)
    else:
        metrics = {"num_successful_runs": len(runs),
                   "first_run_result_type": str(type(runs[0])) if runs else "N/A",
                   "raw_results_preview": str(runs[:2]) if runs else "N/A"}
    metrics["execution_time_mean"], metrics["execution_time_std"] = _spread(times)
    if validation is not None:
        metrics["num_valid_runs"], metrics["num_invalid_runs"], metrics["all_validation_errors"] = validation
    return metrics


def run_shinka_eval(program_path: str, results_dir: str, experiment_fn_name: str, num_runs: int,
                    get_experiment_kwargs: Callable[[int], dict[str, Any]] | None = None,
                    aggregate_metrics_fn: Callable[[list[Any]], dict[str, Any]] | None = None,
                    validate_fn: Callable[[Any], tuple[bool, str | None]] | None = None,
                    plotting_fn: Any = None, default_metrics_on_error: dict[str, Any] | None = None,
                    early_stop_method: Any = None, early_stop_threshold: float | None = None,
                    early_stop_score_fn: Any = None, early_stop_kwargs: Any = None, run_workers: int = 1,
                    max_workers_cap: int | None = None, verbose: bool | None = None,
                    ) -> tuple[dict[str, Any], bool, str | None]:
    """Run, validate, aggregate and record as ShinkaEvolve does; ``(metrics, correct, first error)``."""
    if early_stop_method not in (None, "none"):
        raise NotImplementedError(f"early stopping needs ShinkaEvolve itself ({INSTALL})")
    if run_workers < 1 or (max_workers_cap is not None and max_workers_cap < 1):
        raise ValueError("run_workers and max_workers_cap must be >= 1")
    if verbose is None:
        verbose = os.environ.get("SHINKA_EVAL_VERBOSE", "1") != "0"
    correct, first_error = True, None  # type: bool, str | None
    runs: list[Any] = []
    times: list[float] = []
    errors: list[str] = []
    valid = invalid = 0
    try:
        experiment = _load(program_path, experiment_fn_name)
        for index in range(num_runs):
            kwargs = get_experiment_kwargs(index) if get_experiment_kwargs else {"seed": index + 1}
            if verbose:
                print(f"Running program evaluation {index + 1}/{num_runs}...")
            started = time.perf_counter()
            runs.append(experiment(**kwargs))
            times.append(time.perf_counter() - started)
            if validate_fn is None:
                continue
            ok, message = validate_fn(runs[-1])
            if ok:
                valid += 1
                continue
            invalid, correct = invalid + 1, False
            if message:
                first_error = first_error or f"Validation failed: {message}"
                if message not in errors:
                    errors.append(message)
        metrics = _scored(runs, times, aggregate_metrics_fn, (valid, invalid, errors) if validate_fn else None)
        score = metrics.get("combined_score")
        if isinstance(score, (int, float)) and not math.isfinite(score):
            correct = False
            first_error = first_error or ("combined_score is NaN" if math.isnan(score) else
                                          f"combined_score is inf ({score})")
    except Exception as exc:  # noqa: BLE001 - the library turns every failure into its error metrics
        print(f"Evaluation error: {exc}")
        defaults = dict(default_metrics_on_error or DEFAULT_METRICS_ON_ERROR)
        metrics = {key: defaults.get(key, value) for key, value in DEFAULT_METRICS_ON_ERROR.items()}
        correct, first_error = False, str(exc)
    if "extra_data" in metrics:
        os.makedirs(results_dir, exist_ok=True)
        with open(os.path.join(results_dir, "extra.pkl"), "wb") as handle:
            pickle.dump(metrics.pop("extra_data"), handle)
    _write(results_dir, metrics, correct, first_error)
    return metrics, correct, first_error
