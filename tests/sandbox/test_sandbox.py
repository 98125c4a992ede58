"""The sandbox runs a target on plain data and reports how it ended: values, errors, limits, output."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.waiting import PATIENCE_S
from trace_bench.sandbox import SandboxLimits, capabilities, run_sandboxed, server

pytestmark = [pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox targets Linux"),
              pytest.mark.usefixtures("strong")]

RUN = "tests.sandbox.targets:run_code"


def run(code: str, **limits: object):
    return run_sandboxed(RUN, {"code": code}, SandboxLimits(**limits))  # type: ignore[arg-type]


def test_plain_data_goes_in_and_comes_back() -> None:
    import numpy as np

    payload = {"x": [1, 2.5, None, True], "t": (1, "a"), "arr": np.arange(6, dtype=np.int32).reshape(2, 3)}
    result = run_sandboxed("tests.sandbox.targets:echo", payload)
    assert result.ok and result.status == "ok" and result.mode == "bwrap"
    assert result.value["x"] == [1, 2.5, None, True] and result.value["t"] == (1, "a")
    assert result.value["arr"].dtype == np.int32 and result.value["arr"].tolist() == [[0, 1, 2], [3, 4, 5]]


def test_exception_is_error_with_traceback() -> None:
    result = run("def f():\n    return 1 / 0\nf()")
    assert result.status == "error" and not result.ok
    assert result.error_type == "ZeroDivisionError"
    assert "division by zero" in result.message and "ZeroDivisionError" in result.traceback


def test_infinite_loop_hits_the_wall_clock_limit() -> None:
    result = run("while True:\n    pass", wall_s=1.0)
    assert result.status == "timeout" and "wall-clock" in result.message


def test_cpu_limit_gives_timeout() -> None:
    # the wall-clock limit is far away: the message shows which limit ended the loop, on any load
    result = run("while True:\n    pass", wall_s=120.0, cpu_s=1.0)
    assert result.status == "timeout"
    assert "CPU time limit of 1s exceeded" in result.message, result


def test_memory_limit_gives_oom() -> None:
    assert run("x = bytearray(10 * 1024 ** 3)", memory_mb=256).status == "oom"
    numpy_result = run("import numpy as np\nresult = float(np.ones(10 * 1024 ** 3 // 8).sum())", memory_mb=256)
    assert numpy_result.status == "oom", numpy_result


def test_processes_are_refused_by_default_and_threads_count_against_the_budget() -> None:
    assert run("import subprocess\nsubprocess.run(['true'])").status == "denied"
    assert run("import os\nos.fork()").status == "denied"
    caught = run("import os\ntry:\n    os.fork()\nexcept PermissionError:\n    result = 'survived'")
    assert caught.ok and caught.value == "survived"
    threads = "import threading\nt = threading.Thread(target=print)\nt.start()\nt.join()\nresult = 'thread ran'"
    assert run(threads, max_processes=1).value == "thread ran"


def test_process_budget_allows_that_many_processes_at_once() -> None:
    code = ("import subprocess\nfirst = subprocess.run(['true']).returncode\n"
            "children = []\ntry:\n    for _ in range(5):\n        children.append(subprocess.Popen(['sleep', '30']))\n"
            "except OSError:\n    pass\nresult = [first, len(children)]")
    assert run(code, max_processes=2, wall_s=30).value == [0, 2]


def bound_under_tmp() -> list[str]:
    """Names in /tmp that the sandbox binds read-only on top of a call's private tmpfs: the
    checkout's packages when the checkout itself lives under /tmp (a CI clone in /tmp/...)."""
    from trace_bench.sandbox import policy

    dests = [bind.dest for bind in policy.sandbox_view(["tests"]).all_binds if policy.under_call_tmp(bind.dest)]
    return sorted({dest.split(os.sep)[2] for dest in dests})


