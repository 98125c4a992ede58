"""The sandbox's own record of refused system calls, and SysV IPC refused (issue 40, findings 5 and 7).

A call's seccomp filter hands every refused system call to the call's supervisor, which answers
``EPERM`` and counts it: the count reaches the job whether the code caught the error or not.
"""

from __future__ import annotations

import os
import sys
import textwrap

import pytest

from trace_bench.sandbox import SandboxLimits, SandboxResult, denials, run_sandboxed

pytestmark = [pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox targets Linux"),
              pytest.mark.usefixtures("strong")]

RUN = "tests.sandbox.targets:run_code"

# Every refusal caught and hidden: the function returns as if nothing had happened.
CAREFUL = textwrap.dedent('''
    import ctypes, os, socket
    tried = 0
    for _ in range(3):
        try:
            socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        except OSError:
            tried += 1
    try:
        os.fork()
    except OSError:
        tried += 1
    libc = ctypes.CDLL(None, use_errno=True)
    segment = libc.syscall(ctypes.c_long(SHMGET), ctypes.c_long(0), ctypes.c_long(256 << 20), ctypes.c_long(0o1600))
    result = {"tried": tried, "segment": segment, "errno": ctypes.get_errno()}
''')
SHMGET = {"x86_64": 29, "aarch64": 194}
SYSV = {"x86_64": {"shmget": (29, 0, 1 << 20, 0o1600), "msgget": (68, 0, 0o1600), "semget": (64, 0, 1, 0o1600)},
        "aarch64": {"shmget": (194, 0, 1 << 20, 0o1600), "msgget": (186, 0, 0o1600), "semget": (190, 0, 1, 0o1600)}}


def _machine() -> str:
    machine = os.uname().machine
    if machine not in SHMGET:
        pytest.skip(f"syscall numbers of x86_64 and aarch64 only, not {machine}")
    return machine


def test_refusals_the_code_catches_are_in_the_sandboxs_own_record() -> None:
    code = CAREFUL.replace("SHMGET", str(SHMGET[_machine()]))
    seen: list[denials.Denial] = []
    stop = denials.listen(seen.append)
    try:
        result = run_sandboxed(RUN, {"code": code}, SandboxLimits(wall_s=10))
    finally:
        stop()
    assert result.ok and result.value == {"tried": 4, "segment": -1, "errno": 1}, result  # EPERM each time
    assert result.refused == {"clone": 1, "shmget": 1, "socket": 3}
    assert result.cpu_s is not None and result.cpu_s > 0
    assert {(d.kind, d.caught, d.count) for d in seen} == {("network", True, 3), ("process", True, 1),
                                                           ("syscall", True, 1)}


def test_the_refusal_that_ends_a_call_is_counted_once() -> None:
    found = denials.denials_of("t:f", SandboxResult("denied", denial="network", refused={"socket": 2}))
    assert [(d.kind, d.caught, d.count) for d in found] == [("network", False, 1), ("network", True, 1)]
    assert [(d.kind, d.caught, d.count) for d in denials.denials_of("t:f", SandboxResult("ok"))] == []


@pytest.mark.parametrize("processes", [0, 2])
def test_sysv_shared_memory_queues_and_semaphores_are_refused(processes: int) -> None:
    """Finding 5: a SysV segment lives outside every rlimit of the call; 256 MB calls held 1.7 GB of the host."""
    calls = SYSV[_machine()]
    result = run_sandboxed(RUN, {"code": textwrap.dedent(f'''
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        result = {{}}
        for name, args in {calls!r}.items():
            ctypes.set_errno(0)
            value = libc.syscall(*[ctypes.c_long(a) for a in args])
            result[name] = [value, ctypes.get_errno()]
    ''')}, SandboxLimits(wall_s=10, max_processes=processes))
    assert result.ok, result
    assert result.value == {name: [-1, 1] for name in calls}  # EPERM: no segment, queue or semaphore set
    assert result.refused == {name: 1 for name in calls}
