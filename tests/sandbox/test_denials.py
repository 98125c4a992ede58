"""Reward-hacking signals: every sandboxed call that ran into a boundary is told to the job's listener."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.conftest import only_run_dir, run_cli
from trace_bench.sandbox import SandboxLimits, attempts, denials, run_sandboxed, verdict
from trace_bench.sandbox.limits import DENIALS, SandboxResult

#: the checkout lies under /tmp, inside what each call sees as its own private /tmp
PACKAGE_UNDER_TMP = Path(__file__).resolve().is_relative_to("/tmp")
ESCAPES = {"network": "import socket\nsocket.socket(socket.AF_INET, socket.SOCK_STREAM).connect(('10.1.2.3', 80))",
           "process": "import os\nresult = os.fork()",
           "file": "open('/etc/escaped-by-candidate', 'w').write('x')",
           "timeout": "while True:\n    pass"}
KINDS = set(DENIALS)


def test_kinds_of_results() -> None:
    assert denials.kind_of(SandboxResult("ok")) is None
    assert denials.kind_of(SandboxResult("error", error_type="ValueError")) is None, "a candidate's bug is no denial"
    assert denials.kind_of(SandboxResult("timeout")) == "timeout" and denials.kind_of(SandboxResult("oom")) == "memory"
    assert denials.kind_of(SandboxResult("error", error_type="CorruptResult")) == "forged_result"
    assert denials.kind_of(SimpleNamespace(status="denied", denial="network")) == "network", "a typed kind wins"
    caught = denials.denials_of("t:f", SandboxResult("ok", denied_actions=["network access (socket.connect)",
                                                                           "writing /etc/x (outside the sandbox "
                                                                           "directory)", "creating a process (os.fork)"]))
    assert [(d.kind, d.caught) for d in caught] == [("network", True), ("file", True), ("process", True)]


def test_a_listener_error_never_reaches_the_caller() -> None:
    seen: list[denials.Denial] = []

    def broken(_: denials.Denial) -> None:
        raise RuntimeError("listener bug")

    stops = [denials.listen(broken), denials.listen(seen.append)]
    try:
        before = denials.counts().get("timeout", 0)
        denials.note("t:f", SandboxResult("timeout", message="wall-clock limit"))
        assert [d.kind for d in seen] == ["timeout"] and denials.counts()["timeout"] == before + 1
    finally:
        for stop in stops:
            stop()
    denials.note("t:f", SandboxResult("timeout"))
    assert len(seen) == 1, "a stopped listener hears nothing more"


@pytest.mark.usefixtures("strong")
def test_escape_attempts_are_told_as_they_end() -> None:
    seen: list[denials.Denial] = []
    stop = denials.listen(seen.append)
    try:
        for code in ESCAPES.values():
            result = run_sandboxed("tests.sandbox.targets:run_code", {"code": code}, SandboxLimits(wall_s=2))
            assert result.status in ("denied", "timeout"), (code, result.describe())
        honest = run_sandboxed("tests.sandbox.targets:run_code", {"code": "result = 1 + 1"}, SandboxLimits(wall_s=5))
        assert honest.value == 2
    finally:
        stop()
    assert [d.kind for d in seen] == list(ESCAPES), [vars(d) for d in seen]  # the sandbox's typed kinds
    assert {d.target for d in seen} == {"tests.sandbox.targets:run_code"} and not any(d.caught for d in seen)
    assert all(d.status == ("timeout" if d.kind == "timeout" else "denied") for d in seen)


ESCAPE_TASK = '''
"""Circle packing whose optimizer proposes only escapes: a socket, a new process, a write outside."""
from dataclasses import replace

from trace_bench.tasks.llm4ad import circle_packing
from trace_bench.tasks.llm4ad.problem import build_problem

NETWORK = """import socket
def pack_circles(n):
    socket.socket(socket.AF_INET, socket.SOCK_STREAM).connect(("10.1.2.3", 80))
"""
PROCESS = """import os
def pack_circles(n):
    os.fork()
"""
WRITE = """def pack_circles(n):
    open("/etc/escaped-by-candidate", "w").write("x")
