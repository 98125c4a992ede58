"""Issue 25's sandbox-level findings: what a call inherits, what it can see, what it costs the job.

Each test names the finding it replays.  Calls run the code they are given
(``tests.sandbox.targets:run_code``), as an evaluator runs a candidate.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import textwrap
import threading
import uuid
from pathlib import Path

import pytest

from trace_bench.sandbox import SandboxLimits, SandboxResult, policy, run_sandboxed, server

pytestmark = [pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox targets Linux"),
              pytest.mark.usefixtures("strong")]

RUN = "tests.sandbox.targets:run_code"
REPO = Path(__file__).resolve().parents[2]

# Looks for a marker everywhere a call's process could hold what an earlier call carried (its own
# memory, heap and stacks, through /proc/self/mem; the frames of its thread; the objects the
# collector tracks) and reports the 32 characters after each hit.  The secret itself never enters
# this call: only its prefix does.
SEARCH = textwrap.dedent('''
    import gc, re, sys
    marker = payload["marker"]
    pattern = re.compile(re.escape(marker.encode()) + rb"([0-9a-f]{32})")
    found = set()
    with open("/proc/self/maps") as maps, open("/proc/self/mem", "rb", 0) as mem:
        for line in maps:
            fields = line.split()
            start, end = (int(x, 16) for x in fields[0].split("-"))
            if "r" not in fields[1] or end - start > 1 << 30:
                continue
            try:
                mem.seek(start)
                found.update(m.group(1).decode() for m in pattern.finditer(mem.read(end - start)))
            except (OSError, ValueError, OverflowError):
                pass
    text = re.compile(re.escape(marker) + r"([0-9a-f]{32})")
    frame = sys._getframe()
    while frame is not None:
        found.update(text.findall(repr(frame.f_locals)))
        frame = frame.f_back
    for obj in gc.get_objects():
        if isinstance(obj, (dict, list, tuple)):
            found.update(text.findall(repr(obj)[:100000]))
    result = sorted(found)
''')


def run(code: str, payload: dict | None = None, **limits: object) -> SandboxResult:
    return run_sandboxed(RUN, {"code": textwrap.dedent(code), **(payload or {})},
                         SandboxLimits(**limits))  # type: ignore[arg-type]


def test_a_call_holds_nothing_of_an_earlier_calls_payload() -> None:
    """Finding 2: spares forked from a zygote that had relayed a checker's request held its hidden
    tests on their heap, and serve()'s frame with the previous request."""
    marker, hidden = "hidden-test-", uuid.uuid4().hex
    for _ in range(3):  # enough calls that later spares were forked after the secret went through
        tests = [marker + hidden] * 50
        assert run_sandboxed("tests.sandbox.targets:echo", {"tests": tests}).value == {"tests": tests}
    result = run(SEARCH, {"marker": marker}, wall_s=60, memory_mb=2048)
    assert result.ok, result
    assert hidden not in result.value


def test_a_call_holds_no_descriptor_of_another_call_or_of_the_zygote() -> None:
    """Finding 7: every call held the previous spare's control-socket fds (and could send another
    call its request).  Its one socket is the sending end of its own supervisor's record of writes."""
    result = run('''
        import os, stat
        from trace_bench.sandbox import attempts
        kinds = {"record": attempts.channel()}
        for name in os.listdir("/proc/self/fd"):
            fd = int(name)
            try:
                mode = os.fstat(fd).st_mode
            except OSError:
                continue
            kinds[fd] = "socket" if stat.S_ISSOCK(mode) else "pipe" if stat.S_ISFIFO(mode) else "other"
        result = kinds
    ''')
    assert result.ok, result
    record = result.value.pop("record")
    sockets = {fd: kind for fd, kind in result.value.items() if kind == "socket"}
    assert sockets == {record: "socket"}
    assert len(result.value) <= 6  # stdin, stdout, stderr, the result pipe, the record, the listing itself


def test_the_sandbox_outlives_the_thread_that_started_it(fresh_sandbox: None) -> None:
    """Finding 6: --die-with-parent follows the starting *thread*; with num_threads > 1 the sandbox
    died under the other threads' calls."""
    started: list[SandboxResult] = []
    thread = threading.Thread(target=lambda: started.append(run("result = 1")))
    thread.start()
    thread.join()
    assert started[0].value == 1
    handles = list(server._HANDLES)
    assert handles and all(handle.alive for handle in handles)
    for i in range(5):
        assert run(f"result = {i}").value == i
    assert list(server._HANDLES) == handles and all(handle.alive for handle in handles)  # never restarted


