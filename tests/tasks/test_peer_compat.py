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


SHINKA_EVALUATE = '''import numpy as np
from shinka.core import run_shinka_eval


def _kwargs(index):
    return {"scale": index + 1}


def _valid(result):
    return (result >= 0, None if result >= 0 else "negative")


def _aggregate(results):
    return {"combined_score": float(np.mean(results)), "public": {"runs": len(results)},
            "private": {"raw": list(results)}}


def main(program_path, results_dir):
    run_shinka_eval(program_path=program_path, results_dir=results_dir, experiment_fn_name="run",
                    num_runs=3, get_experiment_kwargs=_kwargs, validate_fn=_valid,
                    aggregate_metrics_fn=_aggregate)
'''


def test_a_shinkaevolve_evaluator_runs_without_shinkaevolve_installed(tmp_path: Path) -> None:
    # ShinkaEvolve's examples score through `from shinka.core import run_shinka_eval`: without the library
    # (some thirty dependencies: LLM clients, a web UI) every such folder was unavailable
    for name, body in (("shinka_ok", "    return 0.25 * scale\n"), ("shinka_negative", "    return -scale\n"),
                       ("shinka_raises", "    raise ValueError('no packing')\n")):
        path = tmp_path / name
        path.mkdir()
        (path / "evaluate.py").write_text(SHINKA_EVALUATE, encoding="utf-8")
        (path / "initial.py").write_text(f"# EVOLVE-BLOCK-START\ndef run(scale):\n{body}# EVOLVE-BLOCK-END\n")
        (path / "run_evo.py").write_text("from shinka.core import ShinkaEvolveRunner, EvolutionConfig\n")
    ok = initial(build("discovery:shinka_ok", root=tmp_path))
    assert ok.ok and ok.score == pytest.approx((0.25 + 0.5 + 0.75) / 3, abs=1e-15), ok.feedback
    assert (ok.metrics["num_valid_runs"], ok.metrics["num_invalid_runs"], ok.metrics["runs"]) == (3, 0, 3)
    negative = initial(build("discovery:shinka_negative", root=tmp_path))
    assert not negative.ok and negative.score == 0.0 and "Validation failed: negative" in negative.feedback
    raises = initial(build("discovery:shinka_raises", root=tmp_path))
    assert not raises.ok and raises.score == 0.0 and "no packing" in raises.feedback


ALARMED = '''import importlib.util, json, os, signal, sys


def _alarm(signum, frame):
    raise TimeoutError("too slow")


def score(program_path):
    signal.signal(signal.SIGALRM, _alarm)  # only the main thread may set a handler
    signal.alarm(20)
    try:
        spec = importlib.util.spec_from_file_location("candidate", program_path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.value()
    finally:
        signal.alarm(0)
'''


def test_scripts_run_in_the_main_thread_as_their_own_process_runs_them(tmp_path: Path) -> None:
    # ShinkaEvolve starts evaluate.py and SkyDiscover's evaluate.sh starts evaluator.py as processes of
    # their own; their examples (game_2048, SkyDiscover's circle_packing) set signal alarms, which failed
    # here with "signal only works in main thread" and scored 0.0
    shinka = tmp_path / "alarmed_shinka"
    shinka.mkdir()
    (shinka / "evaluate.py").write_text(ALARMED + '''

def main(program_path, results_dir):
    os.makedirs(results_dir, exist_ok=True)
    json.dump({"combined_score": score(program_path)}, open(os.path.join(results_dir, "metrics.json"), "w"))
    json.dump({"correct": True}, open(os.path.join(results_dir, "correct.json"), "w"))
''', encoding="utf-8")
    (shinka / "initial.py").write_text(PROGRAM, encoding="utf-8")
    container = tmp_path / "alarmed_container"
    (container / "evaluator").mkdir(parents=True)
    (container / "evaluator" / "Dockerfile").write_text("FROM python:3.11-slim\nWORKDIR /benchmark\nCOPY . .\n")
    (container / "evaluator" / "evaluate.sh").write_text('#!/bin/bash\npython /benchmark/evaluator.py "$1"\n')
    (container / "evaluator" / "evaluator.py").write_text(ALARMED + '''

if __name__ == "__main__":
    print(json.dumps({"status": "success", "combined_score": score(sys.argv[1]), "metrics": {}}))
''', encoding="utf-8")
    (container / "initial_program.py").write_text(PROGRAM, encoding="utf-8")
    for name in ("alarmed_shinka", "alarmed_container"):
        evaluation = initial(build(f"discovery:{name}", root=tmp_path))
        assert evaluation.ok and evaluation.score == 0.5, (name, evaluation.feedback)


def test_a_script_past_its_timeout_is_interrupted_in_the_main_thread(tmp_path: Path) -> None:
    path = tmp_path / "endless_shinka"
    path.mkdir()
    (path / "evaluate.py").write_text("def main(program_path, results_dir):\n    while True:\n        pass\n")
    (path / "initial.py").write_text(PROGRAM, encoding="utf-8")
    (path / "run_evo.py").write_text('job = LocalJobConfig(eval_program_path="evaluate.py", time="00:00:01")\n')
    raw = build("discovery:endless_shinka", root=tmp_path)
    evaluation = initial(raw)
    assert not evaluation.ok and evaluation.status == "timeout" and evaluation.score == 0.0, evaluation.feedback
    assert "timed out" in evaluation.feedback and not raw["guide"]._cache


SCORE_VALUE = ("import importlib.util\n\n"
               "def evaluate(program_path):\n"
               "    spec = importlib.util.spec_from_file_location('candidate', program_path)\n"
               "    module = importlib.util.module_from_spec(spec)\n"
               "    spec.loader.exec_module(module)\n"
               "    return {'combined_score': module.value()}\n")


def test_an_initial_program_named_as_openevolves_command_line_names_it(tmp_path: Path) -> None:
    # OpenEvolve takes the initial program on its command line; sldbench's folders ship init_program.py,
    # which was not read: the search started from an empty program and the initial score was the failure's
    path = folder(tmp_path, "init_named", SCORE_VALUE, program=PROGRAM)
    (path / "initial_program.py").rename(path / "init_program.py")
    raw = build("discovery:init_named", root=tmp_path)
    assert raw["discovery_program"].block.strip() == "def value():\n    return 0.5"
    evaluation = initial(raw)
    assert evaluation.ok and evaluation.score == 0.5, evaluation.feedback


def test_eval_kwargs_chooses_the_initial_program(tmp_path: Path) -> None:
    from trace_bench._util.errors import ConfigError

    path = folder(tmp_path, "chosen", SCORE_VALUE, program=PROGRAM)
    (path / "programs").mkdir()
    (path / "programs" / "better.py").write_text(PROGRAM.replace("0.5", "0.75"), encoding="utf-8")
    assert initial(build("discovery:chosen", root=tmp_path)).score == 0.5
    assert initial(build("discovery:chosen", {"initial_program": "programs/better.py"}, root=tmp_path)).score == 0.75
    (tmp_path / "outside.py").write_text(PROGRAM, encoding="utf-8")
    (path / "link.py").symlink_to(tmp_path / "outside.py")
    for refused in ("../outside.py", str(tmp_path / "outside.py"), "link.py", "missing.py"):
        with pytest.raises(ConfigError, match="initial_program"):
            build("discovery:chosen", {"initial_program": refused}, root=tmp_path)
