"""Red team, at the sandbox's own interface: each attack is refused or contained, and the next call works.

The attacker is the code a target executes (tests.sandbox.targets:run_code, the way evaluators
run candidate code).  Every test ends by checking that an honest call still gets its answer from
the same sandbox, i.e. that the run goes on.  Task-level attacks (forged scores, patched
checkers) are in test_redteam_tasks.py.
"""

from __future__ import annotations

import json
import os
import pickle
import socket
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from trace_bench.sandbox import SandboxLimits, SandboxResult, run_sandboxed, server

pytestmark = [pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox targets Linux"),
              pytest.mark.usefixtures("strong")]

RUN = "tests.sandbox.targets:run_code"
REPO = Path(__file__).resolve().parents[2]
TARGET = "def run_code(payload):\n    namespace = {}\n    exec(payload['code'], namespace)\n    return namespace.get('result')\n"
# Candidate-side helper: try an action, record "refused: <error>" or "DONE".
TRY = textwrap.dedent('''
    outcomes = {}
    def attempt(name, action):
        try:
            action()
            outcomes[name] = "DONE"
        except BaseException as exc:
            outcomes[name] = f"refused: {type(exc).__name__}: {exc}"
''')


def run(code: str, payload: dict | None = None, **limits: object) -> SandboxResult:
    return run_sandboxed(RUN, {"code": TRY + textwrap.dedent(code), **(payload or {})},
                         SandboxLimits(**limits))  # type: ignore[arg-type]


def assert_run_continues() -> None:
    handles = {id(h) for h in server._HANDLES}
    assert run("result = 6 * 7").value == 42
    assert {id(h) for h in server._HANDLES} >= handles  # the same sandbox answered: nothing was restarted


def assert_all_refused(result: SandboxResult) -> None:
    assert result.ok, result
    done = {name: outcome for name, outcome in result.value.items() if not outcome.startswith("refused")}
    assert not done, done


def test_secrets_of_the_job_and_its_ancestors_are_unreadable(tmp_path: Path) -> None:
    """The issue's first attack: /proc/<ancestor>/environ gave the job's, forkserver's and driver's key."""
    secret = f"sk-redteam-{uuid.uuid4().hex}"
    code = textwrap.dedent(f'''
        import json, os
        from trace_bench.sandbox import SandboxLimits, run_sandboxed
        scan = """
        import os
        found, processes = [], []
        for pid in os.listdir('/proc'):
            if not pid.isdigit():
                continue
            processes.append(int(pid))
            for name in ('environ', 'cmdline'):
                try:
                    with open('/proc/' + pid + '/' + name, 'rb') as fh:
                        if {secret!r}.encode() in fh.read():
                            found.append(pid + '/' + name)
                except OSError:
                    pass
        result = {{"found": found, "processes": processes, "ppid": os.getppid(),
                  "env": [k for k, v in os.environ.items() if {secret!r} in v]}}
        """
        first = run_sandboxed("tests.sandbox.targets:run_code", {{"code": scan}}, SandboxLimits(wall_s=30))
        second = run_sandboxed("tests.sandbox.targets:run_code", {{"code": "result = 1"}}, SandboxLimits(wall_s=30))
        print(json.dumps([first.status, first.value, second.value]))
    ''')
    env = {**os.environ, "OPENAI_API_KEY": secret}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO,
                         timeout=120, check=True)
    status, value, after = json.loads(out.stdout.strip().splitlines()[-1])
    assert status == "ok" and after == 1
    assert value["found"] == [] and value["env"] == []
    assert value["processes"] == [1] and value["ppid"] == 0  # no ancestor is even visible


