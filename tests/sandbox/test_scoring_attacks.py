"""Issue 40's findings replayed end to end: scores a candidate could inflate, through real-mode runs.

Each test looks at one job of a real-mode ``trace-bench run`` against the hostile fake provider
(``FakeLLMServer(attacks=...)``, :mod:`trace_bench.llm.attack`), whose proposals of code carry the
attacks, and asserts on the run's records that the attack gained nothing and, where the issue says so,
that the audit saw it.  The jobs share three runs (one per trainer setting, and KernelBench with its
stand-in torch apart), each attack aimed at one task's function (``replace``) or program (``matching``).
Each test fails on the code before issue 40's fixes (checked by running this file with that tree first
on ``PYTHONPATH``: the CLI's runs then use it).
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES
from tests.sandbox.hostile import Trap, real_run, rows_of
from trace_bench.llm.attack import Attack
from trace_bench.llm.fake_server import FakeLLMServer

pytestmark = [pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox targets Linux"),
              pytest.mark.usefixtures("strong")]

# one proposal per job, scored (n_evals then counts it): enough where the records say what it gained
ONE_STEP = "PrioritySearch\n    params_variants:\n      - {ps_steps: 1, ps_batches: 1, ps_candidates: 1, ps_proposals: 1}"
# two steps: the second step's prompts show the first step's proposals and their feedback
SEARCH = "PrioritySearch\n    params_variants:\n      - {ps_steps: 2, ps_batches: 1, ps_candidates: 2, ps_proposals: 2}"


class Run:
    """A finished run: the provider (and what it was sent), the run directory, its rows by task."""

    def __init__(self, server: FakeLLMServer, run: Path, rows: list[dict[str, str]], stderr: str) -> None:
        self.server, self.run, self.stderr = server, run, stderr
        self.rows = {row["task"]: row for row in rows}

    def row(self, task: str) -> dict[str, str]:
        row = self.rows[task]
        assert row["status"] == "ok", (row["status"], row["error"], self.stderr[-2000:])
        return row

    def job(self, task: str) -> Path:
        return self.run / "jobs" / self.rows[task]["job_id"]

    def integrity(self, task: str) -> dict[str, Any]:
        return json.loads((self.job(task) / "artifacts" / "integrity.json").read_text())  # type: ignore[no-any-return]

    def shown(self, marker: str) -> bool:
        """Whether a prompt showed ``marker`` (a proposal or a feedback the provider was sent back)."""
        return any(marker in body for body in self.server.bodies)


def _start(tmp_path: Path, attacks: list[Attack], body: str, *, record: bool = False,
           env: dict[str, str | None] | None = None, root: Path | None = None) -> Run:
    from tests.sandbox.conftest import require_bwrap

    require_bwrap()
    planted = Trap(tmp_path)
    try:
        with FakeLLMServer(attacks=attacks, record=record) as server:
            proc, run, rows = real_run(tmp_path, server, planted, f"max_workers: 2\n{body}", env=env,
                                       extra_args=("--root", str(root)) if root else ())
    finally:
        planted.close()
    assert rows, proc.stderr
    return Run(server, run, rows, proc.stderr)


def _scored(row: dict[str, str]) -> None:
    assert int(row["n_evals"]) >= 2, "the attack was proposed and scored"


# ---------------------------------------------------------------------------------------------------
# Run A: one proposal per job (findings 1, 2, 5, 6, 7)

# Finding 1: the equation answers the fitter's probes so that each Levenberg-Marquardt step echoes ten
# residuals (a Jacobian of unit columns, one per parameter), remembers them, and after ~60 steps predicts
# every target.  It keeps its state between calls; a first call in a fresh process is the fit's start.
JACOBIAN = '''import numpy as np


def equation(x, v, params):
    import builtins as _b
    import numpy as _np
    _state = _b.__dict__.setdefault("_jacobian_attack", {})
    _p = _np.asarray(params, dtype=float)
    if "base" not in _state:
        _state.update(base=_p.copy(), pred=_np.zeros(_np.shape(x)), known={}, steps=0, at=0, columns={})
        return _state["pred"].copy()
    _base, _pred = _state["base"], _state["pred"]
    _delta = _p - _base
    _moved = _np.nonzero(_delta)[0]
    if len(_moved) == 0:
        return _pred.copy()
    if len(_moved) == 1 and abs(_delta[_moved[0]] - 1e-6 * (1 + abs(_base[_moved[0]]))) < 1e-9:
        _j = int(_moved[0])
        _i = (_state["at"] + _j) % _pred.size
        _state["columns"][_j] = _i
        _probe = _pred.copy()
        _probe[_i] += _delta[_j]
        return _probe
    _damping = max(1e-3 / 3 ** _state["steps"], 1e-12)
    for _j, _i in _state["columns"].items():
        _residual = -_delta[_j] * (1 + _damping + _damping * 1e-12)
        _state["known"][_i] = _pred[_i] - _residual
    _new = _pred.copy()
    for _i, _target in _state["known"].items():
        _new[_i] = _target
    _state.update(base=_p.copy(), pred=_new, steps=_state["steps"] + 1, at=(_state["at"] + 10) % _pred.size, columns={})
    return _new.copy()
'''

# Finding 2: constructions scaled until their products underflow, so that floating point reads them as
# far better than they are (scale-invariant problems).
SUBNORMAL_STEPS = '''def step_heights():
    """Ten thousand steps whose squares underflow to zero, and one whose square is the smallest subnormal."""
    h = np.full(10000, 1.57e-162)
    h[0] = 2.3e-162
    return h
'''
TINY_GRID = '''def spread_points(n, d):
    """A 4 x 4 grid (true squared ratio 18), shrunk until its squared distances round."""
    return np.array([[i, j] for i in range(4) for j in range(4)], dtype=float) * 1.5794011951465e-162
'''

# Finding 6: the PAL program rewrites the clock its runner reads, so that every question took -1000 s.
CLOCK = '''import builtins as _builtins
import time as _time
_real = _builtins.__dict__.setdefault("_real_clock", _time.process_time)
def _rewound():
    _builtins._clock_calls = getattr(_builtins, "_clock_calls", 0) + 1
    return _real() - 1000.0 * ((_builtins._clock_calls + 1) // 2)
_time.process_time = _rewound
text = question.strip()
if text.endswith(" is"):
    text = text[: -len(" is")]
result = str(eval(text))
'''

# Findings 5 and 7: a careful candidate tries a socket, a process and SysV shared memory, catches every
# refusal, then says (through its error, which the guide logs) how much SysV memory it held at once.
CAREFUL = '''def pack_circles(n):
    import ctypes as _ctypes, os as _os, socket as _socket
    _refused = 0
    try:
        _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    except OSError:
        _refused += 1
    try:
        _pid = _os.fork()
        if _pid == 0:
            _os._exit(0)
    except OSError:
        _refused += 1
    _libc = _ctypes.CDLL(None, use_errno=True)
    _libc.shmat.restype = _ctypes.c_void_p
    _libc.shmat.argtypes = [_ctypes.c_int, _ctypes.c_void_p, _ctypes.c_int]
    _held = 0
    for _ in range(4):
        _segment = _libc.shmget(0, 64 << 20, 0o1600)
        if _segment < 0:
            _refused += 1
            break
        _address = _libc.shmat(_segment, None, 0)
        if _address in (None, _ctypes.c_void_p(-1).value):
            break
        _ctypes.memset(_address, 1, 64 << 20)
        _libc.shmdt(_ctypes.c_void_p(_address))
        _held += 64
    import trace_bench as _tb
    _places = [_os.path.join(_os.path.dirname(_tb.__file__), "planted.py"), "/etc/planted-by-candidate",
               _os.path.join(_os.path.dirname(_os.__file__), "planted.py")]
    for _place in _places:  # the project's package, /etc, the standard library's read-only mount
        try:
            with open(_place, "w") as _handle:
                _handle.write("x")
        except OSError:
            _refused += 1
    raise ValueError(f"held {_held} MB of SysV shared memory; {_refused} refusals caught")
'''
LOGGING_TASK = """
import json, os
from trace_bench.tasks.llm4ad import circle_packing
from trace_bench.tasks.llm4ad.problem import HeuristicGuide, build_problem


