"""The program ends without taking its heap apart (cli.main._end_the_program), and a user sees
nothing of it: the whole output, the exit code, the ``atexit`` handlers, a thread still working."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO


def _program(body: str, *argv: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    """``trace-bench`` as its console script runs it (``main()`` without arguments), after ``body``."""
    code = (f"import atexit, sys, threading, time\n{body}\n"
            f"sys.argv = ['trace-bench', *{list(argv)!r}]\n"
            "from trace_bench.cli.main import main\n"
            "sys.exit(main())\n")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, timeout=600)


def test_the_whole_output_the_exit_code_and_the_atexit_handlers() -> None:
    proc = _program("atexit.register(lambda: print('handler ran', file=sys.stderr))",
                    "list-tasks", "--all", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert len(json.loads(proc.stdout)) > 50  # every byte of a long listing reached the pipe
    assert proc.stderr.rstrip().endswith("handler ran")
    refused = _program("atexit.register(lambda: print('handler ran', file=sys.stderr))",
                       "validate", "--config", "no-such-config.yaml")
    assert refused.returncode == 2 and "handler ran" in refused.stderr


def test_a_thread_still_working_is_waited_for(tmp_path: Path) -> None:
    """A command that leaves a thread running (a tracker's uploader, say) ends as Python would: after it."""
    marker = tmp_path / "done"
    # the thread works until the interpreter's own shutdown has begun (the main thread stopped), which
    # an os._exit at the command's end would never let happen: the marker then stays unwritten
    body = ("def work():\n"
            "    while threading.main_thread().is_alive():\n"
            "        threading.Event().wait(0.01)\n"
            f"    open({str(marker)!r}, 'w').write('x')\n"
            "threading.Thread(target=work).start()\n")
    proc = _program(body, "list-trainers")
    assert proc.returncode == 0, proc.stderr
    assert marker.read_text() == "x"


def test_a_run_ends_with_every_file_complete(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("tasks: [internal:numeric_param]\ntrainers: [{id: PrioritySearch, ps_steps: 1, ps_batches: 1}]\n"
                      "seeds: [1, 2]\n", encoding="utf-8")
    proc = _program("", "run", "--config", str(config), "--runs-dir", str(tmp_path / "runs"), "--quiet")
    assert proc.returncode == 0, proc.stderr
    (run,) = (tmp_path / "runs").iterdir()
    assert json.loads((run / "summary.json").read_text(encoding="utf-8"))["finished_jobs"] == 2
    assert len((run / "results.csv").read_text(encoding="utf-8").splitlines()) == 3
    events = (run / "events.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(events[-1])["type"] == "run_finished"
