"""Start bubblewrap as an unprivileged user when the job runs as root.

Why: the kernel never applies RLIMIT_NPROC to the host's uid 0, in any user namespace, and a
sandbox whose processes belong to root could read root-owned files it is handed.  So a root
job starts the sandbox as an unused uid (:func:`.policy.sandbox_uid`).  That uid cannot
traverse ``/root``, where the Python installation often lives (pyenv, uv), so this launcher,
still root, first bind-mounts every path the sandbox will see into a staging tmpfs, in a
private mount namespace of its own (nothing changes on the host), then drops to the uid and
executes bubblewrap on the staged copies.

Run as ``python -S -c "from trace_bench.sandbox.launcher import main; main()" SPEC_JSON``.
Exit codes below 10 mean the staging failed (the caller falls back to running bubblewrap
directly); everything after ``exec`` is bubblewrap's.
"""

from __future__ import annotations

import json
import os
import sys

from trace_bench.sandbox import linux

STAGE = "/tmp"  # any existing directory: the tmpfs covers it in our mount namespace only


def stage(sources: list[str]) -> list[str]:
    """Bind each source under the staging tmpfs; returns the staged paths, in order."""
    linux.unshare(linux.CLONE_NEWNS)
    linux.mount("none", "/", None, linux.MS_REC | linux.MS_PRIVATE)
    # opened in our namespace (a bind source must be) and before /tmp is covered (sources may be there)
    handles = [os.open(path, os.O_PATH) for path in sources]
    is_dir = [os.path.isdir(path) for path in sources]
    linux.mount("tmpfs", STAGE, "tmpfs", linux.MS_NOSUID | linux.MS_NODEV, "mode=0755,size=64k")
    staged = []
    for index, (handle, directory) in enumerate(zip(handles, is_dir, strict=True)):
        target = os.path.join(STAGE, str(index))
        if directory:
            os.mkdir(target)
        else:
            os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o644))
        linux.mount(f"/proc/self/fd/{handle}", target, None, linux.MS_BIND | linux.MS_REC)
        os.close(handle)
        staged.append(target)
    return staged


def main() -> None:
    spec = json.loads(sys.argv[1])
    try:
        staged = stage(spec["sources"])
        os.setgroups([])
        os.setgid(spec["gid"])
        os.setuid(spec["uid"])
    except OSError as exc:
        print(f"trace-bench sandbox launcher: {exc}", file=sys.stderr)
        sys.exit(3)
    argv = [staged[int(part[5:])] if part.startswith("@src:") else part for part in spec["argv"]]
    os.execv(argv[0], argv)
