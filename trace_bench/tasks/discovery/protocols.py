"""How each peer calls its evaluator, reproduced in the sandbox (sandbox side).

Every protocol returns plain data, ``{"metrics": {...}, "artifacts": {...}}`` plus ``timed_out``
(an evaluation that ran out of time: its result depends on the machine's load) and, for
ShinkaEvolve, ``correct``; the job scores it (:mod:`.results`).  An ``evaluate`` function runs in a
worker thread under the folder's timeout, as OpenEvolve and SkyDiscover run it (an executor thread
awaited with a timeout); a script (``evaluate.sh``'s entry point, ShinkaEvolve's ``main``) runs in
the main thread, as the process of its own those libraries start for it runs it (its ``signal``
alarms work).  A timed-out evaluation gets the result those libraries give it.

- ``evaluate``: ``evaluate(program_path)``; with ``cascade`` and ``evaluate_stage1`` defined,
  OpenEvolve's cascade: stage 1, then stage 2 only when stage 1 passes the first threshold (its
  ``combined_score``, else the average of its numeric metrics but ``error``), then stage 3 when the
  merged metrics pass the second (SkyDiscover: two stages).  A stage that raises or times out ends
  the cascade with the shapes OpenEvolve gives (``stage1_passed: 0``, ``error: 0.0``, ...).
- ``script``: the containerized layout's entry point run as ``__main__`` with ``argv`` = [script,
  program, mode], its stdout read as SkyDiscover's container JSON (``status``, ``combined_score``,
  ``metrics``, ``artifacts``); a script that fails or prints no JSON gives ``{"error": 0.0}``.
- ``main``: ShinkaEvolve's ``main(program_path, results_dir)``, then its ``metrics.json``
  (``combined_score``, ``public``, ``private``, ``text_feedback``) and ``correct.json``.
"""

from __future__ import annotations

import _thread
import contextlib
import io
import json
import math
import os
import runpy
import signal
import sys
import tempfile
import threading
import traceback
from collections.abc import Callable
from typing import Any

ARTIFACT_CHARS = 20_000


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return str(value)[:ARTIFACT_CHARS]


def _is_number(value: Any) -> bool:
    if isinstance(value, (int, float)):
        return True
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return type(value).__module__ == "numpy"


def _scalars(metrics: dict[Any, Any]) -> dict[str, Any]:
    return {str(k): (v if isinstance(v, (int, float, str, bool)) else float(v)) for k, v in metrics.items()
            if isinstance(v, (str, bool)) or _is_number(v)}


def plain_result(value: Any) -> dict[str, Any]:
    """An evaluator's return value (a dict or an ``EvaluationResult``-like object) as
    ``{"metrics": {...}, "artifacts": {...}}`` of plain values; a dict's ``artifacts`` entry is its
    artifacts (SkyDiscover's ``to_dict``), its other entries are metrics (OpenEvolve wraps a dict so)."""
    if hasattr(value, "metrics") and not isinstance(value, dict):
        metrics, artifacts = dict(value.metrics or {}), getattr(value, "artifacts", None)
    elif isinstance(value, dict):
        metrics = {k: v for k, v in value.items() if k != "artifacts"}
        artifacts = value.get("artifacts")
    else:
        raise TypeError(f"the evaluator must return a dict or an EvaluationResult, got {type(value).__name__}")
    if isinstance(artifacts, dict):
        texts = {str(k): _text(v) for k, v in artifacts.items()}
    else:
        texts = {} if artifacts is None else {"artifacts": _text(artifacts)}
    return {"metrics": _scalars(metrics), "artifacts": texts}


