"""KernelBench on this machine's GPU: candidates compiled and run in the sandbox, judged by the job.

Each evaluation is two sandboxed calls of :func:`.local_eval.serve_model`, one after the other so
they never share the GPU: the reference ``Model`` (a process with no candidate code) and the
candidate's ``ModelNew``.  The job drives both through the same steps on the same seeds, which it
draws itself: ``CORRECTNESS_ROUNDS`` single runs, then ``TIMING_ROUNDS`` runs of ``trials``
inputs each.  Correctness is the job comparing each of the candidate's output digests with the
reference's (``allclose`` with atol = rtol = 1e-2, as KernelBench); the runtime of a model is the
shortest of its timed runs *as the job's clock measures it*, from sending the seed to receiving the
digest, divided by ``trials``.  So nothing the candidate's process says about itself (a printed
result line, a timing, a verdict) is read: a faster score needs the right outputs for inputs that
did not exist before the clock started.

The GPU's device nodes (``/dev/nvidia*``) are passed into the sandbox where they exist; the calls
may start processes (compilers) and write their private ``/tmp`` (build directories), get no
network, no key and no host path but the read-only Python installation.  Address space is not
limited (CUDA reserves far more than it uses); time, processes and files are.
"""

from __future__ import annotations

import glob
import os
import random
import time
from dataclasses import dataclass
from typing import Any

from trace_bench.sandbox import SandboxLimits, SandboxResult
from trace_bench.sandbox.frames import read_value, write_value
from trace_bench.tasks.kernelbench.evaluation import KernelResult
from trace_bench.tasks.kernelbench.local_eval import close

TARGET = "trace_bench.tasks.kernelbench.local_eval:serve_model"
TOLERANCE = 1e-2
CORRECTNESS_ROUNDS = 3
TIMING_ROUNDS = 3
TRIALS = 20  # inputs per timed run, unless a task's eval_kwargs.trials or the server's --trials says
FRAME_BYTES = 8 << 20
GPU_PROCESSES = 64  # nvcc, ninja and the compilers they start
GPU_FILES_MB = 2048  # extension builds in the call's private /tmp
NO_ADDRESS_LIMIT_MB = 1 << 24  # 16 TB: CUDA maps far more address space than it uses


def gpu_devices() -> tuple[str, ...]:
    return tuple(sorted(glob.glob("/dev/nvidia*")))


@dataclass
class _Measured:
    ready: dict[str, Any]
    digests: list[Any]
    seconds: list[float]
    result: SandboxResult | None = None