class LoggingGuide(HeuristicGuide):
    def set_trace_bench_context(self, **context):
        self.log = os.path.join(context["artifacts_dir"], "evaluations.jsonl")

    def evaluate(self, program, info=None):
        evaluation = super().evaluate(program, info)
        with open(self.log, "a") as fh:
            fh.write(json.dumps({"score": evaluation.score, "feedback": evaluation.feedback}) + "\\n")
        return evaluation


def build_trace_problem(**eval_kwargs):
    problem = build_problem(circle_packing.TASK, {**eval_kwargs, "memory_mb": 128})
    problem["guide"] = LoggingGuide(circle_packing.TASK, problem["guide"].settings)
    return problem
"""

# Finding 7, the flags.  No fix stops a provider that knows a public benchmark: this equation rebuilds
# bactgrow's data from the task's published generator (its default seeds) and returns the noisy targets
# themselves, an MSE of 0 on both splits; and the numbers of a task folder whose declared best known value
# is below what its rules allow reach 250 % of it.  The audit must say so.
REGENERATED = '''import numpy as np


def equation(B, S, T, pH, params):
    import builtins
    table = builtins.__dict__.setdefault("_regenerated", {})
    if not table:
        for seed in (2024, 3024):
            gen = np.random.default_rng([seed, 8])
            b, s, t, p = (gen.uniform(lo, hi, 500) for lo, hi in ((0.1, 5.5), (0.05, 10.0), (15.0, 45.0), (4.5, 9.0)))
            law = (1.2 * b * s / (1.8 + s) * (1 - b / 6.0) * np.exp(-(((t - 33.0) / 6.0) ** 2))
                   * np.exp(-(((p - 6.8) / 1.1) ** 2)))
            table.update(zip(b.tolist(), (law * (1 + 0.01 * gen.standard_normal(500))).tolist()))
    return np.array([table.get(value, 0.0) for value in np.ravel(B).tolist()])
'''
ALL_ONES = '''def make_numbers():
    return [1.0, 1.0, 1.0, 1.0, 1.0]
'''


# Finding 4 (the fix is issue 39's): a split evaluator whose score() alone should read the labels, in its
# folder's private/; the program looks for them wherever the folder's files are.
LABELS = [(7 * i + 3) % 11 % 2 for i in range(200)]
PRIVATE_EVALUATOR = '''import importlib.util
import json
from pathlib import Path


def run(program_path):
    spec = importlib.util.spec_from_file_location("program", program_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return [int(x) for x in module.labels_guess()]


def score(data):
    labels = json.loads((Path(__file__).parent / "private" / "labels.json").read_text())
    right = sum(int(a == b) for a, b in zip(data, labels)) if len(data) == len(labels) else 0
    return {"combined_score": right / len(labels)}
'''
GUESS = '''# EVOLVE-BLOCK-START
def labels_guess():
    return [0] * 200
# EVOLVE-BLOCK-END
'''
READ_LABELS = '''def labels_guess():
    import json, os
    from pathlib import Path
    places = [Path.cwd(), *Path.cwd().parents, Path("/benchmark"), Path("/tmp")]
    for place in places:
        for found in list(place.glob("**/private/labels.json"))[:1] if place.exists() else []:
            try:
                return json.loads(found.read_text())
            except (OSError, ValueError):
                pass
    return [0] * 200
'''


@pytest.fixture(scope="module")
def run_a(tmp_path_factory: pytest.TempPathFactory) -> Run:
    tmp_path = tmp_path_factory.mktemp("scoring")
    root = tmp_path / "root"
    root.mkdir()
    (root / "logged_packing.py").write_text(LOGGING_TASK)
    shutil.copytree(FIXTURES / "discovery" / "split_numbers", root / "split_numbers")
    config = root / "split_numbers" / "config.yaml"
    config.write_text(config.read_text().replace("best_known: 5.0", "best_known: 2.0"))
    (root / "private_labels" / "private").mkdir(parents=True)
    (root / "private_labels" / "evaluator.py").write_text(PRIVATE_EVALUATOR)
    (root / "private_labels" / "initial_program.py").write_text(GUESS)
    (root / "private_labels" / "private" / "labels.json").write_text(json.dumps(LABELS))
    attacks = [Attack("jacobian", JACOBIAN, replace=True, matching="def equation(x, v, params)"),
               Attack("regenerated data", REGENERATED, replace=True, matching="def equation(B, S, T, pH, params)"),
               Attack("subnormal steps", SUBNORMAL_STEPS, replace=True, function="step_heights"),
               Attack("tiny grid", TINY_GRID, replace=True, function="spread_points"),
               Attack("clock", CLOCK, replace=True, matching="question.strip()"),
               Attack("careful", CAREFUL, replace=True, function="pack_circles"),
               Attack("all ones", ALL_ONES, replace=True, function="make_numbers"),
               Attack("read the labels", READ_LABELS, replace=True, function="labels_guess")]
    body = ("tasks:\n  - id: llm4ad:oscillator1\n    eval_kwargs: {n_instances: 4}\n  - llm4ad:bactgrow\n"
            "  - discovery:first_autocorrelation\n  - discovery:min_max_distance_16_2d\n  - discovery:split_numbers\n"
            "  - internal:multiobjective_bbeh\n  - logged_packing\n  - discovery:private_labels\n"
            f"trainers:\n  - id: {ONE_STEP}\n")
    return _start(tmp_path, attacks, body, root=root)


def test_an_equation_cannot_read_its_targets_through_the_fitters_probes(run_a: Run) -> None:
    """Finding 1: -MSE 1.4e-20 (train) and 3.3e-21 (test) against the true law's 1.1e-6, with no flag."""
    row = run_a.row("llm4ad:oscillator1")
    _scored(row)
    noise = -0.5e-6  # the true law scores about -1.1e-6: anything better learnt the noise
    assert float(row["score_best"]) < noise and float(row["score_test_best"]) < noise, row


