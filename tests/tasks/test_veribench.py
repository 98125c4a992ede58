"""VeriBench: discovery from local data, Lean diagnostics into scores and feedback, availability.

A fake ``lean`` (a small Python script put first on PATH) prints real-format diagnostics
(``FILE:LINE:COL: severity: message``) for markers in the candidate: ``undefined_name`` is an
error, ``sorry`` a warning; ``FAKE_TIMEOUT`` sleeps, ``FAKE_GARBAGE`` crashes with junk output.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import stat
import sys
from pathlib import Path

import pytest

from tests.trainers.external_jobs import assert_ok_with_curve, expand, run_jobs
from tests.waiting import PATIENCE_S
from trace_bench.registry.tasks import TaskCatalog
from trace_bench.tasks.veribench import data
from trace_bench.tasks.veribench.lean import parse_diagnostics
from trace_bench.tasks.veribench.problem import LeanGuide

FAKE_LEAN = r'''#!{python}
import sys, time
path = sys.argv[-1]
text = open(path).read()
for line in text.splitlines():  # what Lean's #eval can do: run arbitrary IO while compiling
    if line.startswith("-- FAKE_EVAL "):
        exec(line[len("-- FAKE_EVAL "):])
if "FAKE_TIMEOUT" in text:
    time.sleep(3600)  # hangs: only the guide's timeout ends it
if "FAKE_GARBAGE" in text:
    print("segmentation fault (core dumped) ???")
    sys.exit(139)
errors = 0
for number, line in enumerate(text.splitlines(), 1):
    col = line.find("undefined_name")
    if col >= 0:
        print(f"{{path}}:{{number}}:{{col}}: error: unknown identifier 'undefined_name'")
        print("  in the definition above")
        errors += 1
    col = line.find("sorry")
    if col >= 0 and not line.lstrip().startswith("--"):
        print(f"{{path}}:{{number}}:0: warning: declaration uses 'sorry'")
sys.exit(1 if errors else 0)
'''

ROWS = [
    {"filename": "binary_search.py", "category": "search", "user_query": "def f(x):\n    return x"},
    {"filename": "add.py", "user_query": "def add(a, b):\n    return a + b",
     "unit_tests": "example : add 1 2 = 3 := rfl\n\n#guard add 0 0 == 0\n"},
]


@pytest.fixture
def fake_lean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A toolchain installed as they are (readable and runnable by everyone): the compiler runs in the
    sandbox, as another user when the job runs as root."""
    toolchain = tmp_path / "toolchain"
    bin_dir = toolchain / "bin"
    bin_dir.mkdir(parents=True)
    toolchain.chmod(0o755)
    lean = bin_dir / "lean"
    lean.write_text(FAKE_LEAN.format(python=sys.executable))
    lean.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return lean


@pytest.fixture
def dataset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "veribench.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in ROWS) + "\n")
    monkeypatch.setenv("TRACE_BENCH_VERIBENCH_ROOT", str(path))
    data._local_rows.cache_clear()
    return path


def test_parse_real_format_diagnostics() -> None:
    text = ("/tmp/x/Candidate.lean:3:4: error: unknown identifier 'foo'\n  extra context line\n"
            "/tmp/x/Candidate.lean:7:0: warning: declaration uses 'sorry'\n"
            "Candidate.lean:9:2: error(lean.unknownIdentifier): bad\nnoise without a position\n")
    found = parse_diagnostics(text)
    assert [(d.line, d.col, d.severity) for d in found] == [(3, 4, "error"), (7, 0, "warning"), (9, 2, "error")]
    assert "extra context line" in found[0].message
    assert parse_diagnostics("total garbage\n") == []


def test_scores_and_feedback_from_lean(fake_lean: Path, dataset: Path) -> None:
    guide = LeanGuide(timeout_s=PATIENCE_S, memory_mb=None)  # the fake lean may start slowly on a loaded machine
    good = "def add (a b : Nat) : Nat := a + b\n"
    assert guide.get_feedback("q", good, {}) == (1.0, "Compiles (0 theorem(s)).")
    score, feedback = guide.get_feedback("q", "def add (a b : Nat) : Nat :=\n  undefined_name a b\n", {})
    assert score == 0.0 and "line 2:2: error: unknown identifier" in feedback
    score, feedback = guide.get_feedback("q", "theorem t : 1 = 1 := sorry\n", {})
    assert score == 0.5 and "sorry" in feedback and "1 theorem" in feedback
    tests = {"unit_tests": "example : add 1 2 = 3 := rfl\n\n#guard undefined_name == 0\n"}
    score, feedback = guide.get_feedback("q", good, tests)
    assert score == pytest.approx(0.875) and "1/2 pass" in feedback
    assert guide.get_score_dict("q", good, tests) == {"compiled": 1.0, "no_sorry": 1.0, "tests": 0.5}
    score, feedback = LeanGuide(timeout_s=1.0, memory_mb=None).get_feedback("q", "def x : Nat := 0 -- FAKE_TIMEOUT\n", {})
    assert score == 0.0 and "timed out" in feedback
    score, feedback = guide.get_feedback("q", "def x : Nat := 0 -- FAKE_GARBAGE\n", {})
    assert score == 0.0 and "exited with code 139" in feedback and "segmentation" in feedback
    assert guide.get_feedback("q", "-- nothing here\n", {})[0] == 0.0


