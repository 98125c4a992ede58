"""Task folders as the OpenEvolve and SkyDiscover communities write them (not as we would): the
shapes their examples and benchmarks use must score the way they score under those libraries."""

from __future__ import annotations

import pytest

from tests.conftest import FIXTURES

ROOT = FIXTURES / "discovery_community"


def guide_of(task_id: str, eval_kwargs: dict[str, object] | None = None):  # type: ignore[no-untyped-def]
    from trace_bench.registry.tasks import TaskCatalog
    from trace_bench.tasks.problem import Problem

    raw = TaskCatalog.create(ROOT).build(task_id, dict(eval_kwargs or {}))
    return Problem.from_mapping(raw, task_id).guide


def test_an_evaluator_that_runs_the_program_in_a_child_process_scores_it() -> None:
    # OpenEvolve's circle packing evaluator (and many others) runs the candidate with
    # subprocess.Popen([sys.executable, script]) and catches every exception into combined_score 0:
    # refusing that process made every candidate, good or bad, score 0 with status ok.
    guide = guide_of("discovery:subprocess_runner")
    initial = guide.evaluate("def make_numbers():\n    return [0.25, 0.25]\n")
    assert initial.ok and initial.metrics.get("error") is None, initial.feedback
    assert initial.score == pytest.approx(0.5) and initial.metrics["count"] == 2.0
    better = guide.evaluate("def make_numbers():\n    return [1.0, 2.0, 0.5]\n")
    assert better.score == pytest.approx(3.5), better.feedback


def test_an_evaluator_that_scores_in_a_process_pool_scores_it() -> None:
    # QA F4: multiprocessing.Pool needs /dev/shm for its semaphores; read-only there, every candidate
    # of such an evaluator scored 0 (or, uncaught, was counted as a sandbox denial).
    guide = guide_of("discovery:process_pool")
    initial = guide.evaluate("def value_at(x):\n    return 0.5 * x\n")
    assert initial.ok and "error" not in initial.feedback, initial.feedback
    assert initial.score == pytest.approx(3.0) and initial.metrics["inputs"] == 4.0
    assert guide.evaluate("def value_at(x):\n    return x * x\n").score == pytest.approx(14.0)