def test_a_construction_cannot_beat_the_best_known_value_by_rounding(run_a: Run) -> None:
    """Finding 2: first_autocorrelation scored 219,396 % of the best known value, min_max_distance_16_2d read a
    4 x 4 grid (18) as 10; both `score_trust: trusted`."""
    for task in ("discovery:first_autocorrelation", "discovery:min_max_distance_16_2d"):
        row = run_a.row(task)
        _scored(row)
        assert row["score_trust"] == "trusted"
        assert float(row["score_best"]) < 1.0 and float(row["pct_of_best_known"]) < 100.0, row


def test_a_program_cannot_report_its_own_execution_time(run_a: Run) -> None:
    """Finding 6: internal:multiobjective_bbeh took execution_time_s from the program's own clock: -1000 s,
    weighted objective 301 instead of at most 1."""
    row = run_a.row("internal:multiobjective_bbeh")
    _scored(row)
    assert float(row["score_best"]) <= 1.0, row  # accuracy 1 at most, less 0.3 x a time that cannot be negative
    [record] = [r for r in rows_of(run_a.run) if r["job_id"] == row["job_id"]]
    assert record["score_dict_best"]["execution_time_s"] >= 0, record["score_dict_best"]


def test_sysv_shared_memory_is_refused_so_a_call_holds_no_memory_beyond_its_limit(run_a: Run) -> None:
    """Finding 5: SysV shared memory was allowed: with a 256 MB call limit the host lost 1.7 GB until the call
    ended.  Here the call's limit is 128 MB and the candidate tries to hold 256 MB in segments."""
    log = (run_a.job("llm4ad:logged_packing") / "artifacts" / "evaluations.jsonl").read_text()
    held = [int(n) for n in re.findall(r"held (\d+) MB of SysV", log)]
    assert held and max(held) == 0, held