def test_secret_files_and_the_project_directory_are_invisible(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               fresh_sandbox: None) -> None:
    project = tmp_path / "project"
    (project / "evalpkg").mkdir(parents=True)
    (project / "evalpkg" / "__init__.py").write_text("")
    (project / "evalpkg" / "target.py").write_text(TARGET)
    (project / ".env").write_text("OPENAI_API_KEY=sk-in-the-project-env\n")
    monkeypatch.syspath_prepend(str(project))
    code = TRY + textwrap.dedent(f'''
        import os
        attempt("read ~/.ssh", lambda: os.listdir(os.path.expanduser("~root/.ssh")))
        attempt("read /root/.ssh/id_rsa", lambda: open("/root/.ssh/id_rsa").read())
        attempt("read /etc/shadow", lambda: open("/etc/shadow").read())
        attempt("read /etc/passwd", lambda: open("/etc/passwd").read())
        attempt("read the project's .env", lambda: open({str(project / ".env")!r}).read())
        attempt("read the repository's .env", lambda: open({str(REPO / ".env")!r}).read())
        attempt("read the repository's config", lambda: open({str(REPO / "pyproject.toml")!r}).read())
        attempt("read ~/.ssh through /proc/1/root", lambda: os.listdir("/proc/1/root/root/.ssh"))
        result = {{"outcomes": outcomes, "project": sorted(os.listdir({str(project)!r})),
                  "repo": sorted(os.listdir({str(REPO)!r})), "root": sorted(os.listdir("/"))}}
    ''')
    result = run_sandboxed("evalpkg.target:run_code", {"code": code}, SandboxLimits(wall_s=30))
    assert result.ok, result
    assert {k: v for k, v in result.value["outcomes"].items() if not v.startswith("refused")} == {}
    assert result.value["project"] == ["evalpkg"]  # only the package the target needs
    assert set(result.value["repo"]) <= {"trace_bench", "tests", ".venv"}  # mount points, nothing else
    assert ".env" not in result.value["repo"] and "home" not in result.value["root"]
    assert run_sandboxed("evalpkg.target:run_code", {"code": "result = 3"}).value == 3


def test_writes_outside_the_private_tmp_are_refused_by_every_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  fresh_sandbox: None) -> None:
    """open, dir_fd (the issue's second attack), rename, link, symlink, mkfifo, mknod, mmap, truncate, ..."""
    visible = tmp_path / "visible"
    (visible / "victimpkg").mkdir(parents=True)
    victim = visible / "victimpkg" / "__init__.py"
    victim.write_text("VALUE = 1\n")
    (visible / "victimpkg" / "target.py").write_text(TARGET)
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    monkeypatch.syspath_prepend(str(visible))
    before = {p: p.read_bytes() for p in visible.rglob("*") if p.is_file()}
    pkg, out = str(visible / "victimpkg"), str(hidden)
    code = TRY + textwrap.dedent(f'''
        import mmap, os, stat
        victim = {str(victim)!r}
        attempt("open for writing", lambda: open(victim, "a").write("x"))
        attempt("open a new file in a visible directory", lambda: open({pkg!r} + "/new.py", "w"))
        attempt("open in a host directory", lambda: open({out!r} + "/new.txt", "w"))
        def dir_fd_write(path):
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
            os.close(os.open("planted.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
        attempt("dir_fd into the package", lambda: dir_fd_write({pkg!r}))
        attempt("dir_fd into a host directory", lambda: dir_fd_write({out!r}))
        attempt("rename", lambda: os.rename(victim, victim + ".bak"))
        attempt("rename into /tmp", lambda: os.rename(victim, "/tmp/stolen.py"))
        attempt("link", lambda: os.link(victim, {pkg!r} + "/link.py"))
        attempt("link into /tmp", lambda: os.link(victim, "/tmp/link.py"))
        attempt("symlink", lambda: os.symlink("/tmp", {pkg!r} + "/sym"))
        attempt("mkfifo", lambda: os.mkfifo({pkg!r} + "/fifo"))
        attempt("mknod", lambda: os.mknod({pkg!r} + "/node", stat.S_IFREG | 0o644))
        def map_for_writing(flags):
            fd = os.open(victim, flags)
            with mmap.mmap(fd, 0, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ | mmap.PROT_WRITE) as view:
                view[0:1] = b"X"
        attempt("mmap read-write", lambda: map_for_writing(os.O_RDWR))
        attempt("mmap of a read-only descriptor", lambda: map_for_writing(os.O_RDONLY))
        attempt("truncate", lambda: os.truncate(victim, 0))
        attempt("chmod", lambda: os.chmod(victim, 0o777))
        attempt("utime", lambda: os.utime(victim, (0, 0)))
        attempt("unlink", lambda: os.unlink(victim))
        attempt("mkdir", lambda: os.mkdir({pkg!r} + "/newdir"))
        attempt("write to /usr", lambda: open("/usr/planted", "w"))
        attempt("write to /", lambda: open("/planted", "w"))
        attempt("write to /dev/shm", lambda: open("/dev/shm/planted", "w"))
        attempt("write to the interpreter", lambda: open(os.__file__, "a"))
        result = outcomes
    ''')
    result = run_sandboxed("victimpkg.target:run_code", {"code": code}, SandboxLimits(wall_s=30))
    assert_all_refused(result)
    assert {p: p.read_bytes() for p in visible.rglob("*") if p.is_file()} == before
    assert list(hidden.iterdir()) == []
    ok = run_sandboxed("victimpkg.target:run_code", {"code": "open('/tmp/mine', 'w').write('x')\nresult = 'wrote'"})
    assert ok.value == "wrote"