def test_the_processes_an_evaluator_may_start_stay_in_the_sandbox(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # With processes allowed, a candidate can start them too: a shell it starts must see no key,
    # write nothing outside, and reach no network, like the candidate itself.
    monkeypatch.setenv("COMMUNITY_SECRET", "sk-should-not-leak")
    target = tmp_path / "written_by_child"
    guide = guide_of("discovery:subprocess_runner")
    probe = "import socket; socket.create_connection(('127.0.0.1', 22), timeout=2); print('CONNECTED')"
    hostile = ("import subprocess, sys\n"
               "def make_numbers():\n"
               f"    shell = subprocess.run(['/bin/sh', '-c', 'echo leaked > {target}; env; cat /proc/*/environ'],\n"
               "                           capture_output=True, text=True).stdout\n"
               f"    net = subprocess.run([sys.executable, '-c', {probe!r}], capture_output=True, text=True)\n"
               "    return [float('sk-should-not-leak' in shell), float('CONNECTED' in net.stdout),\n"
               "            float('Error' in net.stderr)]\n")
    evaluation = guide.evaluate(hostile)
    assert evaluation.ok, evaluation.feedback
    assert evaluation.metrics["count"] == 3.0  # the candidate ran and its children too
    assert evaluation.metrics["total"] == 1.0  # no key seen, no connection: the probe failed with an error
    assert not target.exists()


def test_the_weak_mode_refuses_an_evaluator_its_processes(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # The weak mode's guard is an audit hook in the sandboxed interpreter: an exec'd child escapes it.
    monkeypatch.setenv("TRACE_BENCH_SANDBOX", "force-weak")
    from trace_bench.registry.tasks import TaskCatalog

    raw = TaskCatalog.create(ROOT).build("discovery:subprocess_runner", {})
    assert raw["metadata"]["max_processes"] == 0
    evaluation = raw["guide"].evaluate("def make_numbers():\n    return [0.25, 0.25]\n")
    assert evaluation.score == 0.0 and "not allowed" in evaluation.feedback + str(evaluation.metrics)


def test_max_processes_is_an_eval_kwarg_of_folder_tasks() -> None:
    from trace_bench.registry.tasks import TaskCatalog

    catalog = TaskCatalog.create(ROOT)
    assert catalog.build("discovery:subprocess_runner", {"max_processes": 0})["metadata"]["max_processes"] == 0
    assert catalog.build("discovery:subprocess_runner", {})["metadata"]["max_processes"] == 16
    with pytest.raises(ValueError, match="max_processes"):
        catalog.build("discovery:subprocess_runner", {"max_processes": -1})


def test_without_combined_score_a_program_scores_the_average_of_its_numeric_metrics() -> None:
    # Both libraries rank by the average of the numeric metrics when combined_score is absent; we
    # called every such evaluation a failure, so a folder written that way never got a score.
    guide = guide_of("discovery:no_combined_score")
    evaluation = guide.evaluate("def solve():\n    return 0.5, 0.25\n")
    assert evaluation.ok, evaluation.feedback
    assert evaluation.score == pytest.approx(0.375)  # (0.5 + 0.25) / 2: the flag `valid` is not a score
    assert evaluation.metrics["combined_score"] == pytest.approx(0.375)
    assert evaluation.metrics["valid"] == 1.0 and "average" in evaluation.feedback
    # the peers' failure shape {"error": 0.0, ...}: they average its one number, 0.0 (we called it a
    # failure scored -1e9, far below what OpenEvolve gives it)
    failed = guide.evaluate("def solve():\n    raise ValueError('no')\n")
    assert failed.score == 0.0 and "message: no" in failed.feedback
    nan = guide.evaluate("def solve():\n    return float('nan'), float('nan')\n")
    assert not nan.ok


def test_a_program_in_another_language_is_the_folder_initial_program() -> None:
    # SkyDiscover's benchmarks hold initial_program.md, .cc, ...; we read only initial_program.py
    # and silently evolved an empty program from scratch.
    from trace_bench.registry.tasks import TaskCatalog

    raw = TaskCatalog.create(ROOT).build("discovery:text_program", {})
    assert raw["discovery_program"].source == "Write a short poem about the sea.\n"
    evaluation = raw["guide"].evaluate("Write a short poem about the sea.\n")
    assert evaluation.ok, evaluation.feedback
    assert evaluation.metrics["words"] == 7.0 and evaluation.metrics["markdown_file"] == 1.0


def test_a_folder_with_several_initial_programs_is_refused(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from trace_bench._util.errors import ConfigError
    from trace_bench.tasks.discovery.folder import load_folder

    (tmp_path / "evaluator.py").write_text("def evaluate(p):\n    return {'combined_score': 1.0}\n")
    (tmp_path / "initial_program.cc").write_text("int main() {}\n")
    (tmp_path / "initial_program.md").write_text("text\n")
    with pytest.raises(ConfigError, match="initial_program"):
        load_folder(tmp_path).initial_program()


def _folder(root, name: str, config: str | None = None, evaluator: str | None = None) -> None:  # type: ignore[no-untyped-def]
    folder = root / name
    folder.mkdir()
    (folder / "evaluator.py").write_text(evaluator or "def evaluate(path):\n    return {'combined_score': 1.0}\n")
    (folder / "initial_program.py").write_text("x = 1\n")
    if config is not None:
        (folder / "config.yaml").write_text(config)


def test_one_broken_folder_does_not_hide_the_others(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # A directory of folders written for other tools: one with a config.yaml YAML cannot read, one
    # whose evaluator does not parse. Listing, validating and running the good one used to stop at
    # the first broken folder with exit 2.
    from tests.conftest import run_cli

    root = tmp_path / "tasks"
    root.mkdir()
    _folder(root, "good")
    _folder(root, "bad_yaml", config="evaluator:\n\ttimeout: 5\n")
    _folder(root, "bad_python", evaluator="def evaluate(path)\n    return 1\n")
    listed = run_cli("list-tasks", "--root", str(root), "--all", "--bench", "discovery")
    assert listed.returncode == 0, listed.stderr
    lines = {line.split("\t")[0]: line for line in listed.stdout.splitlines()}
    assert lines["discovery:good"].endswith("available")
    assert "not valid YAML" in lines["discovery:bad_yaml"] and "not valid Python" in lines["discovery:bad_python"]
    config = tmp_path / "c.yaml"
    config.write_text(f"mode: stub\nruns_dir: {tmp_path / 'runs'}\ntasks: [discovery:good]\n"
                      "trainers: [{id: PrioritySearch, params_variants: [{ps_steps: 1, ps_batches: 1}]}]\n")
    ran = run_cli("run", "--config", str(config), "--root", str(root))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    config.write_text(config.read_text().replace("[discovery:good]", "[discovery:bad_yaml]"))
    refused = run_cli("validate", "--config", str(config), "--root", str(root))
    assert refused.returncode != 0 and "not valid YAML" in refused.stdout + refused.stderr


def test_a_timeout_that_is_not_positive_is_refused_when_the_folder_is_read(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # evaluator.timeout: 0 was accepted, and every evaluation then failed in the sandbox's limits.
    from trace_bench._util.errors import ConfigError
    from trace_bench.tasks.discovery.folder import load_folder

    for value in ("0", "-5"):
        _folder(tmp_path, f"t{value}", config=f"evaluator:\n  timeout: {value}\n")
        with pytest.raises(ConfigError, match="positive"):
            load_folder(tmp_path / f"t{value}")


def test_percent_of_best_known_is_left_out_where_a_ratio_means_nothing() -> None:
    # A best known value of -5 (an energy to minimise): -4 is worse, yet the ratio said 80% for
    # "max" and 125% ("beaten") for "min"; a ratio of signed values is no distance to the best.
    from trace_bench.tasks.discovery.task import BestKnown

    assert BestKnown(-5.0, "min", "value").percent({"value": -4.0}) is None
    assert BestKnown(-5.0, "max", "value").percent({"value": -6.0}) is None
    assert BestKnown(0.0, "min", "value").percent({"value": 0.5}) is None
    assert BestKnown(2.0, "max", "value").percent({"value": -1.0}) is None
    assert BestKnown(2.0, "max", "value").percent({"value": 1.0}) == pytest.approx(50.0)
    assert BestKnown(2.0, "max", "value").percent({"value": 0.0}) == 0.0
    assert BestKnown(2.0, "min", "value").percent({"value": 4.0}) == pytest.approx(50.0)


def test_an_evaluation_result_object_gives_its_metrics_and_artifacts_as_feedback() -> None:
    guide = guide_of("discovery:result_object")
    evaluation = guide.evaluate("def values():\n    return [0.2, 0.4]\n")
    assert evaluation.ok, evaluation.feedback
    assert evaluation.score == pytest.approx(0.3)
    assert evaluation.metrics == pytest.approx({"combined_score": 0.3, "count": 2.0})  # lists, dicts dropped
    assert "evaluated 2 values" in evaluation.feedback and "label: mean of values" in evaluation.feedback
    assert "bytes" in evaluation.feedback and len(evaluation.feedback) <= 3000


@pytest.mark.parametrize(("task", "cause"), [("discovery:load_fails", "missing_table.csv"),
                                             ("discovery:score_fails", "total_that_was_never_defined")])
def test_a_broken_evaluator_ends_the_job_as_a_task_error(task: str, cause: str, tmp_path,  # type: ignore[no-untyped-def]
                                                         monkeypatch) -> None:
    # The guide turned every evaluator failure into the failure score: a folder whose evaluator
    # cannot import, or whose trusted score() has a bug, gave jobs `ok` with best -1e9 and the
    # error nowhere in the run.
    from tests.trainers.external_jobs import run_jobs

    config = {"mode": "stub", "seeds": [1], "tasks": [task],
              "trainers": [{"id": "PrioritySearch", "params_variants": [{"ps_steps": 1, "ps_batches": 1}]},
                           {"id": "OpenEvolveTrainer", "params_variants": [{"iterations": 1}]}]}
    for result, _ in run_jobs(config, tmp_path, monkeypatch, root=FIXTURES / "discovery_broken"):
        assert result.status == "task_error", (result.trainer, result.status, result.error)
        assert cause in result.error + (result.traceback or ""), (result.error, result.traceback)


def test_a_candidate_that_fails_like_a_broken_evaluator_is_still_only_a_failed_candidate() -> None:
    # Only the task's own program and the evaluator's loading speak for the task: an LLM-written
    # candidate that raises ImportError (or anything else) scores the failure score.
    guide = guide_of("discovery:subprocess_runner")
    evaluation = guide.evaluate("import a_dependency_this_machine_lacks\ndef make_numbers():\n    return [1.0]\n")
    assert evaluation.score == 0.0  # the evaluator caught it (its own rule)
    hostile = guide_of("discovery:no_combined_score")
    failed = hostile.evaluate("raise ImportError('No module named numpy')\n")  # caught: {"error": 0.0, ...}
    assert failed.score == 0.0 and not failed.task_fault
    assert hostile.get_feedback("", "raise ImportError('No module named numpy')\n")[0] == 0.0
    uncaught = guide_of("discovery:subprocess_runner")
    assert uncaught.get_feedback("", "raise ImportError('No module named numpy')\n")[0] == uncaught.failure_score


def test_a_folder_too_large_for_the_sandbox_is_refused_before_any_job(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # validate --strict said OK and every job then ended task_error at its first evaluation.
    from trace_bench._util.errors import ConfigError
    from trace_bench.tasks.discovery.folder import MAX_FOLDER_BYTES, find_folders, load_folder

    _folder(tmp_path, "big")
    (tmp_path / "big" / "data.bin").write_bytes(b"\0" * (MAX_FOLDER_BYTES + 1))
    with pytest.raises(ConfigError, match="more than 4 MB"):
        load_folder(tmp_path / "big")
    [listed] = find_folders(tmp_path)
    assert "more than 4 MB" in listed.problem
