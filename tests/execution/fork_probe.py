"""What a job process sees of the template it was forked from (run by tests/execution/test_forked_template.py)."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from pathlib import Path


def report(path: str) -> None:
    """Write what the job sees: the marker the driver set on pydantic before starting the template
    (present only where the template was forked from the driver), its hashes, its signal handlers."""
    pydantic = sys.modules.get("pydantic")
    template = Path(f"/proc/{os.getppid()}/cmdline").read_bytes().split(b"\0")
    Path(path).write_text(json.dumps({
        "marker": getattr(pydantic, "_fork_probe_marker", None),
        "hash_randomization": sys.flags.hash_randomization,
        "hash": hash("trace-bench"),
        "sigint_default": signal.getsignal(signal.SIGINT) is signal.default_int_handler,
        "sigterm_default": signal.getsignal(signal.SIGTERM) == signal.SIG_DFL,
        "template_spawned": b"multiprocessing.forkserver" in b" ".join(template),
        "open_files": sorted(_targets()),
    }), encoding="utf-8")


def _targets() -> set[str]:
    found = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            found.add(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:  # the listing's own descriptor
            pass
    return found


def main(out: str) -> None:
    """The driver's side: import pydantic, mark it, hold a descriptor and a signal handler a fresh
    interpreter has not, start the template, run one job of :func:`report`."""
    # SIGINT as an interpreter started from a terminal has it, whatever this process inherited (a test
    # worker started in the background, or by a test that ignored it, passes SIG_IGN on)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import pydantic

    from trace_bench.execution.local import job_context, stop_job_template, warm_up

    pydantic._fork_probe_marker = os.getpid()
    held = os.open(out + ".held", os.O_WRONLY | os.O_CREAT)
    signal.signal(signal.SIGTERM, lambda *_: None)
    release = threading.Event()
    if os.environ.get("FORK_PROBE_THREAD"):  # a second thread: no fork (it would not be copied)
        threading.Thread(target=release.wait).start()
    warm_up(["pydantic"])
    release.set()
    process = job_context().Process(target=report, args=(out,))
    process.start()
    process.join(120)
    os.close(held)
    stop_job_template()
    sys.exit(process.exitcode)


if __name__ == "__main__":
    main(sys.argv[1])
