"""Issue 40's findings replayed end to end: scores a candidate could inflate, through real-mode runs.

Each test starts ``trace-bench run`` in real mode against the hostile fake provider
(``FakeLLMServer(attacks=...)``, :mod:`trace_bench.llm.attack`), whose every proposal of code carries
the attack, and asserts on the run's records that the attack gained nothing and, where the issue says
so, that the audit saw it.  Each fails on the code before issue 40's fixes (checked by running this
file with that tree first on ``PYTHONPATH``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sandbox.hostile import Trap, real_run
from trace_bench.llm.attack import Attack
from trace_bench.llm.fake_server import FakeLLMServer

pytestmark = [pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox targets Linux"),
              pytest.mark.usefixtures("strong")]

# two steps: the second step's prompt shows the first step's proposals, so the provider's record proves
# that the attack was proposed (and scored)
SEARCH = "PrioritySearch\n    params_variants:\n      - {ps_steps: 2, ps_batches: 1, ps_candidates: 2, ps_proposals: 2}"


@pytest.fixture
def trap(tmp_path: Path) -> Iterator[Trap]:
    planted = Trap(tmp_path)
    yield planted
    planted.close()


def _ok(proc: object, rows: list[dict[str, str]]) -> None:
    assert rows and all(row["status"] == "ok" for row in rows), (rows, getattr(proc, "stderr", ""))


def _proposed(server: FakeLLMServer, marker: str) -> bool:
    """Whether a prompt showed the attack back (the provider proposed it and the job scored it)."""
    return any(marker in body for body in server.bodies)


def _integrity(run: Path, row: dict[str, str]) -> dict[str, object]:
    return json.loads((run / "jobs" / row["job_id"] / "artifacts" / "integrity.json").read_text())  # type: ignore[no-any-return]


# Finding 1: the equation answers the fitter's probes so that each Levenberg-Marquardt step echoes ten
# residuals (a Jacobian of unit columns, one per parameter), remembers them, and after ~60 steps predicts
# every target.  It keeps its state between calls; a first call in a fresh process is the fit's start.
JACOBIAN = '''
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


def test_an_equation_cannot_read_its_targets_through_the_fitters_probes(tmp_path: Path, trap: Trap) -> None:
    """Finding 1: -MSE 1.4e-20 (train) and 3.3e-21 (test) against the true law's 1.1e-6, with no flag."""
    body = f"tasks:\n  - id: llm4ad:oscillator1\n    eval_kwargs: {{n_instances: 4}}\ntrainers:\n  - id: {SEARCH}\n"
    with FakeLLMServer(attacks=[Attack("jacobian", JACOBIAN)], record=True) as server:
        proc, run, rows = real_run(tmp_path, server, trap, body)
    _ok(proc, rows)
    assert _proposed(server, "_jacobian_attack")
    [row] = rows
    noise = -0.5e-6  # the true law scores about -1.1e-6: anything better learnt the noise
    assert float(row["score_best"]) < noise and float(row["score_test_best"]) < noise, row


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


def test_a_construction_cannot_beat_the_best_known_value_by_rounding(tmp_path: Path, trap: Trap) -> None:
    """Finding 2: first_autocorrelation scored 219,396 % of the best known value, min_max_distance_16_2d read a
    4 x 4 grid (18) as 10; both `score_trust: trusted`."""
    attacks = [Attack("subnormal steps", SUBNORMAL_STEPS, replace=True, function="step_heights"),
               Attack("tiny grid", TINY_GRID, replace=True, function="spread_points")]
    body = (f"max_workers: 2\ntasks: [discovery:first_autocorrelation, discovery:min_max_distance_16_2d]\n"
            f"trainers:\n  - id: {SEARCH}\n")
    with FakeLLMServer(attacks=attacks, record=True) as server:
        proc, run, rows = real_run(tmp_path, server, trap, body)
    _ok(proc, rows)
    assert _proposed(server, "1.57e-162") and _proposed(server, "1.5794011951465e-162")
    for row in rows:
        assert row["score_trust"] == "trusted"
        assert float(row["score_best"]) < 1.0 and float(row["pct_of_best_known"]) < 100.0, row