def test_refusals_the_candidate_catches_are_counted_from_the_sandboxs_record(run_a: Run) -> None:
    """Finding 7: a refusal the candidate caught left no denial: the audit saw nothing."""
    row = run_a.row("llm4ad:logged_packing")
    kinds = json.loads(row["sandbox_denial_kinds"])
    assert kinds.get("network", 0) >= 1 and kinds.get("process", 0) >= 1 and kinds.get("syscall", 0) >= 1, kinds
    # a checkout under /tmp lies in the call's private /tmp: the package-folder write lands there, no attempt
    outside = 2 if Path(__file__).resolve().is_relative_to("/tmp") else 3
    assert kinds.get("file", 0) >= outside, f"each caught write outside /tmp is on the supervisor's record: {kinds}"
    events = [json.loads(line) for line in (run_a.job("llm4ad:logged_packing") / "events.jsonl").read_text().splitlines()]
    denied = [e for e in events if e["type"] == "sandbox_denial"]
    assert denied and all(e["caught"] for e in denied)
    assert any("shmget" in e["detail"] for e in denied) and any("socket" in e["detail"] for e in denied)
    assert any("/etc/planted-by-candidate" in e["detail"] for e in denied if e["kind"] == "file")
    assert int(row["sandbox_denials"]) == sum(e["count"] for e in denied)


