"""What a compatibility round over the peers' shipped examples found (OpenEvolve's, SkyDiscover's and
ShinkaEvolve's repositories, each example run through trace-bench and through the library itself),
each replayed on a small folder of ours in the same shape.  Guide-level: no job runs here."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.tasks.test_peer_settings import build, folder, initial

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox targets Linux")

PROGRAM = "# EVOLVE-BLOCK-START\ndef value():\n    return 0.5\n# EVOLVE-BLOCK-END\n"


def test_an_evaluator_that_runs_an_event_loop_scores_what_it_returns(tmp_path: Path) -> None:
    # OpenEvolve's rust_adaptive_sort wraps its work in asyncio.run: the loop's self-pipe (a socketpair)
    # was refused in the sandbox, so every program scored 0.0 with a PermissionError as feedback
    evaluator = ("import asyncio, importlib.util\n\n"
                 "async def _score(path):\n"
                 "    await asyncio.sleep(0)\n"
                 "    spec = importlib.util.spec_from_file_location('candidate', path)\n"
                 "    module = importlib.util.module_from_spec(spec)\n"
                 "    spec.loader.exec_module(module)\n"
                 "    return {'combined_score': module.value()}\n\n"
                 "def evaluate(program_path):\n"
                 "    return asyncio.run(_score(program_path))\n")
    folder(tmp_path, "event_loop", evaluator, program=PROGRAM)
    evaluation = initial(build("discovery:event_loop", root=tmp_path))
    assert evaluation.ok and evaluation.score == 0.5, evaluation.feedback


@pytest.mark.parametrize(("start", "end"), [
    ("// EVOLVE-BLOCK-START", "// EVOLVE-BLOCK-END"),  # OpenEvolve's rust_adaptive_sort
    ("! EVOLVE-BLOCK-START", "! EVOLVE-BLOCK-END"),  # ShinkaEvolve's fortran_heat_diffusion
    ("(* EVOLVE-BLOCK-START *)", "(* EVOLVE-BLOCK-END *)"),  # ShinkaEvolve's wolfram_gcd_sum
])
def test_the_block_is_marked_with_the_programs_own_comment_syntax(start: str, end: str) -> None:
    # only '#' markers were read: a Rust, Fortran or Wolfram program was trainable as a whole, its
    # fixed entry point and harness included
    from trace_bench.tasks.discovery.program import parse_program

    source = f"fixed header\n{start}\nthe block\n  {end}\nfixed footer\n"
    program = parse_program(source)
    assert (program.prefix, program.block, program.suffix) == (
        f"fixed header\n{start}\n", "the block\n", f"  {end}\nfixed footer\n")
    assert program.render("another block") == source.replace("the block", "another block")
    assert not parse_program("x = '// not a marker EVOLVE-BLOCK-START'\n").marked


def test_openevolves_feature_dimensions_stay_out_of_an_average_score(tmp_path: Path) -> None:
    # OpenEvolve ranks a result without combined_score by the average of its numbers *but* its MAP-Elites
    # feature dimensions (database.feature_dimensions, complexity and diversity by default); they were
    # averaged in, so a program's length moved its score
    evaluator = "def evaluate(program_path):\n    return {'accuracy': 0.6, 'speed': 0.2, 'complexity': 120.0}\n"
    folder(tmp_path, "default_features", evaluator)
    folder(tmp_path, "own_features", evaluator, "database:\n  feature_dimensions: [speed, score]\n")
    folder(tmp_path, "skydiscover", evaluator, "search:\n  type: adaevolve\n")  # SkyDiscover averages them all
    scores = {name: initial(build(f"discovery:{name}", root=tmp_path)).score
              for name in ("default_features", "own_features", "skydiscover")}
    assert scores == pytest.approx({"default_features": (0.6 + 0.2) / 2, "own_features": (0.6 + 120.0) / 2,
                                    "skydiscover": (0.6 + 0.2 + 120.0) / 3}, abs=1e-12)
    assert "database.feature_dimensions" not in build("discovery:own_features", root=tmp_path)["guide"].task.ignored_keys
