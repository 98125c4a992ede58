"""KernelBench on this machine's GPU: candidates compiled and run in the sandbox, judged by the job.

Each evaluation is two sandboxed calls of :func:`.local_eval.serve_model`, one after the other so
they never share the GPU: the reference ``Model`` (a process with no candidate code) and the
candidate's ``ModelNew``.  The job drives both through the same steps on the same seeds, which it
draws itself: ``CORRECTNESS_ROUNDS`` single runs, then ``TIMING_ROUNDS`` runs of ``trials``
inputs each.  Every run sends its whole output to the job (:func:`.local_eval.send_output`).
Correctness is the job comparing the candidate's outputs with the reference's for the same seeds
(``allclose`` with atol = rtol = :data:`TOLERANCE`, as KernelBench), on every value of an output of
up to :data:`SAMPLED_VALUES` values, and on :data:`SAMPLED_VALUES` positions the job draws and never
sends for a larger one: an output of which a fraction ``e`` of the values is wrong then passes with
probability at most ``(1 - e) ** SAMPLED_VALUES``, below 1e-6 from ``e`` = 1.32e-5 on (the most a
model could save by leaving values out).  The runtime of a model is the shortest of its timed runs *as
the job's clock measures it*, from sending the seed to receiving the last byte of the output, divided
by ``trials``.  So nothing the candidate's process says about itself (a printed result line, a
timing, a verdict) is read: a faster score needs the right outputs, every one of them, for inputs
that did not exist before the clock started.

The GPU's device nodes (``/dev/nvidia*``) are passed into the sandbox where they exist; the calls
may start processes (compilers) and write their private ``/tmp`` (build directories), get no
network, no key and no host path but the read-only Python installation.  Address space is not
limited (CUDA reserves far more than it uses); time, processes and files are.
"""

from __future__ import annotations

import glob
import math
import os
import random
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from trace_bench._util.errors import TraceBenchError
from trace_bench.sandbox import SandboxLimits, SandboxResult
from trace_bench.sandbox.frames import read_value, write_value
from trace_bench.tasks.kernelbench.evaluation import KernelResult

TARGET = "trace_bench.tasks.kernelbench.local_eval:serve_model"
TOLERANCE = 1e-2
CORRECTNESS_ROUNDS = 3
TIMING_ROUNDS = 3
TRIALS = 20  # inputs per timed run, unless a task's eval_kwargs.trials or the server's --trials says
FRAME_BYTES = 8 << 20
GPU_PROCESSES = 64  # nvcc, ninja and the compilers they start
GPU_FILES_MB = 2048  # extension builds in the call's private /tmp
NO_ADDRESS_LIMIT_MB = 1 << 24  # 16 TB: CUDA maps far more address space than it uses
SAMPLED_VALUES = 1 << 20  # values of an output compared (all of them in a smaller output)
MAX_OUTPUT_VALUES = 1 << 32  # an output this large is not read (16 GiB of float32)
CHUNK_VALUES = 1 << 21  # an output is read through a buffer of this many values (8 MiB)


def gpu_devices() -> tuple[str, ...]:
    return tuple(sorted(glob.glob("/dev/nvidia*")))


@dataclass
class _Measured:
    ready: dict[str, Any]
    outputs: list[dict[str, Any]]  # per run: {"shape", "values": the values at the sampled positions} or {"error"}
    seconds: list[float]
    result: SandboxResult | None = None


@dataclass
class Sample:
    """The positions an evaluation compares, drawn by the job once it knows the output's size, never sent."""

    draw: random.Random
    size: int = -1
    positions: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))

    def of(self, size: int) -> np.ndarray:
        if self.size < 0:
            self.size = size
            if size <= SAMPLED_VALUES:
                self.positions = np.arange(size, dtype=np.int64)
            else:
                rng = np.random.default_rng(self.draw.getrandbits(64))
                self.positions = np.sort(rng.choice(size, size=SAMPLED_VALUES, replace=False)).astype(np.int64)
        return self.positions


def _read_into(fd: int, view: memoryview) -> None:
    while view:
        got = os.readv(fd, [view])
        if not got:
            raise EOFError("the call ended in the middle of an output")
        view = view[got:]


