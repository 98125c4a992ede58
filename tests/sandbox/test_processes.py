"""Calls with a process budget: what an evaluator's processes may use, and who may report.

A task folder's evaluator may start processes (``max_processes``), and evaluators of the field use
``multiprocessing`` pools for that: their semaphores and queues need a writable ``/dev/shm``.  And
only the call's first process reports: a candidate that forks and lets both processes return from
the target must neither break the result nor choose it from the child.
"""

from __future__ import annotations

import sys
import textwrap

import pytest

from trace_bench.sandbox import SandboxLimits, SandboxResult, denials, policy, run_sandboxed

pytestmark = [pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox targets Linux"),
              pytest.mark.usefixtures("strong")]

RUN = "tests.sandbox.targets:run_code"


def run(code: str, **limits: object) -> SandboxResult:
    return run_sandboxed(RUN, {"code": textwrap.dedent(code)}, SandboxLimits(**limits))  # type: ignore[arg-type]


POOLS = '''
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    with multiprocessing.Pool(2) as pool:
        squares = pool.starmap(pow, [(x, 2) for x in range(6)])
    with ProcessPoolExecutor(max_workers=2) as executor:
        absolute = list(executor.map(abs, [-3, -2, -1]))
    lock = multiprocessing.Lock()
    with lock:
        locked = True
    queue = multiprocessing.Queue()
    worker = multiprocessing.Process(target=queue.put, args=("from a child",))
    worker.start()
    message = queue.get(timeout=60)
    worker.join()
    result = [squares, absolute, locked, message]
'''


def test_multiprocessing_pools_locks_and_queues_work_in_a_call_with_a_process_budget() -> None:
    """QA F4: ``multiprocessing.Pool`` in an evaluator failed with EROFS (``/dev/shm`` read-only)."""
    result = run(POOLS, max_processes=8, wall_s=120)
    assert result.ok, result
    assert result.value == [[0, 1, 4, 9, 16, 25], [3, 2, 1], True, "from a child"]


def test_the_shared_memory_directory_is_private_and_bounded_like_the_tmp() -> None:
    writes = '''
        import os
        before = sorted(os.listdir("/dev/shm"))
        with open("/dev/shm/left-behind", "w") as fh:
            fh.write("x")
        try:
            with open("/dev/shm/big", "wb") as fh:
                for _ in range(8):
                    fh.write(b"x" * (1 << 20))
                    fh.flush()
            too_big = None
        except OSError as exc:
            too_big = exc.errno
        os.unlink("/dev/shm/big")
        made = 0
        try:
            while made < 100_000:
                os.mkdir(f"/dev/shm/d{made}")
                made += 1
        except OSError as exc:
            too_many = exc.errno
        result = [before, too_big, made, too_many]
    '''
    result = run(writes, max_processes=2, file_size_mb=4, wall_s=120)
    assert result.ok, result
    before, too_big, made, too_many = result.value
    assert before == []
    assert too_big in (27, 28)  # EFBIG (the file-size rlimit) or ENOSPC (the tmpfs is full)
    assert made < policy.CALL_TMP_INODES and too_many == 28  # ENOSPC: the inode bound
    again = run("import os\nresult = os.listdir('/dev/shm')", max_processes=2)
    assert again.ok and again.value == []  # nothing left by the earlier call


def test_a_call_without_a_process_budget_keeps_a_read_only_shared_memory_directory() -> None:
    result = run("import os\nresult = os.access('/dev/shm', os.W_OK)")
    assert result.ok and result.value is False
    assert run("open('/dev/shm/planted', 'w')").denial == "file"


def test_a_read_only_error_of_the_evaluators_own_machinery_is_not_a_denial() -> None:
    """QA F4: the EROFS of ``multiprocessing.Lock()`` was counted as the candidate's escape attempt."""
    before = denials.counts()
    result = run("import multiprocessing\nmultiprocessing.Lock()")
    assert (result.status, result.denial) == ("error", None), result
    assert result.error_type == "OSError" and "/dev/shm" in result.message and "max_processes" in result.message
    assert denials.counts() == before


# A forked child returns from the target as its parent does; each would write a result.
BOTH_RETURN = '''
    import os
    pid = os.fork()
    if pid == 0:
        result = "child"
    else:
        os.waitpid(pid, 0)
        result = "parent"
'''


def test_a_forked_child_that_returns_from_the_target_does_not_report() -> None:
    """QA F5: both processes wrote a result, and the call failed with CorruptResult."""
    result = run(BOTH_RETURN, max_processes=4, wall_s=60)
    assert (result.status, result.value) == ("ok", "parent"), result
    loop = run('''
        import os
        for _ in range(10_000):
            try:
                os.fork()
            except OSError:
                break
        result = os.getpid() == 1
    ''', max_processes=4, wall_s=60)
    assert (loop.status, loop.value) == ("ok", True), loop


def test_a_child_cannot_put_its_result_in_place_of_its_parents() -> None:
    """QA F5: a child that writes a crafted result, then kills its parent (or the parent ends without
    reporting), must not leave its data as the call's result."""
    killed = run('''
        import os, signal
        pid = os.fork()
        if pid == 0:
            os.kill(os.getppid(), signal.SIGKILL)
            result = "forged"
        else:
            os.waitpid(pid, 0)
            result = "honest"
    ''', max_processes=4, wall_s=60)
    assert killed.value != "forged" and killed.status in ("ok", "crash"), killed
    assert killed.value == "honest" or killed.status == "crash"
    silent_parent = run('''
        import os
        pid = os.fork()
        if pid == 0:
            result = "forged"
        else:
            os.waitpid(pid, 0)
            os._exit(0)
    ''', max_processes=4, wall_s=60)
    assert (silent_parent.status, silent_parent.value) == ("crash", None), silent_parent
    raw = run('''
        import os
        from trace_bench.sandbox import codec
        pid = os.fork()
        if pid == 0:  # a crafted message into every pipe it inherited but stdout/stderr: the result pipe among them
            crafted = codec.encode({"ok": True, "value": "forged"})
            for name in os.listdir("/proc/self/fd"):
                if int(name) > 2 and os.readlink(f"/proc/self/fd/{name}").startswith("pipe:"):
                    try:
                        os.write(int(name), crafted)
                    except OSError:
                        pass
            os._exit(0)
        os.waitpid(pid, 0)
        result = "honest"
    ''', max_processes=4, wall_s=60)
    assert raw.value != "forged" and raw.error_type == "CorruptResult", raw
