"""A peer task folder's own settings apply (the config eval_kwargs chooses, timeouts, cascade thresholds,
system messages inline or from a file, the files its evaluator reads), and its results score by the
peers' rules: seeded alike in and out of process, wall-clock metrics out of the feedback, a result
without a number 0.0, ``private/`` never in the sandbox.  Guide-level: no job runs here."""

from __future__ import annotations

import random
import shutil
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES
from trace_bench._util.errors import ConfigError
from trace_bench.tasks.discovery import protocols, results

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox targets Linux")

ROOT = FIXTURES / "peer_folders"


def build(task: str, eval_kwargs: dict[str, Any] | None = None, root: Path = ROOT) -> dict[str, Any]:
    from trace_bench.registry.tasks import TaskCatalog

    return TaskCatalog.create(root).build(task, dict(eval_kwargs or {}))


def initial(raw: dict[str, Any]) -> Any:
    return raw["guide"].evaluate(raw["discovery_program"].block)


def folder(root: Path, name: str, evaluator: str, config: str | None = None, program: str = "x = 1\n") -> Path:
    path = root / name
    path.mkdir(parents=True)
    (path / "evaluator.py").write_text(evaluator, encoding="utf-8")
    (path / "initial_program.py").write_text(program, encoding="utf-8")
    if config is not None:
        (path / "config.yaml").write_text(config, encoding="utf-8")
    return path


def test_the_config_eval_kwargs_chooses_sets_the_timeout_the_cascade_and_the_message() -> None:
    # OpenEvolve ships config_phase_1.yaml and config_phase_2.yaml and no config.yaml: only a file
    # named config.yaml was read, so such a folder ran with none of its settings.
    default, phase_2 = build("discovery:oe_packing"), build("discovery:oe_packing", {"config": "config_phase_2.yaml"})
    assert (default["metadata"]["timeout_s"], phase_2["metadata"]["timeout_s"]) == (20.0, 45.0)
    assert default["metadata"]["config_file"] == "config_phase_1.yaml"
    assert "Phase one" in default["optimizer_kwargs"]["objective"]
    assert "Phase two" in phase_2["optimizer_kwargs"]["objective"]
    first, second = initial(default), initial(phase_2)
    assert first.ok and second.ok, (first.feedback, second.feedback)
    # phase 1's threshold (0.9) stops the cascade after stage 1; phase 2's (0.2) lets stage 2 run
    assert "stage1_points" in first.metrics and "smallest_distance" not in first.metrics
    assert {"stage1_points", "smallest_distance", "eval_time"} <= set(second.metrics)
    assert first.score == second.score  # both stages compute the same score of this program
    with pytest.raises(ConfigError, match="config_phase_1.yaml, config_phase_2.yaml"):
        build("discovery:oe_packing", {"config": "config_phase_3.yaml"})


def test_cascade_thresholds_decide_how_far_an_evaluation_goes(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "oe_minimize", tmp_path / "low")
    shutil.copytree(ROOT / "oe_minimize", tmp_path / "direct")
    config = (ROOT / "oe_minimize" / "config.yaml").read_text(encoding="utf-8")
    (tmp_path / "low" / "config.yaml").write_text(config.replace("[1.3]", "[0.1]"), encoding="utf-8")
    (tmp_path / "direct" / "config.yaml").write_text(
        config.replace("cascade_thresholds: [1.3]", "cascade_evaluation: false"), encoding="utf-8")
    shipped = initial(build("discovery:oe_minimize"))
    low = initial(build("discovery:low", root=tmp_path))
    direct = initial(build("discovery:direct", root=tmp_path))
    assert "runs_successfully" in shipped.metrics and "reliability_score" not in shipped.metrics  # stage 1 only
    assert {"runs_successfully", "reliability_score"} <= set(low.metrics)  # stage 1, then stage 2, merged
    assert "reliability_score" in direct.metrics and "runs_successfully" not in direct.metrics  # evaluate() only
    # the merged score is stage 2's: another random draw than stage 1's (the stages share the seeded stream)
    assert low.score != shipped.score and low.score == low.metrics["combined_score"]