def call_with_timeout(function: Callable[[], Any], timeout: float) -> tuple[str, Any]:
    """``("ok", value)``, ``("timeout", None)`` or ``("error", exception)`` of ``function()`` run in a
    daemon thread (left behind on a timeout: the sandboxed process ends with the evaluation)."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = function()
        except BaseException as exc:  # noqa: BLE001 - the evaluator's failure is data here
            box["error"] = exc

    thread = threading.Thread(target=target, name="evaluation", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        return "timeout", None
    return ("error", box["error"]) if "error" in box else ("ok", box.get("value"))


def _passes(metrics: dict[str, Any], threshold: float) -> bool:
    if not metrics:
        return False
    score = metrics.get("combined_score")
    if isinstance(score, (int, float)):
        return float(score) >= threshold
    values = [float(v) for k, v in metrics.items() if k != "error" and isinstance(v, (int, float))]
    return bool(values) and math.fsum(values) / len(values) >= threshold


def _merge(earlier: dict[str, Any], later: dict[str, Any]) -> dict[str, Any]:
    metrics = {k: float(v) for k, v in {**earlier["metrics"], **later["metrics"]}.items()
               if isinstance(v, (int, float)) and k != "error"}
    return {"metrics": metrics, "artifacts": {**earlier["artifacts"], **later["artifacts"]}}


def _stage_failure(result: dict[str, Any], number: int, outcome: str, error: Any, openevolve: bool) -> dict[str, Any]:
    """A later stage that raised or timed out: the earlier result, marked (as OpenEvolve marks it)."""
    if openevolve:
        result["metrics"][f"stage{number}_passed"] = 0.0
    if outcome == "timeout":
        result["metrics"]["timeout"] = True
        result["timed_out"] = True
    else:
        result["artifacts"][f"stage{number}_stderr"] = _text(f"{type(error).__name__}: {error}")
        result["artifacts"][f"stage{number}_traceback"] = _text("".join(traceback.format_exception(error)))
    result["artifacts"]["failure_stage"] = f"stage{number}"
    return result


def _bound(function: Callable[[str], Any], path: str) -> Callable[[], Any]:
    return lambda: function(path)


def run_cascade(module: Any, path: str, timeout: float, thresholds: list[float], max_stages: int) -> dict[str, Any]:
    outcome, value = call_with_timeout(lambda: module.evaluate_stage1(path), timeout)
    if outcome == "timeout":
        return {"metrics": {"stage1_passed": 0.0, "error": 0.0, "timeout": True},
                "artifacts": {"failure_stage": "stage1", "timeout": "True"}, "timed_out": True}
    if outcome == "error":
        return {"metrics": {"stage1_passed": 0.0, "error": 0.0},
                "artifacts": {"failure_stage": "stage1", "stderr": _text(f"{type(value).__name__}: {value}"),
                              "traceback": _text("".join(traceback.format_exception(value)))}}
    result = plain_result(value)
    openevolve = max_stages >= 3
    for number in range(2, max_stages + 1):
        threshold = thresholds[number - 2] if len(thresholds) >= number - 1 else None
        stage = getattr(module, f"evaluate_stage{number}", None)
        if (threshold is not None and not _passes(result["metrics"], threshold)) or stage is None:
            return result
        if threshold is None and number > 2:
            return result
        outcome, value = call_with_timeout(_bound(stage, path), timeout)
        if outcome != "ok":
            return _stage_failure(result, number, outcome, value, openevolve)
        result = _merge(result, plain_result(value))
    return result


def run_evaluate(module: Any, path: str, payload: dict[str, Any]) -> dict[str, Any]:
    timeout = float(payload["timeout_s"])
    if payload.get("cascade") and hasattr(module, "evaluate_stage1"):
        return run_cascade(module, path, timeout, [float(t) for t in payload.get("thresholds") or []],
                           int(payload.get("max_stages") or 3))
    outcome, value = call_with_timeout(lambda: module.evaluate(path), timeout)
    if outcome == "timeout":
        return {"metrics": {"error": 0.0, "timeout": True},
                "artifacts": {"failure_stage": "evaluation", "timeout": "True"}, "timed_out": True}
    if outcome == "error":
        raise value
    return plain_result(value)


def _container_output(stdout: str) -> dict[str, Any] | None:
    text = stdout.strip()
    for candidate in [text, *reversed(text.splitlines())]:
        try:
            data = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(data, dict):
            return data
    return None


def call_in_main_thread(function: Callable[[], Any], timeout: float) -> tuple[str, Any]:
    """As :func:`call_with_timeout`, but ``function`` runs in the main thread, as a script runs: the
    containerized layout's ``evaluate.sh`` and ShinkaEvolve's job start the evaluator as a process of
    its own, and their evaluators set ``signal`` alarms, which only the main thread may do.  A watchdog
    thread interrupts the main thread at the timeout (code stuck inside a C call is ended by the
    sandbox's own wall limit, a little later).  Called outside the main thread, it is
    :func:`call_with_timeout`."""
    if threading.current_thread() is not threading.main_thread():
        return call_with_timeout(function, timeout)
    finished = threading.Event()
    expired = threading.Event()

    def watchdog() -> None:
        if not finished.wait(timeout):
            expired.set()
            _thread.interrupt_main()

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # what interrupt_main raises
    threading.Thread(target=watchdog, name="evaluation-timeout", daemon=True).start()
    try:
        try:
            value = function()
        finally:
            finished.set()
            signal.signal(signal.SIGINT, previous)
    except KeyboardInterrupt as exc:
        return ("timeout", None) if expired.is_set() else ("error", exc)
    except BaseException as exc:  # noqa: BLE001 - the evaluator's failure is data here
        return "error", exc
    return "ok", value


def run_script(entry: str, path: str, payload: dict[str, Any]) -> dict[str, Any]:
    """The containerized layout's entry point (see the module doc)."""
    out, err = io.StringIO(), io.StringIO()
    code: list[Any] = [0]

    def script() -> None:
        sys.argv = [entry, path, str(payload.get("mode") or "train")]
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                runpy.run_path(entry, run_name="__main__")
            except SystemExit as exc:
                code[0] = exc.code

    outcome, value = call_in_main_thread(script, float(payload["timeout_s"]))
    if outcome == "timeout":
        return {"metrics": {"error": 0.0, "timeout": True}, "timed_out": True,
                "artifacts": {"error": f"evaluate.sh timed out after {payload['timeout_s']}s"}}
    if outcome == "error" or code[0] not in (0, None):
        detail = "".join(traceback.format_exception(value)) if outcome == "error" else ""
        return {"metrics": {"error": 0.0}, "artifacts": {"stderr": _text(err.getvalue() + detail),
                                                          "exit_code": str(1 if outcome == "error" else code[0])}}
    data = _container_output(out.getvalue())
    if data is None:
        return {"metrics": {"error": 0.0}, "artifacts": {"raw_output": _text(out.getvalue()),
                                                          "stderr": _text(err.getvalue())}}
    raw = data.get("metrics")
    metrics: dict[str, Any] = {str(k): float(v) for k, v in raw.items() if isinstance(v, (int, float))} \
        if isinstance(raw, dict) else {}
    if "combined_score" not in metrics:
        try:
            metrics["combined_score"] = float(data.get("combined_score", 0.0))
        except (TypeError, ValueError):
            metrics["combined_score"] = 0.0
    artifacts = {str(k): _text(v) for k, v in (data.get("artifacts") or {}).items()} \
        if isinstance(data.get("artifacts"), dict) else {}
    status = str(data.get("status", "error"))
    if status != "success":
        artifacts.setdefault("status", status)
        if err.getvalue().strip():
            artifacts.setdefault("stderr", _text(err.getvalue()))
    return {"metrics": metrics, "artifacts": artifacts}


def _read_json(path: str) -> Any:
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def run_main(module: Any, path: str, payload: dict[str, Any]) -> dict[str, Any]:
    """ShinkaEvolve's protocol (see the module doc); private metrics are kept apart as ``private.*``."""
    results_dir = tempfile.mkdtemp(prefix="results_")
    outcome, value = call_in_main_thread(lambda: module.main(path, results_dir), float(payload["timeout_s"]))
    if outcome == "timeout":
        return {"metrics": {"combined_score": 0.0}, "correct": False, "timed_out": True,
                "artifacts": {"error": f"the evaluation timed out after {payload['timeout_s']}s"}}
    if outcome == "error":
        raise value
    document = _read_json(os.path.join(results_dir, "metrics.json"))
    correct = _read_json(os.path.join(results_dir, "correct.json"))
    if not isinstance(document, dict):
        return {"metrics": {"combined_score": 0.0}, "correct": False,
                "artifacts": {"error": "the evaluation wrote no metrics.json: its results could not be read"}}
    metrics: dict[str, Any] = {k: v for k, v in _scalars(document).items() if not isinstance(v, str)}
    artifacts: dict[str, str] = {}
    for section, prefix in (("public", ""), ("private", "private.")):
        for key, item in _scalars(document.get(section) or {}).items():
            if isinstance(item, str):
                if not prefix:
                    artifacts[key] = _text(item)
            else:
                metrics[prefix + key] = item
    if isinstance(document.get("text_feedback"), str) and document["text_feedback"]:
        artifacts["text_feedback"] = _text(document["text_feedback"])
    is_correct = bool(correct.get("correct")) if isinstance(correct, dict) else False
    if not is_correct and isinstance(correct, dict) and correct.get("error"):
        artifacts["error"] = _text(correct["error"])
    return {"metrics": metrics, "artifacts": artifacts, "correct": is_correct}