def test_lean_code_compiles_in_the_sandbox(fake_lean: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Lean's #eval runs arbitrary IO at compile time: the compiler runs sandboxed, so candidate code
    reads no key, writes no host path and reaches no network."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-veribench-canary")
    outside = tmp_path / "outside"
    outside.mkdir()
    probe = ("import os, socket; print('KEY', os.environ.get('OPENAI_API_KEY')); "
             f"open({str(outside / 'planted')!r}, 'w').write('x') if os.path.isdir({str(outside)!r}) else None")
    score, feedback = LeanGuide(timeout_s=PATIENCE_S, memory_mb=None).get_feedback(
        "q", f"def x : Nat := 0\n-- FAKE_EVAL {probe}\n", {})
    assert "sk-veribench-canary" not in feedback
    assert not (outside / "planted").exists()
    net = "import socket; socket.create_connection(('127.0.0.1', 9), timeout=2)"
    score, feedback = LeanGuide(timeout_s=PATIENCE_S, memory_mb=None).get_feedback(
        "q", f"def x : Nat := 0\n-- FAKE_EVAL {net}\n", {})
    assert score == 0.0 and ("PermissionError" in feedback or "Operation not permitted" in feedback), feedback


def test_discovery_expansion_and_a_stub_job(fake_lean: Path, dataset: Path, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    catalog = TaskCatalog.create()
    ids = [s.id for s in catalog.list(["veribench"])]
    assert ids == ["veribench:binary_search", "veribench:add"]
    assert all(s.unavailable_reason() is None for s in catalog.list(["veribench"]))
    assert catalog.expand("veribench:all") == ids
    config = {"tasks": [{"id": "veribench:add", "eval_kwargs": {"timeout_s": 5}}],
              "trainers": [{"id": "GEPATrainer", "max_metric_calls": 6}], "seeds": [1]}
    [(result, job)] = run_jobs(config, tmp_path, monkeypatch)
    assert_ok_with_curve(result, job)
    # the stub's candidates are drafts with a `sorry` (never the top score): the job compiles them and
    # feeds the diagnostics back, and its best stays at the skeleton's score
    assert result.score_initial == 0.75 and result.score_best == 0.75 and result.llm_calls >= 1


def test_without_lean_tasks_are_unavailable(dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    specs = TaskCatalog.create().list(["veribench"])
    assert specs and all(s.unavailable_reason() == "lean not found" for s in specs)
    jobs = expand({"tasks": ["veribench:add", "internal:numeric_param"], "trainers": ["NoOpTrainer"]})
    assert [(j.task, j.skip_reason) for j in jobs] == [("veribench:add", "task unavailable: lean not found"),
                                                      ("internal:numeric_param", None)]


def test_unavailable_task_is_skipped_then_runs_on_resume_once_available(
        dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A config of the original naming a suite this machine lacks still runs: those jobs are
    recorded ``skipped`` with the reason (exit 0), and a resume runs them once the tool exists."""
    from tests.conftest import only_run_dir, run_cli

    config = tmp_path / "c.yaml"
    config.write_text("tasks: [veribench:add, internal:numeric_param]\ntrainers: [NoOpTrainer]\nseeds: [1]\n")
    tools = tmp_path / "tools"  # no lean; bubblewrap stays, since numeric_param's trainable code runs sandboxed
    tools.mkdir()
    bwrap = shutil.which("bwrap")
    if bwrap:
        (tools / "bwrap").symlink_to(bwrap)
    env = {"PATH": os.pathsep.join([str(Path(sys.executable).parent), str(tools)]),
           "TRACE_BENCH_VERIBENCH_ROOT": str(dataset)}
    checked = run_cli("validate", "--config", str(config), env=env)
    assert checked.returncode == 0 and "[SKIP] task veribench:add: task unavailable: lean not found" in checked.stdout
    first = run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "runs"), env=env)
    assert first.returncode == 0, first.stderr
    assert "veribench:add: task unavailable: lean not found" in first.stderr
    run = only_run_dir(tmp_path / "runs")
    rows = {r["task"]: r for r in csv.DictReader(open(run / "results.csv"))}
    assert rows["veribench:add"]["status"] == "skipped" and "lean not found" in rows["veribench:add"]["error"]
    assert rows["internal:numeric_param"]["status"] == "ok"
    manifest = json.loads((run / "meta" / "manifest.json").read_text())
    assert [j["skip_reason"] for j in manifest["jobs"] if j["task"] == "veribench:add"] == [
        "task unavailable: lean not found"]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    lean = bin_dir / "lean"
    lean.write_text(FAKE_LEAN.format(python=sys.executable))
    lean.chmod(lean.stat().st_mode | stat.S_IEXEC)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    again = run_cli("run", "--resume", run.name, "--runs-dir", str(tmp_path / "runs"), env=env)
    assert again.returncode == 0, again.stderr
    rows = {r["task"]: r for r in csv.DictReader(open(run / "results.csv"))}
    assert rows["veribench:add"]["status"] == "ok" and len(rows) == 2
