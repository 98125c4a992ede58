"""The Ray executor: warm long-lived workers, a fresh process per job.

One Ray actor per slot (``max_workers`` of them, spread over the cluster's nodes) holds the same
warm ``forkserver`` template as the local pool (opto and the trainer stack imported once) and runs
each job it is handed through a one-slot :class:`~trace_bench.execution.local.LocalExecutor`: a
fresh forked process with its own process group, wall-clock timeout and memory limit, exactly as
on one machine.  A job writes into a scratch directory on its node and the actor returns every
file with its record, so only the driver writes the run directory and no shared filesystem is
needed.  An actor that dies (node lost, killed) is replaced; its job is retried up to
``max_retries`` times, then recorded as ``failed: worker lost``.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from trace_bench._util.errors import TraceBenchError
from trace_bench.execution.job_process import Finished, JobBody, JobLaunch

# A job's own timeout is enforced inside the actor; the driver kills an actor only when it has not
# answered this long after the job's timeout (a stuck node), and then records a timeout.
_ACTOR_GRACE_S = 30.0


class RayConnectionError(TraceBenchError, RuntimeError):
    """The Ray cluster named by the config or ``--ray-address`` could not be reached."""


class JobSlot:
    """A Ray actor (wrapped by ``ray.remote`` on first use): one warm template, one job at a time."""

    def __init__(self, preload: Sequence[str]) -> None:
        from trace_bench.execution.local import warm_up

        self.preload = tuple(preload)
        warm_up(self.preload)

    def node_id(self) -> str:
        import ray

        return str(ray.get_runtime_context().get_node_id())

    def run(self, body: JobBody, launch: JobLaunch) -> dict[str, Any]:
        import shutil
        import tempfile

        from trace_bench.execution.local import LocalExecutor
        from trace_bench.store.job_store import JobStore

        scratch = Path(tempfile.mkdtemp(prefix="trace-bench-job-"))
        try:
            local = replace(launch, job_dir=str(scratch / launch.job_id))
            executor = LocalExecutor(1, body, preload=self.preload)
            with _no_main_module():
                executor.submit(local)
            done: list[Finished] = []
            while not done:
                done = executor.poll(5.0)
            ended = done[0]
            return {"record": ended.record, "exitcode": ended.exitcode, "killed": ended.killed_reason,
                    "error": ended.error, "files": JobStore(local.job_dir).files(), "node_id": self.node_id()}
        finally:
            shutil.rmtree(scratch, ignore_errors=True)


def _probe(address: str) -> None:
    """Fail at once for a ``host:port`` nobody listens on (``ray.init`` would retry for minutes)."""
    import socket

    if address == "auto" or "://" in address or ":" not in address:
        return
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=10):
            pass
    except (OSError, ValueError) as exc:
        raise RayConnectionError(f"cannot connect to the Ray cluster at {address}: {exc}") from None


@contextlib.contextmanager
def _no_main_module() -> Iterator[None]:
    """Hide the Ray worker's ``__main__`` while a job process starts: multiprocessing would make
    every forked job re-run Ray's worker script as ``__mp_main__`` (importing Ray: seconds per job)."""
    main = sys.modules["__main__"]
    saved: dict[str, Any] = {name: main.__dict__[name] for name in ("__file__", "__spec__") if name in main.__dict__}
    main.__dict__.pop("__file__", None)
    main.__dict__["__spec__"] = None
    try:
        yield
    finally:
        main.__dict__.update(saved)


def init_ray(address: str | None, num_cpus: int | None = None) -> Any:
    """Connect to (or start) Ray; a cluster that cannot be reached is a :class:`RayConnectionError`.

    Without an address (none given, no ``RAY_ADDRESS``) the run starts a private local cluster.
    Plain ``ray.init()`` would instead join the cluster started last on this machine (the one
    recorded in /tmp/ray by ``ray start`` or a test's cluster): a run that joined another
    process's cluster lost every job when that cluster shut down."""
    import os

    import ray

    address = address or os.environ.get("RAY_ADDRESS") or None
    if not ray.is_initialized():
        options: dict[str, Any] = {"ignore_reinit_error": True, "include_dashboard": False, "log_to_driver": False,
                                   "configure_logging": False}
        if address:
            _probe(address)
            options["address"] = address
        else:
            options["address"] = "local"
            if num_cpus:
                options["num_cpus"] = num_cpus
        try:
            ray.init(**options)
        except Exception as exc:  # noqa: BLE001 - ray raises bare Exception for a node that did not start
            where = f"at {address}" if address else "(a local one)"
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise RayConnectionError(f"cannot connect to the Ray cluster {where}: {first[:300]}") from None
    return ray