def test_an_evaluation_past_its_timeout_fails_as_the_peers_fail_it_and_is_not_cached(tmp_path: Path) -> None:
    evaluator = "import time\n\ndef evaluate(path):\n    time.sleep(30)\n    return {'combined_score': 1.0}\n"
    folder(tmp_path, "slow", evaluator, "evaluator:\n  timeout: 1\n")
    raw = build("discovery:slow", root=tmp_path)
    assert raw["guide"].task.wall_limit_s < 30  # the folder's timeout, then the sandbox's margin
    evaluation = initial(raw)
    assert not evaluation.ok and evaluation.status == "timeout" and "timed out" in evaluation.feedback
    assert evaluation.score == 0.0  # OpenEvolve's {"error": 0.0, "timeout": True}
    assert not raw["guide"]._cache  # it depends on the machine's load: asked again next time


def test_a_system_message_of_any_length_is_text_and_a_short_file_name_is_the_file() -> None:
    # a one-line system_message of 414 characters was tried as a path: [Errno 36] File name too long
    minimize = build("discovery:oe_minimize")
    message = minimize["discovery_system_message"]
    assert len(message) == 405 and "\n" not in message and message in minimize["optimizer_kwargs"]["objective"]
    points = build("discovery:sd_points/11")
    assert points["discovery_system_message"] == (ROOT / "sd_points" / "11" / "task_prompt.md").read_text()
    shinka = build("discovery:shinka_sine")
    assert shinka["discovery_system_message"].startswith("You are an expert in numerical approximation")
    assert shinka["metadata"]["suggested_iterations"] == 5  # evo_config.num_generations


def test_the_evaluator_finds_its_config_and_its_files_in_the_sandbox(tmp_path: Path) -> None:
    # config.yaml was withheld from the sandbox, so an evaluator that reads its own config failed
    evaluator = ("import os, yaml\n\ndef evaluate(path):\n"
                 "    config = yaml.safe_load(open(os.path.join(os.path.dirname(__file__), 'config.yaml')))\n"
                 "    size = len(open('data/rows.txt').read().split())\n"
                 "    return {'combined_score': float(config['task']['weight'] * size)}\n")
    path = folder(tmp_path, "reads_config", evaluator, "task:\n  weight: 2.5\n")
    (path / "data").mkdir()
    (path / "data" / "rows.txt").write_text("a b c d\n")
    evaluation = initial(build("discovery:reads_config", root=tmp_path))
    assert evaluation.ok and evaluation.score == 10.0, evaluation.feedback


def test_private_files_are_read_by_score_in_the_job_and_never_reach_the_sandbox() -> None:
    from trace_bench.tasks.discovery.folder import load_folder

    assert not [name for name in load_folder(ROOT / "split_private").files() if name.startswith("private")]
    raw = build("discovery:split_private")
    evaluation = initial(raw)
    assert evaluation.ok and evaluation.metrics["private_visible"] == 0.0  # run() found no private/
    assert evaluation.score == -4.0  # score() read private/answer.json (7.0) in the job
    assert raw["failure_score"] == -100.0  # the folder's declared failure score


def test_randomness_is_seeded_alike_in_the_process_and_in_child_interpreters(tmp_path: Path) -> None:
    # Evaluators that run the program in a child interpreter were never seeded.
    evaluator = ("import random, subprocess, sys\nimport numpy\n\ndef evaluate(path):\n"
                 "    here, numbers = random.random(), numpy.random.random()\n"
                 "    child = subprocess.run([sys.executable, '-c', 'import random, numpy; "
                 "print(random.random(), numpy.random.random())'], capture_output=True, text=True, check=True)\n"
                 "    child_random, child_numpy = (float(x) for x in child.stdout.split())\n"
                 "    return {'combined_score': here, 'numpy': numbers, 'child_random': child_random,\n"
                 "            'child_numpy': child_numpy}\n")
    folder(tmp_path, "draws", evaluator)
    evaluation = initial(build("discovery:draws", root=tmp_path))
    assert evaluation.ok, evaluation.feedback
    numpy = pytest.importorskip("numpy")
    first_random, first_numpy = random.Random(0).random(), numpy.random.RandomState(0).random_sample()
    assert evaluation.metrics["combined_score"] == evaluation.metrics["child_random"] == first_random
    assert evaluation.metrics["numpy"] == evaluation.metrics["child_numpy"] == first_numpy


