"""Task folders in the OpenEvolve/SkyDiscover layout: listed, validated and run with --root; the
candidate program sandboxed; metrics kept; trust recorded; config.yaml keys used or listed."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, run_cli
from tests.trainers.external_jobs import curve_rows, run_jobs

ROOT = FIXTURES / "discovery"


def test_list_tasks_with_root_lists_each_folder_under_its_suite() -> None:
    proc = run_cli("list-tasks", "--root", str(ROOT))
    assert proc.returncode == 0, proc.stderr
    assert "discovery:split_numbers" in proc.stdout
    assert "fixture_arena:plain_secret" in proc.stdout  # the suite its config.yaml declares
    assert "discovery:circle_packing_26" in proc.stdout  # the built-in suite is still there


def test_validate_strict_builds_the_folders_and_lists_ignored_config_keys(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("mode: stub\ntasks: [discovery:split_numbers, fixture_arena:plain_secret]\n"
                      "trainers: [PrioritySearch]\n", encoding="utf-8")
    proc = run_cli("validate", "--config", str(config), "--root", str(ROOT), "--strict", "--runs-dir",
                   str(tmp_path / "runs"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    line = next(x for x in proc.stdout.splitlines() if "discovery:split_numbers" in x and "parameter" in x)
    for key in ("random_seed", "llm.models", "llm.temperature", "database.num_islands", "evaluator.cascade_evaluation"):
        assert key in line, line
    for used in ("prompt.system_message", "max_iterations", "evaluator.timeout"):
        assert used not in line


def test_split_folder_runs_with_trace_external_and_skydiscover_trainers(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    config = {"mode": "stub", "seeds": [1], "tasks": ["discovery:split_numbers"],
              "trainers": [{"id": "PrioritySearch", "params_variants": [{"ps_steps": 2, "ps_batches": 1}]},
                           {"id": "OpenEvolveTrainer"}, {"id": "SkyDiscover", "params_variants": [{"search": "topk"}]}]}
    done = run_jobs(config, tmp_path, monkeypatch, root=ROOT)
    by_trainer = {result.trainer: (result, job) for result, job in done}
    for result, job in done:
        assert result.status == "ok", (result.trainer, result.error, result.traceback)
        assert result.score_trust == "trusted" and result.sandbox  # the candidate ran in the sandbox
        assert result.best_known == 5.0 and result.best_known_source == "the bound 5 x 1"
        metrics = result.metrics_best
        assert {"combined_score", "total", "largest"} <= set(metrics), metrics
        assert result.pct_of_best_known == pytest.approx(100 * metrics["total"] / 5.0)
        assert result.score_best == pytest.approx(metrics["combined_score"])
        assert len(curve_rows(job)) >= 2
    # the folder's max_iterations (3) is the external trainers' iterations when the config sets none
    for trainer in ("OpenEvolveTrainer", "SkyDiscover"):
        result, _ = by_trainer[trainer]
        assert result.n_steps == 3 + 1, (trainer, result.n_steps)  # 3 iterations, then the final state


def test_plain_folder_runs_in_the_sandbox_and_its_scores_are_candidate_reachable(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FIXTURE_SECRET", "do-not-leak")  # the job process has it; the sandbox must not
    config = {"mode": "stub", "seeds": [1], "tasks": ["fixture_arena:plain_secret"],
              "trainers": [{"id": "PrioritySearch", "params_variants": [{"ps_steps": 1, "ps_batches": 1}]}]}
    [(result, job)] = run_jobs(config, tmp_path, monkeypatch, root=ROOT)
    assert result.status == "ok", (result.error, result.traceback)
    assert result.score_trust == "candidate-reachable"
    assert result.score_initial == pytest.approx(0.25)  # evaluate() and the program saw no secret
    assert result.metrics_best["secret_visible"] == 0.0
    assert result.best_known is None and result.pct_of_best_known is None


def test_a_candidate_cannot_write_outside_the_sandbox(tmp_path: Path) -> None:
    from trace_bench.registry.tasks import TaskCatalog
    from trace_bench.tasks.problem import Problem

    target = tmp_path / "written_by_candidate"
    raw = TaskCatalog.create(ROOT).build("discovery:split_numbers", {})
    guide = Problem.from_mapping(raw, "discovery:split_numbers").guide
    hostile = (f"def make_numbers():\n    open({str(target)!r}, 'w').write('x')\n    return [1.0] * 5\n")
    evaluation = guide.evaluate(hostile)
    assert not evaluation.ok and evaluation.score == -1.0  # the folder's declared failure score
    assert not target.exists()
    honest = guide.evaluate("def make_numbers():\n    return [1.0] * 5\n")
    assert honest.ok and honest.metrics["total"] == 5.0


def test_results_table_and_report_show_the_distance_to_the_best_known_value(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(f"mode: stub\nruns_dir: {tmp_path / 'runs'}\nseeds: [1, 2]\n"
                      "tasks: [discovery:kissing_11, fixture_arena:plain_secret]\n"
                      "trainers:\n  - id: PrioritySearch\n    params_variants: [{ps_steps: 1, ps_batches: 1}]\n",
                      encoding="utf-8")
    proc = run_cli("run", "--config", str(config), "--root", str(ROOT))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [run] = list((tmp_path / "runs").iterdir())
    with open(run / "results.csv", encoding="utf-8") as handle:
        rows = {row["task"]: row for row in csv.DictReader(handle)}
    kissing = rows["discovery:kissing_11"]
    assert kissing["best_known"] == "604.0" and kissing["score_trust"] == "trusted"
    assert 0 < float(kissing["pct_of_best_known"]) < 100
    assert rows["fixture_arena:plain_secret"]["score_trust"] == "candidate-reachable"
    table = run_cli("table", str(run))
    assert table.returncode == 0, table.stderr
    assert "% of best known" in table.stdout.splitlines()[0]
    line = next(x for x in table.stdout.splitlines() if "kissing_11" in x)
    assert f"{float(kissing['pct_of_best_known']):.2f}" in line
    assert "PrioritySearch [ps_batches=1,ps_steps=1] ‡" in next(x for x in table.stdout.splitlines()
                                                              if "plain_secret" in x)
    assert "candidate-reachable" in table.stdout
    pytest.importorskip("gradio")
    from trace_bench.ui.readers import frame_of
    from trace_bench.ui.tabs.browse import RESULT_COLUMNS, filtered_rows

    ui_rows, _ = filtered_rows(run, "discovery:kissing_11", "", "")
    shown = frame_of(ui_rows, RESULT_COLUMNS)  # the UI's Browse table
    with open(run / "results.csv", encoding="utf-8") as handle:
        expected = sorted(float(r["pct_of_best_known"]) for r in csv.DictReader(handle)
                          if r["task"] == "discovery:kissing_11")
    assert len(expected) == 2
    assert sorted(float(v) for v in shown["pct_of_best_known"]) == pytest.approx(expected, abs=0.01)
    report = run_cli("report", str(run))
    assert report.returncode == 0, report.stderr
    html = (run / "report.html").read_text(encoding="utf-8")
    assert "Distance to the best known value and score trust" in html and "candidate-reachable" in html