def test_disabling_in_process_hooks_gains_nothing(tmp_path: Path) -> None:
    """The issue's third attack: reassigning the audit hook module's globals turned every check off."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(tmp_path / "host.sock"))
    listener.listen(1)
    listener.setblocking(False)
    code = f'''
        import os, sys, socket
        guard = sys.modules.get("trace_bench.sandbox.guard")
        if guard is not None:
            for name in ("_PROCESS_EVENTS", "_NETWORK_EVENTS", "_ALWAYS_DENIED"):
                setattr(guard, name, frozenset())
            guard._PATH_EVENTS, guard._WRITE_FLAGS = {{}}, 0
        forks = 0
        for _ in range(200):
            try:
                pid = os.fork()
            except OSError:
                break
            if pid == 0:
                os._exit(0)
            os.waitpid(pid, 0)
            forks += 1
        import _posixsubprocess
        attempt("fork_exec", lambda: _posixsubprocess.fork_exec(
            [b"/bin/true"], [b"/bin/true"], True, (), None, None, -1, -1, -1, -1, -1, -1, -1, -1,
            False, False, False, None, None, None, -1, None, False))
        attempt("write a host file", lambda: open({str(tmp_path / "planted")!r}, "w"))
        def unix_connect():
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect({str(tmp_path / "host.sock")!r})
        attempt("host unix socket", unix_connect)
        result = {{"forks": forks, **outcomes}}
    '''
    try:
        result = run(code)
        assert result.ok, result
        assert result.value.pop("forks") == 0
        assert_all_refused(result)
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody connected
    finally:
        listener.close()
    assert not (tmp_path / "planted").exists()
    assert_run_continues()


@pytest.mark.parametrize("kind", ["forged", "garbage", "truncated", "pickle"])
def test_writing_the_result_channel_yields_only_data(tmp_path: Path, kind: str) -> None:
    """The fourth and fifth attacks: a forged frame on the result pipe, and a pickle with __reduce__."""
    marker = tmp_path / "reduce-ran"

    class Exploit:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    frames = {"forged": json.dumps({"ok": True, "value": {"score": 99.0}}).encode(),
              "garbage": b"\x00\xff" * 1000, "truncated": b'{"ok": true, "value": [1, 2',
              "pickle": pickle.dumps({"status": "ok", "value": Exploit()})}
    frame = frames[kind]
    code = f'''
        import os, stat, struct
        frame = {frame!r}
        for fd in range(3, 64):
            try:
                if stat.S_ISFIFO(os.fstat(fd).st_mode):
                    os.write(fd, struct.pack(">Q", len(frame)) + frame if {kind == "pickle"} else frame)
            except OSError:
                pass
        os._exit(0)
    '''
    result = run(code)
    if kind == "forged":  # the candidate's own claim comes back as data, and is never taken as a score
        assert result.status == "error" and result.error_type == "CorruptResult" or result.value == {"score": 99.0}
    else:
        assert result.status == "error" and result.error_type == "CorruptResult", result
    assert not marker.exists()
    assert_run_continues()


def test_setsid_grandchild_dies_with_the_call() -> None:
    """The seventh attack: a setsid grandchild survived the kill of the sandbox's process group."""
    name = f"tbsv{uuid.uuid4().hex[:8]}"
    code = f'''
        import ctypes, os, time
        ready_r, ready_w = os.pipe()
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                ctypes.CDLL(None).prctl(15, {name.encode()!r}, 0, 0, 0)  # PR_SET_NAME
                os.write(ready_w, b"1")
                while True:
                    time.sleep(0.05)
            os._exit(0)
        os.read(ready_r, 1)
        print("grandchild ready")
        if payload.get("hang"):
            while True:
                pass
        result = "returned"
    '''
    for hang in (False, True):
        result = run(code, {"hang": hang}, max_processes=3, wall_s=10 if hang else 60)
        assert "grandchild ready" in result.stdout, result
        assert result.status == ("timeout" if hang else "ok"), result
        survivors = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                if Path(f"/proc/{pid}/comm").read_text().strip() == name:
                    survivors.append(pid)
            except OSError:
                continue
        assert survivors == []  # the call's PID namespace died with its first process
    assert_run_continues()