def test_shinka_results_keep_private_metrics_and_timing_out_of_the_feedback() -> None:
    evaluation = initial(build("discovery:shinka_sine"))
    assert evaluation.ok, evaluation.feedback
    assert evaluation.metrics["private.points"] == 41.0 and "execution_time_mean" in evaluation.metrics
    assert "rmse" in evaluation.feedback and "largest error" in evaluation.feedback  # public, text_feedback
    assert "private" not in evaluation.feedback and "execution_time" not in evaluation.feedback
    failed = build("discovery:shinka_sine")["guide"].evaluate("def approximate(x):\n    return float('nan')\n")
    assert not failed.ok and "incorrect" in failed.feedback and failed.score == 0.0


def test_a_containerized_evaluator_that_crashes_scores_zero_with_its_stderr(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "sd_points", tmp_path / "sd_points")
    script = tmp_path / "sd_points" / "11" / "evaluator" / "evaluator.py"
    script.write_text(script.read_text().replace('if __name__ == "__main__":',
                                                 'raise SystemExit("no GPU here")\nif __name__ == "__main__":'))
    evaluation = initial(build("discovery:sd_points/11", root=tmp_path))
    assert evaluation.score == 0.0 and "no GPU here" in evaluation.feedback, evaluation.feedback


def test_a_result_without_a_number_scores_zero_as_openevolve_scores_it(tmp_path: Path) -> None:
    # An error result nested as {"metrics": ..., "artifacts": ...} scored -1e9; OpenEvolve wraps the
    # dict as metrics, finds no number in it and ranks the program 0.0.
    evaluator = ("def evaluate(path):\n    return {'metrics': {'combined_score': 0.9, 'error': 'bad'},\n"
                 "            'artifacts': {'reason': 'it crashed'}}\n")
    folder(tmp_path, "nested", evaluator)
    evaluation = initial(build("discovery:nested", root=tmp_path))
    assert evaluation.score == 0.0 and "it crashed" in evaluation.feedback


def test_an_llm_calling_evaluator_outside_a_job_fails_with_one_clear_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from trace_bench.llm import current

    # another test in this worker may have left a process-wide session behind (get_llm makes one)
    monkeypatch.setattr(current, "_SESSION", None)
    evaluation = initial(build("discovery:sd_prompt"))
    assert not evaluation.ok and "needs a job's LLM session" in evaluation.feedback.splitlines()[0]
    monkeypatch.setenv("TRACE_BENCH_SANDBOX", "force-weak")
    with pytest.raises(RuntimeError, match="the weak sandbox has none"):
        build("discovery:sd_prompt")


# -- the peers' rules, in process ------------------------------------------------------------------

def test_the_score_is_combined_score_else_the_average_of_the_numbers_as_the_peers_rank() -> None:
    assert results.fitness({"combined_score": "0.5", "a": 9}) == (0.5, [])
    assert results.fitness({"error": 0.0, "timeout": True}) == (0.0, ["error"])  # their failure shape
    assert results.fitness({"a": 1.0, "b": 0.5, "ok": True, "note": "x"}) == (0.75, ["a", "b"])
    assert results.fitness({"note": "x"}) == (None, [])
    timed_out = results.interpret({"metrics": {"error": 0.0, "timeout": True}, "artifacts": {}, "timed_out": True})
    assert timed_out.status == "timeout" and timed_out.failed
    later_stage = results.interpret({"metrics": {"combined_score": 0.4}, "artifacts": {}, "timed_out": True})
    assert later_stage.score == 0.4 and later_stage.status == "timeout"  # OpenEvolve keeps stage 1's score
    for name in ("eval_time", "execution_time_mean", "runtime_s", "elapsed", "wall_seconds", "timestamp"):
        assert results.is_timing(name), name
    for name in ("timeout", "combined_score", "speedup", "stage1_passed", "validity"):
        assert not results.is_timing(name), name
    outcome = results.interpret({"combined_score": 1.0, "eval_time": 0.123, "start_time": "12:00:01", "n": 2})
    assert "eval_time" in outcome.metrics and results.shown_metrics(outcome.metrics, False) == {"n": 2.0}
    assert not any("12:00:01" in note for note in outcome.notes)
    assert "eval_time" in results.shown_metrics(outcome.metrics, True)  # trace_bench.timing_in_feedback