@pytest.mark.parametrize("shape", ["empty lists", "keyed dict", "tagged tuples", "long string"])
def test_decoding_the_largest_result_allowed_costs_the_job_little(shape: str, tmp_path: Path) -> None:
    """Finding 5: a 63 MiB result frame made the job decode into ~3.3 GB for 35-55 s.  Measured in a
    fresh process (its peak RSS); a result past the bounds is refused with a clear error."""
    limit = policy.RESULT_MAX_VALUES
    makers = {
        "empty lists": f"result = [[] for _ in range({limit // 2 - 10})]",
        "keyed dict": f"result = {{'k%d' % i: 0 for i in range({limit // 2 - 10})}}",
        "tagged tuples": f"result = [() for _ in range({limit // 6 - 10})]",
        "long string": f"result = 'x' * {policy.RESULT_MAX_BYTES - 100_000} + '\\U0001F600'",
    }
    code = textwrap.dedent(f'''
        import json, resource
        from trace_bench.sandbox import SandboxLimits, run_sandboxed
        warm = run_sandboxed("tests.sandbox.targets:run_code", {{"code": "result = 1"}}, SandboxLimits(wall_s=60))
        assert warm.ok, warm
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        fits = run_sandboxed("tests.sandbox.targets:run_code", {{"code": {makers[shape]!r}}},
                             SandboxLimits(wall_s=120, memory_mb=4096))
        grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
        over = run_sandboxed("tests.sandbox.targets:run_code",
                             {{"code": {makers[shape]!r} + "\\nresult = [result, result]"}},
                             SandboxLimits(wall_s=120, memory_mb=4096))
        print(json.dumps([fits.status, fits.error_type, grown_mb, over.status, over.error_type, over.denial]))
    ''')
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    fits_status, fits_error, grown_mb, over_status, over_error, denial = json.loads(out.stdout.splitlines()[-1])
    assert (fits_status, fits_error) == ("ok", None)
    assert grown_mb < 200
    assert (over_status, over_error, denial) == ("error", "ResultTooLarge", "result_too_large")


def test_the_private_tmp_holds_a_bounded_number_of_files() -> None:
    """Finding 5: 2.28 million directories in one call's /tmp took 2.2 GB of kernel memory."""
    result = run('''
        import os
        made = 0
        try:
            while made < 10_000_000:
                os.mkdir(f"/tmp/d{made}")
                made += 1
        except OSError as exc:
            result = [made, exc.errno]
    ''', wall_s=120)
    assert result.ok, result
    made, errno_value = result.value
    assert made < policy.CALL_TMP_INODES and errno_value == 28  # ENOSPC
    assert run("result = len(__import__('os').listdir('/tmp'))").ok  # the next call starts clean


def _descendants(pid: int) -> list[int]:
    found, pending = [], [pid]
    while pending:
        parent = pending.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            try:
                children = [int(c) for c in (task / "children").read_text().split()]
            except OSError:  # ended meanwhile
                continue
            found += children
            pending += children
    return found