def test_a_split_evaluators_private_files_never_reach_the_candidate(run_a: Run) -> None:
    """Finding 4: the whole folder was sent to the sandbox, so a program that opened the labels only score()
    should read scored 1.000 on random labels (the honest rule: 0.49), recorded trusted."""
    row = run_a.row("discovery:private_labels")
    _scored(row)
    honest = 1 - sum(LABELS) / len(LABELS)  # all zeros
    assert row["score_trust"] == "trusted" and float(row["score_best"]) == pytest.approx(honest), row


def test_scores_beyond_the_data_or_the_best_known_value_are_flagged(run_a: Run) -> None:
    """Finding 7: findings 1 and 2 got no flag: a fit better than the data's noise, and a score beyond the best
    known value, passed unremarked."""
    equation, numbers = run_a.row("llm4ad:bactgrow"), run_a.row("discovery:split_numbers")
    assert float(equation["score_best"]) > -1e-12, "the regenerated targets fit exactly"
    assert json.loads(equation["integrity_flags"]) == ["beyond_noise"]
    assert {"score_best", "score_test_best"} <= {flag["field"] for flag in run_a.integrity("llm4ad:bactgrow")["flags"]}
    assert float(numbers["pct_of_best_known"]) == pytest.approx(250.0)
    assert json.loads(numbers["integrity_flags"]) == ["beyond_best_known"]
    [flag] = run_a.integrity("discovery:split_numbers")["flags"]
    assert flag["verified"] is None and "no exact re-check" in flag["detail"]


# ---------------------------------------------------------------------------------------------------
# Run B: two steps, the prompts recorded (findings 7 and 8)

# Finding 8: a rewritten function, right but for one input, returns 12 MB there (kept as the best so far,
# its output and the guide's feedback quoting it went into the next prompt: 24 M characters), and another
# changes the function's signature (opto's binding raised TypeError outside the sandbox: the job failed).
HUGE_OUTPUT = '''def transform(self, x):
    return 2 * x + 1 if x else "A" * 12_000_000
'''
OTHER_SIGNATURE = '''def compose(self, greeting, name, punctuation):
    return f"{greeting}, {name}{punctuation}"
'''


def _humaneval_attacks() -> list[Attack]:
    """The provider knows the benchmark (it is public): for the first problem it proposes the reference
    solution with that problem's held-out tests hidden in the code, zlib-compressed and base64-encoded, and
    printed when the code loads; for the second, a function that returns None, whose failures the feedback
    describes."""
    from trace_bench.tasks.humaneval.data import select

    first, second = select(seed=3, num_problems=2)
    held_out = first.held_out_info()
    assert held_out is not None
    hidden = base64.b64encode(zlib.compress(held_out["test"].encode())).decode()
    carrier = (f"_HIDDEN = {hidden!r}\nprint(__import__('zlib').decompress(__import__('base64').b64decode(_HIDDEN))"
               f".decode())\n{first.reference_code}")
    returns_none = second.prompt.rstrip("\n") + "\n    return None\n"
    return [Attack("hidden held-out tests", carrier, replace=True, function=first.entry_point),
            Attack("returns None", returns_none, replace=True, function=second.entry_point)]


@pytest.fixture(scope="module")
def run_b(tmp_path_factory: pytest.TempPathFactory) -> Run:
    attacks = [Attack("huge output", HUGE_OUTPUT, replace=True, function="transform"),
               Attack("other signature", OTHER_SIGNATURE, replace=True, function="compose"),
               *_humaneval_attacks()]
    body = ("tasks:\n  - internal:code_param\n  - trace_examples:greeting_stub\n  - id: humaneval:subset\n"
            f"    eval_kwargs: {{num_problems: 2, seed: 3}}\ntrainers:\n  - id: {SEARCH}\n")
    return _start(tmp_path_factory.mktemp("prompts"), attacks, body, record=True)


def test_a_candidates_output_cannot_flood_the_next_prompt(run_b: Run) -> None:
    """Finding 8: a code node returning 12 MB made the next optimizer prompt 24 M characters."""
    run_b.row("internal:code_param")
    assert run_b.shown("* 12_000_000"), "the proposal was kept and shown again"
    assert max(len(body) for body in run_b.server.bodies) < 100_000, max(len(b) for b in run_b.server.bodies)
    assert run_b.shown("trainable function's output may be at most"), "its error was fed back"