def _stages(**functions: Any) -> types.SimpleNamespace:
    return types.SimpleNamespace(**functions)


def test_cascade_stages_run_and_merge_as_openevolve_runs_them() -> None:
    def boom(path: str) -> dict[str, Any]:
        raise ValueError("stage two broke")

    module = _stages(evaluate_stage1=lambda p: {"combined_score": 0.6, "first": 1.0, "error": "x"},
                     evaluate_stage2=lambda p: {"combined_score": 0.8, "second": 2.0},
                     evaluate_stage3=lambda p: {"combined_score": 0.9, "third": 3.0})
    merged = protocols.run_cascade(module, "p", 5.0, [0.5, 0.7], 3)
    assert merged["metrics"] == {"combined_score": 0.9, "first": 1.0, "second": 2.0, "third": 3.0}
    assert protocols.run_cascade(module, "p", 5.0, [0.5, 0.85], 3)["metrics"]["combined_score"] == 0.8
    assert protocols.run_cascade(module, "p", 5.0, [0.7], 3)["metrics"]["combined_score"] == 0.6  # stage 1 only
    assert "third" not in protocols.run_cascade(module, "p", 5.0, [0.5, 0.7], 2)["metrics"]  # SkyDiscover: two
    broken = protocols.run_cascade(_stages(evaluate_stage1=module.evaluate_stage1, evaluate_stage2=boom),
                                   "p", 5.0, [0.5], 3)
    assert broken["metrics"]["stage2_passed"] == 0.0 and broken["metrics"]["combined_score"] == 0.6
    assert "stage two broke" in broken["artifacts"]["stage2_stderr"]
    failed_first = protocols.run_cascade(_stages(evaluate_stage1=boom), "p", 5.0, [0.5], 3)
    assert failed_first["metrics"] == {"stage1_passed": 0.0, "error": 0.0}


def test_the_container_protocol_reads_the_json_the_script_prints(tmp_path: Path) -> None:
    script = tmp_path / "evaluator.py"
    script.write_text("import json, sys\nprint('debug line')\n"
                      "print(json.dumps({'status': 'success', 'combined_score': 0.25, 'metrics': {'n': 3},\n"
                      "                  'artifacts': {'feedback': sys.argv[2]}}))\n", encoding="utf-8")
    value = protocols.run_script(str(script), "program.py", {"timeout_s": 10, "mode": "train"})
    assert value == {"metrics": {"n": 3.0, "combined_score": 0.25}, "artifacts": {"feedback": "train"}}
    script.write_text("print('no json here')\n", encoding="utf-8")
    assert protocols.run_script(str(script), "program.py", {"timeout_s": 10})["metrics"] == {"error": 0.0}


def test_skydiscover_reads_the_evaluator_source_where_the_layout_keeps_it(tmp_path: Path) -> None:
    # SkyDiscover's prompts may show the evaluator's code: the trainer read <folder>/evaluator.py, which
    # ShinkaEvolve and containerized folders lack, and its jobs failed with FileNotFoundError.
    from trace_bench.tasks.problem import Problem
    from trace_bench.trainers.external.skydiscover_trainer import _bridge_evaluator

    for task, line in (("discovery:shinka_sine", "def main(program_path: str, results_dir: str)"),
                       ("discovery:sd_points/11", 'with open("/benchmark/limits.json"')):
        directory = tmp_path / task.replace(":", "_").replace("/", "_")
        directory.mkdir()
        bridged = Path(_bridge_evaluator(str(directory), Problem.from_mapping(build(task), task)))
        assert f"# {line}" in bridged.read_text(encoding="utf-8"), task