class LocalEvaluator:
    """Evaluates candidates on this machine (``device`` ``cuda``; the tests' stand-in uses ``cpu``)."""

    def __init__(self, *, timeout_s: float = 300.0, trials: int = TRIALS, device: str = "cuda",
                 packages: tuple[str, ...] = ()) -> None:
        self.timeout_s = timeout_s
        self.trials = max(1, int(trials))
        self.device = device
        self.packages = packages

    def _view(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(packages, devices) its calls need the sandbox to show."""
        return ("torch", *self.packages), gpu_devices() if self.device.startswith("cuda") else ()

    def prepare(self) -> None:
        """Fail now where no sandbox may run here, and start it in the background (torch loaded there)."""
        from trace_bench.sandbox import policy, prepare

        packages, devices = self._view()
        prepare(TARGET.partition(":")[0], *packages, *(policy.DEVICE_PREFIX + d for d in devices))

    def _limits(self) -> SandboxLimits:
        gpu = self.device.startswith("cuda")
        return SandboxLimits(wall_s=self.timeout_s, memory_mb=NO_ADDRESS_LIMIT_MB if gpu else 4096,
                             file_size_mb=GPU_FILES_MB if gpu else 64, max_processes=GPU_PROCESSES if gpu else 0)

    def _measure(self, role: str, ref_src: str, custom_src: str, seed: int, seeds: list[int]) -> _Measured:
        """Run one model through the steps; the job's clock times each timed step."""
        from trace_bench.sandbox.runner import Call, start_call

        to_call_r, to_call_w = os.pipe()
        from_call_r, from_call_w = os.pipe()
        payload = {"role": role, "ref_arch_src": ref_src, "custom_src": custom_src, "seed": seed,
                   "device": self.device}
        try:
            packages, devices = self._view()
            call = start_call(TARGET, payload, self._limits(), packages=packages, channels=(to_call_r, from_call_w),
                              devices=devices)
        finally:
            os.close(to_call_r)
            os.close(from_call_w)
        measured = _Measured({}, [], [])
        try:
            if not isinstance(call, Call):
                measured.result = call
                return measured
            try:
                measured.ready = _reply(from_call_r)
                if measured.ready.get("built") is True:
                    measured.ready = {"stage": "run"}  # built: what ends it now is a failure to run
                    measured.ready = _reply(from_call_r)
                if measured.ready.get("ready") is True:
                    for index, step_seed in enumerate(seeds):
                        reps = 1 if index < CORRECTNESS_ROUNDS else self.trials
                        started = time.perf_counter()
                        write_value(to_call_w, {"op": "run", "seed": step_seed, "reps": reps})
                        answer = _reply(from_call_r)
                        measured.seconds.append(time.perf_counter() - started)
                        measured.digests.append(answer)
                        if "digest" not in answer:
                            break
                    write_value(to_call_w, {"op": "stop"})
            except (EOFError, OSError, ValueError):
                pass
            finally:
                os.close(to_call_w)
                to_call_w = -1
            measured.result = call.finish()
            return measured
        finally:
            if to_call_w >= 0:
                os.close(to_call_w)
            os.close(from_call_r)

    def evaluate(self, problem_id: str, ref_src: str, custom_src: str, seed: int) -> KernelResult:
        draw = random.Random(f"{problem_id}|{seed}|{time.time_ns()}")  # unknown to the candidate beforehand
        seeds = [draw.randrange(1 << 30) for _ in range(CORRECTNESS_ROUNDS + TIMING_ROUNDS)]
        reference = self._measure("reference", ref_src, "", seed, seeds)
        if not (reference.ready.get("ready") and len(reference.digests) == len(seeds)
                and all("digest" in d for d in reference.digests)):
            why = reference.ready.get("error") or _describe(reference.result) or "no digests"
            raise ReferenceFailed(f"the reference model of {problem_id} did not run: {why}")
        candidate = self._measure("candidate", ref_src, custom_src, seed, seeds)
        return judge(reference, candidate, self.trials)


class ReferenceFailed(RuntimeError):
    """The reference itself did not run (an infrastructure problem, never a score of 0)."""

    job_status = "infra_error"


def _reply(fd: int) -> dict[str, Any]:
    answer = read_value(fd, FRAME_BYTES)
    return answer if isinstance(answer, dict) else {"error": "a malformed reply"}


def _describe(result: SandboxResult | None) -> str:
    return result.describe() if result is not None and not result.ok else ""


def judge(reference: _Measured, candidate: _Measured, trials: int) -> KernelResult:
    """The verdict, from the digests and the job's own timings (trusted code, plain data)."""
    timed_out = candidate.result is not None and candidate.result.status == "timeout"
    if candidate.ready.get("ready") is not True:
        error = str(candidate.ready.get("error") or _describe(candidate.result) or "the candidate did not start")
        if candidate.ready.get("stage") != "run":
            return KernelResult(False, False, error=error)
        return KernelResult(True, False, error=f"timeout: {candidate.result.message}" if timed_out  # type: ignore[union-attr]
                            else f"runtime error: {error}")
    if timed_out:
        return KernelResult(True, False, error=f"timeout: {candidate.result.message}")  # type: ignore[union-attr]
    for index, expected in enumerate(reference.digests):
        if index >= len(candidate.digests):
            why = _describe(candidate.result) or "it stopped answering"
            return KernelResult(True, False, error=f"runtime error: {why}")
        answer = candidate.digests[index]
        if "digest" not in answer:
            return KernelResult(True, False, error=f"runtime error: {str(answer.get('error'))[:2000]}")
        if not isinstance(answer["digest"], dict):
            return KernelResult(True, False, error="runtime error: a malformed output summary")
        verdict = close(expected["digest"], answer["digest"], TOLERANCE)
        if verdict:
            return KernelResult(True, False, error=verdict)
    timed = slice(CORRECTNESS_ROUNDS, None)
    return KernelResult(True, True, runtime_ms=min(candidate.seconds[timed]) * 1000 / trials,
                        ref_runtime_ms=min(reference.seconds[timed]) * 1000 / trials)
