"""kernelbench:* tasks: make a PyTorch model faster with custom kernels (KernelBench's format).

Ids are ``kernelbench:level<N>/<problem>``: the shipped ``level0/*`` problems and those of a local
KernelBench checkout (:mod:`.catalog`).  A task runs where it can be evaluated: an evaluation
server (``eval_kwargs.eval_server_url`` or env ``TRACE_BENCH_KERNELBENCH_URL``) or a local CUDA
GPU.  Listing does not import torch: it looks for the env variable, or for torch plus an NVIDIA
device node; otherwise tasks are unavailable with ``no CUDA and no eval_server_url``.
:func:`available_with` also honours a job's ``eval_server_url``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from trace_bench.tasks.kernelbench.catalog import problems
from trace_bench.tasks.spec import TaskSpec, Unavailable, UnavailableKind, missing_packages

SUITE = "kernelbench"
_MODULE = "trace_bench.tasks.kernelbench.problem"
URL_ENV = "TRACE_BENCH_KERNELBENCH_URL"
UNAVAILABLE = "no CUDA and no eval_server_url"


def availability() -> Unavailable | None:
    if os.environ.get(URL_ENV):
        return None
    gpu = Path("/dev/nvidiactl").exists() or shutil.which("nvidia-smi") is not None
    return None if gpu and not missing_packages("torch") else Unavailable(UnavailableKind.NO_GPU, UNAVAILABLE)


def available_with(spec: TaskSpec, eval_kwargs: dict[str, Any]) -> Unavailable | None:
    """Availability for a concrete job: its own ``eval_server_url`` is enough."""
    return None if eval_kwargs.get("eval_server_url") else spec.unavailability()


def _spec(problem_id: str, summary: str) -> TaskSpec:
    return TaskSpec(id=f"{SUITE}:{problem_id}", suite=SUITE, description=summary, module=_MODULE,
                    parameter_kinds=("code",), scoring="0 if wrong, else speedup over PyTorch",
                    needs=("cuda or eval server",), availability=availability,
                    default_eval_kwargs={"problem": problem_id}, tags=("kernel", "cuda", "code", "sandbox"))


def discover() -> list[TaskSpec]:
    return [_spec(problem_id, entry.summary()) for problem_id, entry in problems().items()]


def resolve(task_id: str) -> TaskSpec | None:
    """Problems of a checkout given only by ``eval_kwargs.kernelbench_root`` are accepted by id."""
    name = task_id.split(":", 1)[1]
    if not name.startswith("level") or "/" not in name:
        return None
    return _spec(name, f"KernelBench {name}")