def death_reason(exc: BaseException, limit: int = 400) -> str:
    """Ray's own account of why an actor died, on one line.

    An ``ActorDiedError`` opens with the same sentence whatever happened, then the actor's ids, and
    only then the cause ("Worker exit type: NODE_OUT_OF_MEMORY ...", "... killed by SIGKILL"): the
    console summary shows one line per task, so the cause goes first and the boilerplate goes."""
    lines = [line.strip() for line in str(exc).splitlines()]
    generic = "The actor died unexpectedly before finishing this task."
    cause = [line for line in lines if line and line != generic and not _is_actor_field(line)]
    text = " ".join(cause) or (lines[0] if lines else type(exc).__name__)
    return text[:limit]


def _is_actor_field(line: str) -> bool:
    name, sep, _ = line.partition(":")
    return bool(sep) and name in {"class_name", "actor_id", "pid", "name", "namespace", "ip"}


@dataclass
class _Busy:
    actor: Any
    ref: Any
    launch: JobLaunch
    started: float
    tries: int
    killed: str | None = None


class RayExecutor:
    """Same interface as :class:`~trace_bench.execution.local.LocalExecutor`."""

    def __init__(self, max_workers: int, body: JobBody, *, address: str | None = None, num_cpus: float = 1.0,
                 num_gpus: float = 0.0, memory_mb: int | None = None, max_retries: int = 0,
                 preload: Sequence[str] = ()) -> None:
        self.ray = init_ray(address, num_cpus=None)
        options: dict[str, Any] = {"num_cpus": num_cpus, "num_gpus": num_gpus, "max_restarts": 0,
                                   "scheduling_strategy": "SPREAD"}
        if memory_mb:
            options["memory"] = int(memory_mb) * 1024 * 1024
        self.actor_class = self.ray.remote(JobSlot).options(**options)
        self.body = body
        self.preload = tuple(preload)
        self.max_workers = max(1, int(max_workers))
        self.max_retries = max_retries
        self.idle: list[Any] = []
        self.actors = 0
        self.running: dict[str, _Busy] = {}

    @property
    def free_slots(self) -> int:
        return self.max_workers - len(self.running)

    def _actor(self) -> Any:
        if self.idle:
            return self.idle.pop()
        self.actors += 1
        return self.actor_class.remote(self.preload)

    def submit(self, launch: JobLaunch, tries: int = 0) -> None:
        actor = self._actor()
        ref = actor.run.remote(self.body, launch)
        self.running[launch.job_id] = _Busy(actor, ref, launch, time.monotonic(), tries)

    def _drop(self, actor: Any) -> None:
        self.actors -= 1
        try:
            self.ray.kill(actor, no_restart=True)
        except Exception:  # noqa: BLE001 - an actor that is already gone
            pass

    def poll(self, block_s: float = 0.5) -> list[Finished]:
        if not self.running:
            return []
        refs = {busy.ref: job_id for job_id, busy in self.running.items()}
        ready, rest = self.ray.wait(list(refs), num_returns=1, timeout=block_s)
        if ready and rest:  # everything else that is done too, without waiting
            ready += self.ray.wait(rest, num_returns=len(rest), timeout=0)[0]
        finished: list[Finished] = []
        now = time.monotonic()
        for ref in ready:
            job_id = refs[ref]
            busy = self.running.pop(job_id)
            wall = now - busy.started
            try:
                value = self.ray.get(ref)
            except Exception as exc:  # the actor died (node lost, killed) or could not run the job
                self._drop(busy.actor)
                lost = type(exc).__name__
                if busy.killed is None and busy.tries < self.max_retries:
                    self.submit(busy.launch, tries=busy.tries + 1)
                    continue
                finished.append(Finished(job_id, None, None, busy.killed, wall,
                                         error=None if busy.killed else f"worker lost: {lost}: {death_reason(exc)}"))
                continue
            self.idle.append(busy.actor)
            finished.append(Finished(job_id, value["record"], value["exitcode"], value["killed"], wall,
                                     files=value["files"], error=value.get("error"), node_id=value.get("node_id")))
        for busy in self.running.values():
            timeout = busy.launch.timeout_s
            if timeout and busy.killed is None and now - busy.started > timeout + _ACTOR_GRACE_S:
                busy.killed = "timeout"
                self._drop(busy.actor)
        return finished

    def kill_all(self, reason: str = "interrupted") -> None:
        """Kill every busy actor (its template and job processes die with it)."""
        for busy in self.running.values():
            if busy.killed is None:
                busy.killed = reason
                self._drop(busy.actor)

    def shutdown(self) -> None:
        for actor in self.idle:
            self._drop(actor)
        self.idle.clear()