def test_a_sandbox_that_stops_answering_holds_the_job_no_longer_than_the_limit_and_a_grace(
        fresh_sandbox: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bounds on the trusted side: whatever happens inside (a teardown that does not end, a stopped
    supervisor), the job gets a timeout at the call's wall limit plus policy.GRACE_S, the sandbox is
    killed, and the next call gets a fresh one."""
    import signal

    from trace_bench.sandbox import runner

    monkeypatch.setattr(policy, "GRACE_S", 1.0)
    assert run("result = 1").ok
    # the supervisor's own clock starts now: stop it before that limit (3 s), or it ends the call itself
    call = runner.start_call(RUN, {"code": "import time\ntime.sleep(600)"}, SandboxLimits(wall_s=3))
    assert isinstance(call, runner.Call)
    sandbox = call.handle.proc
    os.kill(sandbox.pid, signal.SIGSTOP)
    for pid in _descendants(sandbox.pid):  # nothing inside can end the call any more
        with contextlib.suppress(ProcessLookupError):  # one that ended since the listing needs no stopping
            os.kill(pid, signal.SIGSTOP)
    result = call.finish()
    assert result.status == "timeout" and "the sandbox did not end the call; it was restarted" in result.message
    assert sandbox.returncode is not None  # killed, not left stopped
    assert run("result = 2").value == 2


SYSCALL = textwrap.dedent('''
    import ctypes, os
    libc = ctypes.CDLL(None, use_errno=True)
    def call(number, *args):
        ctypes.set_errno(0)
        value = libc.syscall(ctypes.c_long(number), *[ctypes.c_long(a) for a in args])
        return value, ctypes.get_errno()
''')
X86_64 = {"modify_ldt": (154, 0, 0, 0), "mbind": (237, 0, 4096, 0, 0, 0, 0), "set_mempolicy": (238, 0, 0, 0),
          "get_mempolicy": (239, 0, 0, 0, 0, 0), "move_pages": (279, 0, 0, 0, 0, 0, 0),
          "migrate_pages": (256, 0, 0, 0, 0), "vmsplice": (278, 0, 0, 0, 0),
          "personality ADDR_NO_RANDOMIZE": (135, 0x0040000), "clock_settime": (227, 0, 0)}


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="syscall numbers of x86_64")
def test_seccomp_refuses_what_dockers_default_profile_refuses() -> None:
    """Finding 7: personality, modify_ldt, mbind, move_pages and vmsplice were still allowed."""
    result = run(SYSCALL + f"result = {{name: call(*args) for name, args in {X86_64!r}.items()}}\n"
                 "result['personality query'] = call(135, 0xFFFFFFFF)\n")
    assert result.ok, result
    query = result.value.pop("personality query")
    assert query[1] == 0  # reading the personality stays allowed
    assert {name: outcome for name, outcome in result.value.items() if tuple(outcome) != (-1, 1)} == {}  # EPERM


def test_trace_benchs_own_modules_are_hidden_but_what_the_target_imports(fresh_sandbox: None) -> None:
    """Finding 4: an equation candidate imported the task module and regenerated its hidden target.
    A sandbox of its own: a process's sandboxes show the union of what its calls needed so far (what
    a candidate must not see is kept apart by the view's ``hide:`` entries, not by this)."""
    result = run('''
        import importlib
        outcomes = {}
        for name in ("trace_bench.tasks.llm4ad.oscillator1", "trace_bench.tasks.llm4ad.bactgrow",
                     "trace_bench.tasks.humaneval.data", "trace_bench.tasks.internal.code_param",
                     "trace_bench.runner.job.body", "trace_bench.llm.credentials", "trace_bench.sandbox.child"):
            try:
                importlib.import_module(name)
                outcomes[name] = "imported"
            except ImportError as exc:
                outcomes[name] = type(exc).__name__
        result = outcomes
    ''')
    assert result.ok, result
    imported = {name for name, outcome in result.value.items() if outcome == "imported"}
    assert imported == {"trace_bench.sandbox.child"}  # the sandbox's own code, nothing of any task


@pytest.mark.parametrize(("code", "denial"), [
    ("open('/usr/planted', 'w')", "file"),
    ("import socket\nsocket.socket(socket.AF_INET, socket.SOCK_STREAM)", "network"),
    ("import os\nos.fork()", "process"),
])
def test_a_refusal_says_what_was_refused(code: str, denial: str) -> None:
    result = run(code)
    assert (result.status, result.denial) == ("denied", denial), result


def test_a_target_is_imported_from_where_the_caller_would_import_it(tmp_path: Path) -> None:
    """CI failed when autorank and baycomp installed a ``tests`` package into site-packages: the
    child dropped ``python -c``'s working-directory entry and took the library's ``tests`` instead of
    the project's.  The child keeps the caller's import order, the working directory included."""
    for where, answer in (("project", "the project's"), ("library", "a library's")):
        package = tmp_path / where / "shadowed_top"
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "target.py").write_text(f"def which(payload):\n    return {answer!r}\n")
    code = textwrap.dedent('''
        import json
        from trace_bench.sandbox import SandboxLimits, run_sandboxed
        result = run_sandboxed("shadowed_top.target:which", {}, SandboxLimits(wall_s=60))
        print(json.dumps([result.status, result.value]))
    ''')
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(tmp_path / "library")])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd=tmp_path / "project", timeout=120, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == ["ok", "the project's"]


def test_an_event_loop_runs_in_a_call_and_unix_sockets_stay_refused() -> None:
    """OpenEvolve's Rust example (and every evaluator that wraps its work in ``asyncio.run``) scored 0:
    an event loop opens a connected ``socketpair`` to wake itself, and seccomp refused socketpair with
    the network.  A pair has no address, so it reaches nothing outside the call: it is allowed (AF_UNIX
    only), while ``socket()`` of every family stays refused, Unix sockets to the host included."""
    result = run('''
        import asyncio, socket
        async def twice(x):
            await asyncio.sleep(0)
            return 2 * x
        outcomes = {"loop": asyncio.run(twice(21))}
        left, right = socket.socketpair()
        left.sendall(b"ping")
        outcomes["pair"] = right.recv(4).decode()
        for name, family in (("unix", socket.AF_UNIX), ("inet", socket.AF_INET)):
            try:
                socket.socket(family, socket.SOCK_STREAM)
                outcomes[name] = "opened"
            except PermissionError:
                outcomes[name] = "refused"
        try:
            socket.socketpair(socket.AF_INET)
            outcomes["inet pair"] = "opened"
        except OSError:
            outcomes["inet pair"] = "refused"
        result = outcomes
    ''')
    assert result.ok, result
    assert result.value == {"loop": 42, "pair": "ping", "unix": "refused", "inet": "refused", "inet pair": "refused"}