def read_output(fd: int, header: Any, sample: Sample, expected_shape: list[int] | None) -> dict[str, Any]:
    """Read one whole output from the call, keeping its values at the sample's positions (trusted)."""
    shape = header.get("shape") if isinstance(header, dict) else None
    if not (isinstance(shape, list) and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0
                                            for n in shape)):
        return {"error": "a malformed output header"}
    size = math.prod(shape)
    if expected_shape is not None and shape != expected_shape:
        return {"shape": shape}
    if header.get("bytes") != 4 * size or size > MAX_OUTPUT_VALUES:
        return {"error": f"an output of shape {tuple(shape)} announced as {header.get('bytes')!r} bytes"}
    positions = sample.of(size)
    values = np.empty(len(positions), dtype="<f4")
    buffer = np.empty(min(CHUNK_VALUES, max(size, 1)), dtype="<f4")
    start = taken = 0
    while start < size:
        count = min(len(buffer), size - start)
        _read_into(fd, memoryview(buffer[:count].data).cast("B"))
        end = int(np.searchsorted(positions, start + count, side="left"))
        values[taken:end] = buffer[positions[taken:end] - start]
        taken, start = end, start + count
    return {"shape": shape, "values": values}


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

    def _measure(self, role: str, ref_src: str, custom_src: str, seed: int, seeds: list[int],
                 sample: Sample, expected_shape: list[int] | None = None) -> _Measured:
        """Run one model through the steps; the job's clock times each step to the last byte of its output."""
        from trace_bench.sandbox.runner import Call, start_call

        to_call_r, to_call_w = os.pipe()
        from_call_r, from_call_w = os.pipe()
        payload = {"role": role, "ref_arch_src": ref_src, "custom_src": custom_src, "seed": seed,
                   "device": self.device}
        try:
            packages, devices = self._view()
            call = start_call(TARGET, payload, self._limits(), packages=packages, channels=(to_call_r, from_call_w),
                              devices=devices, candidate=role == "candidate")
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
                        if "output" in answer:
                            answer = read_output(from_call_r, answer["output"], sample, expected_shape)
                        measured.seconds.append(time.perf_counter() - started)
                        measured.outputs.append(answer)
                        if "values" not in answer:
                            break
                        expected_shape = answer["shape"]
                    write_value(to_call_w, {"op": "stop"})
            except (EOFError, OSError, ValueError):
                pass
            finally:
                os.close(to_call_w)
                to_call_w = -1
                os.close(from_call_r)  # a call still writing an output nobody reads ends now
                from_call_r = -1
            measured.result = call.finish()
            return measured
        finally:
            if to_call_w >= 0:
                os.close(to_call_w)
            if from_call_r >= 0:
                os.close(from_call_r)

    def evaluate(self, problem_id: str, ref_src: str, custom_src: str, seed: int) -> KernelResult:
        draw = random.Random(f"{problem_id}|{seed}|{time.time_ns()}|{os.urandom(8).hex()}")  # unknown to the candidate
        seeds = [draw.randrange(1 << 30) for _ in range(CORRECTNESS_ROUNDS + TIMING_ROUNDS)]
        sample = Sample(draw)
        reference = self._measure("reference", ref_src, "", seed, seeds, sample)
        if not (reference.ready.get("ready") and len(reference.outputs) == len(seeds)
                and all("values" in d for d in reference.outputs)):
            why = reference.ready.get("error") or next((str(d.get("error")) for d in reference.outputs
                                                        if "error" in d), "") or _describe(reference.result) \
                or "no outputs"
            raise ReferenceFailed(f"the reference model of {problem_id} did not run: {why}")
        candidate = self._measure("candidate", ref_src, custom_src, seed, seeds, sample,
                                  expected_shape=reference.outputs[0]["shape"])
        return judge(reference, candidate, self.trials)


class ReferenceFailed(TraceBenchError, RuntimeError):
    """The reference itself did not run (an infrastructure problem, never a score of 0)."""

    job_status = "infra_error"


def _reply(fd: int) -> dict[str, Any]:
    answer = read_value(fd, FRAME_BYTES)
    return answer if isinstance(answer, dict) else {"error": "a malformed reply"}


def _describe(result: SandboxResult | None) -> str:
    return result.describe() if result is not None and not result.ok else ""


def close(expected: dict[str, Any], got: dict[str, Any], tolerance: float) -> str:
    """"" when the candidate's output matches the reference's at every compared position, else why not."""
    if list(got.get("shape") or []) != list(expected["shape"]):
        return f"output shape {tuple(got.get('shape') or ())} != expected {tuple(expected['shape'])}"
    if not isinstance(got.get("values"), np.ndarray) or got["values"].shape != expected["values"].shape:
        return "the output was not sent whole"
    want, have = expected["values"].astype(np.float64), got["values"].astype(np.float64)
    if not np.allclose(have, want, atol=tolerance, rtol=tolerance):
        with np.errstate(invalid="ignore"):
            difference = np.abs(have - want)
        wrong = int(np.count_nonzero(~np.isclose(have, want, atol=tolerance, rtol=tolerance)))
        worst = float(np.nanmax(difference)) if np.any(np.isfinite(difference)) else math.inf
        return f"wrong result: max abs difference {worst:.4g} ({wrong} of {len(want)} compared values differ)"
    return ""


def judge(reference: _Measured, candidate: _Measured, trials: int) -> KernelResult:
    """The verdict, from the outputs and the job's own timings (trusted code, plain data)."""
    timed_out = candidate.result is not None and candidate.result.status == "timeout"
    if candidate.ready.get("ready") is not True:
        error = str(candidate.ready.get("error") or _describe(candidate.result) or "the candidate did not start")
        if candidate.ready.get("stage") != "run":
            return KernelResult(False, False, error=error)
        return KernelResult(True, False, error=f"timeout: {candidate.result.message}" if timed_out  # type: ignore[union-attr]
                            else f"runtime error: {error}")
    if timed_out:
        return KernelResult(True, False, error=f"timeout: {candidate.result.message}")  # type: ignore[union-attr]
    for index, expected in enumerate(reference.outputs):
        if index >= len(candidate.outputs):
            why = _describe(candidate.result) or "it stopped answering"
            return KernelResult(True, False, error=f"runtime error: {why}")
        answer = candidate.outputs[index]
        if "error" in answer:
            return KernelResult(True, False, error=f"runtime error: {str(answer.get('error'))[:2000]}")
        verdict = close(expected, answer, TOLERANCE)
        if verdict:
            return KernelResult(True, False, error=verdict)
    timed = slice(CORRECTNESS_ROUNDS, None)
    return KernelResult(True, True, runtime_ms=min(candidate.seconds[timed]) * 1000 / trials,
                        ref_runtime_ms=min(reference.seconds[timed]) * 1000 / trials)