def test_private_tmp_working_directory_and_own_pid_namespace() -> None:
    first = run_sandboxed("tests.sandbox.targets:where_am_i", {})
    assert first.ok, first
    fresh = sorted(["scratch.txt", *bound_under_tmp()])
    assert first.value["cwd"] == "/tmp" and first.value["tmp"] == fresh
    assert first.value["pid"] == 1 and first.value["processes"] == ["1"]
    assert first.value["netns"] != os.readlink("/proc/self/ns/net")
    assert first.value["uid"] != 0 or os.geteuid() != 0  # a root job's sandbox runs as another uid
    second = run_sandboxed("tests.sandbox.targets:where_am_i", {})
    assert second.value["tmp"] == fresh  # nothing left by the first call


def test_file_size_limit_applies_to_the_private_tmp() -> None:
    result = run("with open('big.bin', 'wb') as fh:\n    fh.write(b'x' * (3 * 1024 * 1024))", file_size_mb=1)
    assert result.status == "error" and result.error_type == "OSError", result
    assert run("with open('small.bin', 'wb') as fh:\n    fh.write(b'x' * 1000)\nresult = 'ok'").value == "ok"


def test_output_is_captured_as_a_bounded_tail() -> None:
    result = run("print('hello')\nfor i in range(20000):\n    print('line', i)\nresult = 1")
    assert result.ok and result.stdout.endswith("line 19999\n") and len(result.stdout) < 10_000
    failed = run("import os\nprint('printed')\nos.write(2, b'raw')\nraise ValueError('no')")  # every byte written
    assert failed.status == "error" and failed.stdout.endswith("printed\nraw")


def test_crash_without_result_and_values_that_are_not_plain_data() -> None:
    assert run("import os\nos.abort()").status == "crash"
    assert run("import os\nos._exit(0)").status == "crash"
    bad = run_sandboxed("tests.sandbox.targets:not_plain_data", {})
    assert bad.status == "error" and "not plain data" in bad.message


def test_caller_errors_raise() -> None:
    with pytest.raises(ValueError):
        run_sandboxed("no_colon_here", {})
    with pytest.raises(TypeError, match="not plain data"):
        run_sandboxed("tests.sandbox.targets:echo", {"f": print})
    missing = run_sandboxed("tests.sandbox.targets:does_not_exist", {})
    assert missing.status == "error" and missing.error_type == "AttributeError"


def test_usable_from_four_threads_at_once() -> None:
    def one(i: int) -> object:
        return run(f"result = {i} * {i}").value

    with ThreadPoolExecutor(max_workers=4) as pool:
        assert list(pool.map(one, range(12))) == [i * i for i in range(12)]


def test_usable_from_a_forkserver_child() -> None:
    from tests.sandbox.targets import sandbox_from_child

    with multiprocessing.get_context("forkserver").Pool(1) as pool:
        assert pool.apply(sandbox_from_child, ("result = 7",)) == ("ok", 7)


_FORKED_CHILD = """
import multiprocessing, sys
from tests.sandbox.targets import sandbox_from_child
with multiprocessing.get_context("fork").Pool(1) as pool:
    print(pool.apply(sandbox_from_child, ("result = 7",)))
"""


def test_usable_from_a_forked_child() -> None:
    """A user's program that forks workers (the default start method on Linux before 3.14) can use
    the sandbox from them. The fork happens in a fresh interpreter, never in the pytest process,
    whose threads from earlier tests would leave held locks in the child."""
    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(repo), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", _FORKED_CHILD], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=PATIENCE_S)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "('ok', 7)"


def test_killed_sandbox_is_replaced() -> None:
    assert run("result = 1").ok
    handle = server.get_zygote("bwrap", frozenset({"tests"}))
    os.kill(handle.proc.pid, signal.SIGKILL)
    handle.proc.wait(timeout=30)
    assert run("result = 2").value == 2


def test_limits_are_validated() -> None:
    assert SandboxLimits(wall_s=2).effective_cpu_s == 2.0
    assert SandboxLimits(wall_s=2, cpu_s=0.5).effective_cpu_s == 0.5
    for bad in ({"wall_s": 0}, {"wall_s": float("inf")}, {"memory_mb": 0}, {"max_processes": -1}, {"cpu_s": -1.0}):
        with pytest.raises(ValueError):
            SandboxLimits(**bad)  # type: ignore[arg-type]


def test_capabilities_name_the_isolation() -> None:
    info = capabilities()
    assert info["mode"] == "bwrap" and info["network_namespace"] and info["numpy"]
