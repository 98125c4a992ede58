"""Sandbox target: build one KernelBench model and run it when the job says, on the job's seeds.

Runs inside the sandbox (:mod:`trace_bench.tasks.kernelbench.local`), once for the reference
``Model`` (a process without candidate code) and once for the candidate's ``ModelNew``, with the
same code, so that both are measured the same way.  It answers the job on two pipes
(``payload["channels"]``) with :mod:`trace_bench.sandbox.frames` frames:

- ``{"built": true}`` once the model is built (compiled), then ``{"ready": true}`` after two
  warm-up runs, or ``{"ready": false, "stage": "compile" | "build" | "run", "error"}`` instead;
- then, per ``{"op": "run", "seed", "reps"}``: for ``i < reps`` it draws the reference's inputs
  with ``torch.manual_seed(seed + i)`` (``get_inputs()``, moved to the device), runs the model,
  keeps the elementwise maximum of the outputs, synchronizes, and answers ``{"digest": ...}``
  (:func:`digest`), or ``{"error": ...}`` when the model failed;
- ``{"op": "stop"}`` ends the call.

Nothing it sends is taken on trust: the job compares every digest with the reference's for the
same seeds and times each run from outside (:mod:`.local`), so what this process claims about
itself (a timing, a verdict) is never read.  The inputs of a timed run exist only once its seed
arrives, and the elementwise maximum needs every output, so a model can be timed as fast only by
computing every output of that run.
"""

from __future__ import annotations

import math
import traceback
from typing import Any

import numpy as np

from trace_bench.sandbox.frames import read_value, write_value

try:  # imported where the sandbox starts (once per job), never initializing CUDA there
    import torch
except ImportError:  # pragma: no cover - a call then reports it
    torch = None

FRAME_BYTES = 8 << 20
FULL_VALUES = 4096  # outputs up to this size are sent whole; larger ones as samples and projections
PROJECTIONS = 4


def _load(source: str, name: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": f"kernelbench_{name}"}
    exec(compile(source, f"<{name}>", "exec"), namespace)  # noqa: S102 - this sandboxed process exists to run it
    return namespace


def _numpy(tensor: Any) -> np.ndarray:
    if hasattr(tensor, "detach"):
        tensor = tensor.detach()
    if hasattr(tensor, "cpu"):
        tensor = tensor.cpu()
    if hasattr(tensor, "float") and not isinstance(tensor, np.ndarray):
        tensor = tensor.float()
    if hasattr(tensor, "numpy") and not isinstance(tensor, np.ndarray):
        tensor = tensor.numpy()
    return np.asarray(tensor, dtype=np.float64)


def digest(values: np.ndarray, seed: int) -> dict[str, Any]:
    """A small, checkable summary of an output: all of it when small; else its shape, the values at
    positions drawn from ``seed``, and its projections on random sign vectors drawn from ``seed``
    (with the sum of absolute values, which bounds how far a projection of a close output may move)."""
    flat = values.reshape(-1)
    if flat.size <= FULL_VALUES:
        return {"shape": list(values.shape), "values": flat}
    rng = np.random.default_rng(seed)
    positions = rng.choice(flat.size, size=FULL_VALUES, replace=False)
    projections = [float(np.dot(flat, rng.integers(0, 2, flat.size) * 2.0 - 1.0)) for _ in range(PROJECTIONS)]
    return {"shape": list(values.shape), "positions": positions, "values": flat[positions],
            "projections": projections, "abs_sum": float(np.abs(flat).sum())}


def _inputs(namespace: dict[str, Any], seed: int, device: Any) -> list[Any]:
    torch.manual_seed(seed)
    return [x.to(device) if hasattr(x, "to") else x for x in namespace["get_inputs"]()]


def _synchronize(device: Any) -> None:
    if str(device).startswith("cuda"):
        torch.cuda.synchronize()


def _run(model: Any, namespace: dict[str, Any], seed: int, reps: int, device: Any) -> dict[str, Any]:
    peak = None
    with torch.no_grad():
        for i in range(reps):
            output = model(*_inputs(namespace, seed + i, device))
            peak = output if peak is None else torch.maximum(peak, output)
    _synchronize(device)
    return {"digest": digest(_numpy(peak), seed)}


def serve_model(payload: dict[str, Any]) -> dict[str, Any]:
    """Build the model (``payload["role"]``: ``reference`` or ``candidate``), then answer the job."""
    requests, replies = payload["channels"]
    if torch is None:
        write_value(replies, {"ready": False, "stage": "build", "error": "torch is not installed in the sandbox"})
        return {"served": 0}
    device = torch.device(str(payload.get("device") or "cuda"))
    stage = "compile"
    try:
        reference = _load(str(payload["ref_arch_src"]), "reference")
        source = reference if payload["role"] == "reference" else _load(str(payload["custom_src"]), "candidate")
        stage = "build"
        model_class = source["Model" if payload["role"] == "reference" else "ModelNew"]
        init = reference["get_init_inputs"]()
        torch.manual_seed(int(payload["seed"]))
        model = model_class(*init).to(device).eval()
        stage = "run"
        write_value(replies, {"built": True})
        for _ in range(2):  # warm-up: kernels compiled and loaded before anything is timed
            _run(model, reference, int(payload["seed"]), 1, device)
    except Exception as exc:  # noqa: BLE001 - the candidate's failure, reported to the job
        write_value(replies, {"ready": False, "stage": stage,
                              "error": f"{type(exc).__name__}: {exc}"[:2000], "traceback": traceback.format_exc()[-2000:]})
        return {"served": 0}
    write_value(replies, {"ready": True})
    served = 0
    while True:
        try:
            request = read_value(requests, FRAME_BYTES)
        except EOFError:
            return {"served": served}
        if not isinstance(request, dict) or request.get("op") != "run":
            return {"served": served}
        try:
            answer = _run(model, reference, int(request["seed"]), max(1, int(request["reps"])), device)
        except Exception as exc:  # noqa: BLE001
            answer = {"error": f"{type(exc).__name__}: {exc}"[:2000]}
        write_value(replies, answer)
        served += 1


def close(reference: dict[str, Any], candidate: dict[str, Any], tolerance: float) -> str:
    """"" when the candidate's digest matches the reference's for the same seed, else why not (trusted)."""
    if list(candidate.get("shape") or []) != list(reference["shape"]):
        return f"output shape {tuple(candidate.get('shape') or ())} != expected {tuple(reference['shape'])}"
    expected = np.asarray(reference["values"], dtype=np.float64)
    got = np.asarray(candidate.get("values"), dtype=np.float64)
    if got.shape != expected.shape or not np.allclose(got, expected, atol=tolerance, rtol=tolerance):
        worst = float(np.nanmax(np.abs(got - expected))) if got.shape == expected.shape else math.inf
        return f"wrong result: max abs difference {worst:.4g}"
    if "projections" in reference:
        if not np.array_equal(np.asarray(candidate.get("positions")), np.asarray(reference["positions"])):
            return "the output summary was not taken at the positions asked for"
        size = math.prod(reference["shape"])
        bound = size * tolerance + tolerance * float(reference["abs_sum"])  # |sum r_i (a_i - b_i)| for close a, b
        for mine, theirs in zip(candidate.get("projections") or [], reference["projections"], strict=False):
            if not (isinstance(mine, float) and abs(mine - theirs) <= bound):
                return "wrong result: the output differs from the reference's away from the sampled positions"
        if len(candidate.get("projections") or []) != len(reference["projections"]):
            return "the output summary is incomplete"
    return ""
