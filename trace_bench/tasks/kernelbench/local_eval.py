"""Child process: evaluate one KernelBench candidate on the local GPU; JSON in (stdin), JSON out.

Input ``{"ref_arch_src", "custom_src", "seed", "trials"}``; output (last stdout line) a
:class:`~trace_bench.tasks.kernelbench.evaluation.KernelResult` as JSON.  Steps, as in KernelBench:
build ``Model(*get_init_inputs())`` and ``ModelNew(*get_init_inputs())`` with the same seed (so
their parameters match), compare outputs on ``trials`` seeded inputs (``allclose`` with
atol = rtol = 1e-2), then time both with CUDA events (median of ``trials`` runs after warm-up).
"""

from __future__ import annotations

import json
import sys
import traceback
from typing import Any

TOLERANCE = 1e-2


def _load(source: str, name: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": f"kernelbench_{name}"}
    exec(compile(source, f"<{name}>", "exec"), namespace)  # noqa: S102 - this child exists to run it
    return namespace


def _median_ms(torch: Any, model: Any, inputs: list[Any], trials: int) -> float:
    for _ in range(3):
        model(*inputs)
    torch.cuda.synchronize()
    times = []
    for _ in range(trials):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        model(*inputs)
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]


def evaluate(payload: dict[str, Any]) -> dict[str, Any]:
    import torch

    seed, trials = int(payload.get("seed", 0)), max(1, int(payload.get("trials", 20)))
    device = torch.device("cuda")
    reference = _load(payload["ref_arch_src"], "reference")
    try:
        candidate = _load(payload["custom_src"], "candidate")
        init = reference["get_init_inputs"]()
        torch.manual_seed(seed)
        model = reference["Model"](*init).to(device).eval()
        torch.manual_seed(seed)
        new = candidate["ModelNew"](*init).to(device).eval()
    except Exception as exc:
        return {"compiled": False, "correct": False, "error": f"{type(exc).__name__}: {exc}"}
    with torch.no_grad():
        for trial in range(min(trials, 5)):
            torch.manual_seed(seed + trial)
            inputs = [x.to(device) if hasattr(x, "to") else x for x in reference["get_inputs"]()]
            try:
                expected, got = model(*inputs), new(*inputs)
            except Exception as exc:
                return {"compiled": True, "correct": False, "error": f"runtime error: {type(exc).__name__}: {exc}"}
            if getattr(got, "shape", None) != getattr(expected, "shape", None):
                return {"compiled": True, "correct": False,
                        "error": f"output shape {tuple(got.shape)} != expected {tuple(expected.shape)}"}
            if not torch.allclose(got, expected, atol=TOLERANCE, rtol=TOLERANCE):
                diff = (got - expected).abs().max().item()
                return {"compiled": True, "correct": False, "error": f"wrong result: max abs difference {diff:.4g}"}
        torch.manual_seed(seed)
        inputs = [x.to(device) if hasattr(x, "to") else x for x in reference["get_inputs"]()]
        return {"compiled": True, "correct": True, "runtime_ms": _median_ms(torch, new, inputs, trials),
                "ref_runtime_ms": _median_ms(torch, model, inputs, trials), "error": None}


def main() -> int:
    try:
        result = evaluate(json.loads(sys.stdin.read()))
    except Exception as exc:
        traceback.print_exc()
        result = {"compiled": False, "correct": False, "error": f"{type(exc).__name__}: {exc}"}
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