"""


def build_trace_problem(**eval_kwargs):
    return build_problem(replace(circle_packing.TASK, name="escapes", stub_candidates=(NETWORK, PROCESS, WRITE)),
                         eval_kwargs)
'''


@pytest.mark.usefixtures("strong")
def test_a_candidate_that_tries_to_escape_leaves_denials_counted_in_its_arm(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "escapes.py").write_text(ESCAPE_TASK)
    config = tmp_path / "c.yaml"
    config.write_text("mode: stub\nseeds: [1, 2]\nmax_workers: 2\ntasks: [escapes]\ntrainers:\n  - id: PrioritySearch\n"
                      "    params_variants:\n      - {ps_steps: 2, ps_batches: 1, ps_candidates: 2, ps_proposals: 2}\n"
                      "  - NoOpTrainer\n")
    run_cli("run", "--config", str(config), "--root", str(root), "--runs-dir", str(tmp_path / "runs"), "--quiet",
            check=True, cwd=tmp_path)
    run = only_run_dir(tmp_path / "runs")
    with open(run / "results.csv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        events = [json.loads(line) for line in (run / "jobs" / row["job_id"] / "events.jsonl").read_text().splitlines()]
        denied = [e for e in events if e["type"] == "sandbox_denial"]
        kinds = json.loads(row["sandbox_denial_kinds"])
        assert int(row["sandbox_denials"]) == sum(e.get("count", 1) for e in denied) == sum(kinds.values()), \
            row["job_id"]
        assert {e["kind"] for e in denied} == set(kinds) <= {"network", "process", "file"}, kinds
        assert all(e["target"].startswith("trace_bench.tasks.llm4ad") for e in denied)
        if row["trainer"] == "NoOpTrainer":
            assert denied == [], "the seed program is honest: no denial"
        else:
            assert len(denied) >= 1, "every proposal is an escape: the arm's jobs ran into the sandbox"
    assert not Path("/etc/escaped-by-candidate").exists()
    table = list(csv.DictReader(run_cli("table", str(run), "--format", "csv", check=True).stdout.splitlines()))
    by_trainer = {r["trainer"]: r for r in table}
    ps_total = sum(int(r["sandbox_denials"]) for r in rows if r["trainer"] == "PrioritySearch")
    assert int(by_trainer["PrioritySearch"]["sandbox_denials"]) == ps_total > 0
    assert "denials" in by_trainer["PrioritySearch"]["integrity"] and by_trainer["NoOpTrainer"]["sandbox_denials"] == "0"
    assert not by_trainer["NoOpTrainer"]["integrity"]
    run_cli("report", str(run), check=True)
    html = (run / "report.html").read_text()
    section = html[html.index('<section id="integrity">'):html.index('<section id="cost">')]
    assert f"{ps_total} sandbox denial(s)" in section and "Sandbox denials (first" in section


CAREFUL_WRITER = """import os, sys
import trace_bench
places = [os.path.join(os.path.dirname(trace_bench.__file__), "planted.py"), "/etc/planted-by-candidate",
          os.path.join(sys.prefix, "planted")]
refused = 0
for place in places:
    try:
        with open(place, "w") as handle:
            handle.write("x")
    except OSError:
        refused += 1
for attempt in (lambda: os.mkdir("/etc/planted-dir"), lambda: os.open("/usr/planted", os.O_WRONLY | os.O_CREAT),
                lambda: os.rename("/etc/hostname", "/etc/renamed")):
    try:
        attempt()
    except OSError:
        refused += 1
with open("/tmp/scratch.txt", "w") as handle:
    handle.write("allowed")
result = refused
"""
CLOSER = """import os, stat
for fd in range(3, 64):
    try:
        if stat.S_ISSOCK(os.fstat(fd).st_mode):
            os.close(fd)
    except OSError:
        pass
try:
    open("/etc/unrecorded", "w")
except OSError:
    pass
result = "closed"
"""
FORGER = """import os
from trace_bench.sandbox import attempts
record = attempts.channel()
os.write(record, b"\\n" + attempts.END + b"0" * 24 + b"\\n")  # an end, without the call's nonce
os.dup2(os.open("/dev/null", os.O_WRONLY), record)  # the record's descriptor now writes nowhere
try:
    open("/etc/unrecorded", "w")
except OSError:
    pass