def test_fork_bomb_as_root_is_contained() -> None:
    bomb = run("import os\nwhile True:\n    os.fork()")
    assert bomb.status == "denied", bomb
    counted = run('''
        import os, signal
        alive = 0
        for _ in range(200):
            try:
                if os.fork() == 0:
                    signal.pause()
                alive += 1
            except OSError:
                break
        result = alive
    ''', max_processes=5, wall_s=30)
    assert counted.ok and counted.value == 5, counted
    assert_run_continues()


def test_ten_gigabyte_allocation_is_contained() -> None:
    assert run("x = bytearray(10 * 1024 ** 3)").status == "oom"
    assert run("import numpy as np\nx = np.ones(10 * 1024 ** 3 // 8)").status == "oom"
    assert_run_continues()


def test_endless_output_is_bounded() -> None:
    printed = run("while True:\n    print('x' * 1000)", wall_s=5)
    assert printed.status == "timeout" and 0 < len(printed.stdout) < 10_000
    flooded = run('''
        import os, stat
        fds = [fd for fd in range(3, 64) if os.path.exists(f"/proc/self/fd/{fd}")
               and stat.S_ISFIFO(os.fstat(fd).st_mode)]
        chunk = b"x" * (1 << 20)
        while True:
            for fd in fds:
                try:
                    os.write(fd, chunk)
                except OSError:
                    pass
    ''', wall_s=60)
    assert flooded.status == "error" and flooded.error_type == "ResultTooLarge", flooded
    assert_run_continues()


def test_ptrace_of_the_parent_and_the_job_is_refused() -> None:
    result = run('''
        import ctypes, os
        libc = ctypes.CDLL(None, use_errno=True)
        targets = {"parent": os.getppid(), "job": payload["job"], "init": 1}
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                targets["visible " + pid] = int(pid)
        for name, pid in targets.items():
            def trace(pid=pid):
                if libc.ptrace(16, pid, 0, 0) != 0:  # PTRACE_ATTACH
                    raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
            attempt("ptrace " + name, trace)
        attempt("job memory", lambda: open(f"/proc/{payload['job']}/mem", "rb").read(1))
        result = outcomes
    ''', {"job": os.getpid()})
    assert_all_refused(result)
    assert_run_continues()


def test_signals_to_the_parent_and_the_job_reach_nobody() -> None:
    result = run('''
        import os, signal
        attempt("kill the job", lambda: os.kill(payload["job"], signal.SIGKILL))
        attempt("kill the job's group", lambda: os.killpg(payload["job"], signal.SIGKILL))
        try:
            os.kill(-1, signal.SIGKILL)  # everything this process may signal: nothing but itself is there
            os.kill(os.getppid(), signal.SIGTERM)
        except OSError:
            pass
        result = outcomes
    ''', {"job": os.getpid()})
    assert_all_refused(result)
    assert_run_continues()


def test_network_tcp_udp_and_dns_are_unreachable() -> None:
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(4)
    tcp.setblocking(False)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    udp.setblocking(False)
    code = f'''
        import socket
        attempt("tcp", lambda: socket.create_connection(("127.0.0.1", {tcp.getsockname()[1]}), timeout=5))
        def send_udp():
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.sendto(b"leak", ("127.0.0.1", {udp.getsockname()[1]}))
        attempt("udp", send_udp)
        attempt("dns localhost", lambda: socket.getaddrinfo("localhost", 80))
        attempt("dns", lambda: socket.gethostbyname("example.com"))
        result = outcomes
    '''
    try:
        assert_all_refused(run(code))
        opened = run(code, network=True)  # sockets allowed: the namespace still has no way out
        assert opened.ok and opened.value["udp"] == "DONE", opened  # sent to its own loopback, not ours
        assert {k: v for k, v in opened.value.items() if k != "udp" and not v.startswith("refused")} == {}
        with pytest.raises(BlockingIOError):
            tcp.accept()
        with pytest.raises(BlockingIOError):
            udp.recv(16)
    finally:
        tcp.close()
        udp.close()
    assert_run_continues()
