"""Sandbox target: build one KernelBench model and run it when the job says, on the job's seeds.

Runs inside the sandbox (:mod:`trace_bench.tasks.kernelbench.local`), once for the reference
``Model`` (a process without candidate code) and once for the candidate's ``ModelNew``, with the
same code, so that both are measured the same way.  It answers the job on two pipes
(``payload["channels"]``) with :mod:`trace_bench.sandbox.frames` frames:

- ``{"built": true}`` once the model is built (compiled), then ``{"ready": true}`` after two
  warm-up runs, or ``{"ready": false, "stage": "compile" | "build" | "run", "error"}`` instead;
- then, per ``{"op": "run", "seed", "reps"}``: for ``i < reps`` it draws the reference's inputs
  with ``torch.manual_seed(seed + i)`` (``get_inputs()``, moved to the device), runs the model,
  keeps the elementwise maximum of the outputs, synchronizes, and sends that whole output: a frame
  ``{"output": {"shape": [...], "bytes": n}}`` and then ``n`` raw bytes, the values as
  little-endian float32 (:func:`send_output`); or ``{"error": ...}`` when the model failed;
- ``{"op": "stop"}`` ends the call.

Nothing it sends is taken on trust: the job compares the output with the reference's for the same
seeds, at positions it draws itself and never sends (every value of an output of up to
:data:`~.local.SAMPLED_VALUES` values), and times each run from outside, to the last byte of its
output (:mod:`.local`), so what this process claims about itself (a timing, a verdict) is never read.
The inputs of a run exist only once its seed arrives, and every value of the output crosses to the
job, so a model can be timed as fast only by computing every output of that run.
"""

from __future__ import annotations

import os
import traceback
from typing import Any

import numpy as np

from trace_bench.sandbox.frames import read_value, write_value

try:  # imported where the sandbox starts (once per job), never initializing CUDA there
    import torch
except ImportError:  # pragma: no cover - a call then reports it
    torch = None

FRAME_BYTES = 8 << 20


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
    return np.ascontiguousarray(tensor, dtype="<f4")


def send_output(fd: int, values: np.ndarray) -> None:
    """The whole output: its header frame, then its values' raw float32 bytes."""
    data = np.ascontiguousarray(values, dtype="<f4")
    write_value(fd, {"output": {"shape": list(data.shape), "bytes": int(data.nbytes)}})
    view = memoryview(data.data).cast("B")
    while view:
        view = view[os.write(fd, view):]


def _inputs(namespace: dict[str, Any], seed: int, device: Any) -> list[Any]:
    torch.manual_seed(seed)
    return [x.to(device) if hasattr(x, "to") else x for x in namespace["get_inputs"]()]


def _synchronize(device: Any) -> None:
    if str(device).startswith("cuda"):
        torch.cuda.synchronize()


def _run(model: Any, namespace: dict[str, Any], seed: int, reps: int, device: Any) -> np.ndarray:
    peak = None
    with torch.no_grad():
        for i in range(reps):
            output = model(*_inputs(namespace, seed + i, device))
            peak = output if peak is None else torch.maximum(peak, output)
    _synchronize(device)
    return _numpy(peak)


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
            output = _run(model, reference, int(request["seed"]), max(1, int(request["reps"])), device)
        except Exception as exc:  # noqa: BLE001
            write_value(replies, {"error": f"{type(exc).__name__}: {exc}"[:2000]})
        else:
            send_output(replies, output)
        served += 1