result = "forged"
"""


@pytest.mark.usefixtures("strong")
def test_writes_outside_that_the_code_catches_are_counted_from_the_supervisors_record() -> None:
    """Strong mode: a write outside the call's /tmp fails in the kernel; the candidate catches every error and
    returns normally, yet each attempt is on the supervisor's record and told as a caught file denial."""
    seen: list[denials.Denial] = []
    stop = denials.listen(seen.append)
    try:
        careful = run_sandboxed("tests.sandbox.targets:run_code", {"code": CAREFUL_WRITER}, SandboxLimits(wall_s=5))
        honest = run_sandboxed("tests.sandbox.targets:run_code",
                               {"code": "open('/tmp/x.txt', 'w').write('1')\nopen('y.txt', 'a').close()\nresult = 1"},
                               SandboxLimits(wall_s=5))
        closer = run_sandboxed("tests.sandbox.targets:run_code", {"code": CLOSER}, SandboxLimits(wall_s=5))
        forger = run_sandboxed("tests.sandbox.targets:run_code", {"code": FORGER}, SandboxLimits(wall_s=5))
    finally:
        stop()
    # a checkout under /tmp lies in the call's private /tmp: the write into the package folder succeeds
    # there (in the call's own tmpfs) and is no attempt outside
    inside = 1 if PACKAGE_UNDER_TMP else 0
    assert careful.status == "ok" and careful.value == 6 - inside, careful.describe()
    assert careful.write_attempts == 7 - inside and not careful.write_record_closed, "a rename writes two paths"
    assert "/etc/planted-by-candidate" in careful.write_attempt_paths
    assert inside or any(path.endswith("trace_bench/planted.py") for path in careful.write_attempt_paths)
    assert honest.ok and honest.write_attempts == 0 and not honest.write_record_closed, "writes in /tmp are the call's"
    assert closer.ok and closer.write_record_closed, "closing the record is itself on record, on every run"
    assert forger.value == "forged" and forger.write_record_closed, "an end without the nonce ends nothing"
    files = [d for d in seen if d.kind == "file"]
    assert [(d.count, d.caught, d.status) for d in files] == [(7 - inside, True, "ok"), (1, True, "ok"),
                                                              (1, True, "ok")], files
    assert "closed" in files[1].detail and "closed" in files[2].detail


def test_what_a_call_may_write_and_what_the_record_counts() -> None:
    roots, covered = ("/tmp/",), ("/tmp/pytest-of-me/fixtures",)
    assert attempts.call_writable("/tmp", roots, covered) and attempts.call_writable("/tmp/a/b", roots, covered)
    assert attempts.call_writable("/dev/null", roots, covered) and attempts.call_writable(None, roots, covered)
    assert not attempts.call_writable("/tmp/pytest-of-me/fixtures/planted.py", roots, covered), "a read-only bind"
    assert not attempts.call_writable("/tmp/pytest-of-me/fixtures", roots, covered)
    assert attempts.call_writable("/tmp/pytest-of-me/fixtures2", roots, covered)
    assert not attempts.call_writable("/tmpx/a", roots, covered) and not attempts.call_writable("/etc/x", roots, covered)
    assert not attempts.call_writable("/dev/shm/x", roots, covered), "/dev/shm is the call's only with a process budget"


def _ledger(*chunks: bytes) -> attempts.Ledger:
    ledger = attempts.Ledger(-1)
    for chunk in chunks:
        ledger.feed(chunk)
    return ledger


def test_a_record_is_whole_only_with_the_end_that_names_its_own_nonce() -> None:
    begin, end = attempts.BEGIN + b"n0nce\n", b"\n" + attempts.END + b"n0nce\n"
    whole = _ledger(begin + b"/etc/a\n/et", b"c/b\n" + end)
    assert (whole.count, whole.paths, whole.ended, whole.broken) == (2, ["/etc/a", "/etc/b"], True, False)
    assert _ledger(begin + b"/etc/a\n").report() == {"count": 1, "paths": ["/etc/a"], "broken": True}, "no end"
    assert _ledger(begin + b"/etc/a\n" + attempts.END + b"guess\n").broken, "an end without the nonce"
    assert _ledger(begin, end, end).broken and _ledger(begin, attempts.BEGIN + b"other\n", end).broken
    assert _ledger(begin + b"/etc/a\n/etc/cut-sh", end).paths == ["/etc/a", "/etc/cut-sh"], "a line left open"
    assert not _ledger(b"").broken and not _ledger(b"/etc/a\n").broken, "never opened: the hook never ran"


def test_only_a_call_that_delivered_a_result_can_have_closed_its_record() -> None:
    report = {"attempts": {"count": 0, "paths": [], "broken": True}}
    assert verdict.with_record(SandboxResult("ok"), report, delivered=True).write_record_closed
    assert not verdict.with_record(SandboxResult("timeout"), report, delivered=False).write_record_closed
    whole = {"attempts": {"count": 0, "paths": [], "broken": False}}
    assert not verdict.with_record(SandboxResult("ok"), whole, delivered=True).write_record_closed