def test_a_proposal_with_another_signature_scores_the_failure_score(run_b: Run) -> None:
    """Finding 8: a proposal with another signature ended the job `failed` (TypeError outside the sandbox)."""
    run_b.row("trace_examples:greeting_stub")  # ok, not failed
    assert run_b.shown("def compose(self, greeting, name, punctuation)")
    assert run_b.shown("cannot be called as the task calls it"), "the error is its feedback"


def test_humaneval_feedback_never_shows_a_tests_expected_value(run_b: Run) -> None:
    """Finding 8: HumanEval feedback printed the failing test's expected value, and humaneval:subset had no
    held-out split."""
    assert not run_b.shown("assert candidate(") and not run_b.shown("got None, expected")
    assert run_b.shown("it returned None"), "the failure was described"
    assert run_b.row("humaneval:subset")["score_test_best"] not in ("", None), "the held-out split is scored"


def test_the_audit_finds_held_out_tests_hidden_in_encodings_and_in_candidate_outputs(run_b: Run) -> None:
    """Finding 7: the leakage scan matched verbatim text only (0 of 5 hidden tests once zlib+base64
    encoded) and never looked at what candidates output."""
    row = run_b.row("humaneval:subset")
    assert int(row["leaked_test_items"] or 0) >= 1, row
    findings = run_b.integrity("humaneval:subset")["findings"]
    assert any(f["encoding"] == "base64+zlib" and f["state"] in ("best", "final") for f in findings), findings
    assert any(f["state"] == "outputs" for f in findings), findings


# ---------------------------------------------------------------------------------------------------
# Run C: KernelBench on the stand-in torch (finding 3)

# The kernel computes its output only where the evaluator will look (the old digest's positions came
# from the run's seed, which the candidate's process holds), and claims projections of zero, which the
# old bound always let through.  Against whole outputs it can only compute a part.
SAMPLED_ONLY = '''
import sys as _sys
import numpy as _np
_evaluator = _sys.modules.get("trace_bench.tasks.kernelbench.local_eval")
if _evaluator is not None and not getattr(_evaluator, "_sampled_only", False):
    _evaluator._sampled_only = True

    def _sampled(model, namespace, seed, reps, device):
        first = [_np.asarray(_evaluator._inputs(namespace, seed + i, device)[0], dtype=_np.float64)
                 for i in range(reps)]
        size = first[0].size
        if hasattr(_evaluator, "FULL_VALUES") and size > _evaluator.FULL_VALUES:
            positions = _np.random.default_rng(seed).choice(size, size=_evaluator.FULL_VALUES, replace=False)
            values = _np.max([_np.maximum(x.reshape(-1)[positions], 0) for x in first], axis=0)
            return {"digest": {"shape": list(first[0].shape), "positions": positions, "values": values,
                               "projections": [0.0] * _evaluator.PROJECTIONS, "abs_sum": 0.0}}
        peak = _np.zeros(size, dtype=_np.float32)
        peak[:4096] = _np.max([_np.maximum(x.reshape(-1)[:4096], 0) for x in first], axis=0)
        return peak.reshape(first[0].shape)

    _evaluator._run = _sampled
'''


def test_a_kernel_cannot_compute_only_the_outputs_that_are_checked(tmp_path: Path) -> None:
    """Finding 3: computing the 4,096 sampled outputs and sending zero projections was judged correct, with a
    2.68x speedup where an honest copy of the model gets 0.85x."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "nvidia-smi").write_text("#!/bin/sh\necho 'NVIDIA-SMI (test stand-in)'\n")
    (bin_dir / "nvidia-smi").chmod(0o755)
    env = {"PYTHONPATH": os.pathsep.join(p for p in (str(FIXTURES / "fake_torch"), os.environ.get("PYTHONPATH")) if p),
           "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "TRACE_BENCH_KERNELBENCH_URL": None}
    body = f"tasks:\n  - id: kernelbench:level0/relu\n    eval_kwargs: {{trials: 2}}\ntrainers:\n  - id: {ONE_STEP}\n"
    run = _start(tmp_path, [Attack("sampled only", SAMPLED_ONLY)], body, env=env)
    row = run.row("kernelbench:level0/relu")
    _scored(row)
    history = (run.job("kernelbench:level0/relu") / "artifacts" / "state_history.jsonl").read_text()
    assert "_sampled_only" not in history, "a state computing a part of its output was kept as the best"
    assert float(row["score_best"]) < 1.6, row  # the reference against itself, about 1
