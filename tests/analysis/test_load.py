"""Loading run directories: typed frames, tolerated damage, and explained failures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("pandas")
pytest.importorskip("scipy")

from tests.analysis.runs_kit import job, make_run  # noqa: E402
from trace_bench.analysis import RunDirError, load_runs  # noqa: E402


def _small(tmp_path: Path) -> Path:
    return make_run(tmp_path, "r", [job("s:t", "A", 1, 0.5, obj_accuracy=0.7),
                                    job("s:t", "A", 2, 0.75, status="budget_exhausted"),
                                    job("s:t", "A", 3, None, status="failed", error="boom")],
                    extra_columns=("obj_accuracy",))


def test_frames_are_typed_and_joined(tmp_path: Path) -> None:
    runs = load_runs(_small(tmp_path))
    jobs = runs.jobs
    assert list(jobs["seed"]) == [1, 2, 3] and str(jobs["seed"].dtype) == "int64"
    assert jobs["score_best"].iloc[0] == 0.5 and jobs["score_best"].isna().iloc[2]
    assert list(jobs["scored"]) == [True, True, False]  # budget_exhausted keeps its best score
    assert jobs["obj_accuracy"].iloc[0] == pytest.approx(0.7)
    assert not jobs["tokens_estimated"].any() and jobs["started_at"].iloc[0].year == 2026
    assert runs.run_ids == ["r"] and runs.manifests["r"]["mode"] == "real"
    curves = runs.curves
    assert len(curves) == 8 and set(curves["seed"]) == {1, 2}  # 4 points per scored job, none for the failure
    assert curves.groupby("seed")["best_score"].max().to_dict() == {1: 0.5, 2: 0.75}
    calls = runs.llm_calls
    assert len(calls) == 12 and set(calls["role"]) == {"optimizer"} and calls["cost_usd"].sum() == pytest.approx(0.006)


def test_truncated_last_event_line_is_tolerated(tmp_path: Path) -> None:
    run = _small(tmp_path)
    events = next((run / "jobs").glob("*/events.jsonl"))
    with open(events, "a") as handle:
        handle.write('{"ts": "2026", "type": "llm_call", "role": "optim')
    assert len(load_runs(run).llm_calls) == 12


def test_damaged_run_dirs_name_the_file_and_the_problem(tmp_path: Path) -> None:
    run = _small(tmp_path)
    manifest = run / "meta" / "manifest.json"
    good = manifest.read_text()
    manifest.write_text(good[: len(good) // 2])
    with pytest.raises(RunDirError, match=r"manifest\.json: not valid JSON"):
        load_runs(run)
    manifest.write_text(json.dumps({**json.loads(good), "schema_version": 7}))
    with pytest.raises(RunDirError, match="schema_version 7 is newer"):
        load_runs(run)
    manifest.unlink()
    with pytest.raises(RunDirError, match=r"manifest\.json: missing"):
        load_runs(run)
    manifest.write_text(good)
    results = run / "results.csv"
    text = results.read_text()
    results.write_text(text.replace("seed", "sead", 1))
    with pytest.raises(RunDirError, match=r"results\.csv: missing column\(s\) seed"):
        load_runs(run)
    results.write_text("")
    with pytest.raises(RunDirError, match=r"results\.csv: empty"):
        load_runs(run)
    results.unlink()
    with pytest.raises(RunDirError, match=r"results\.csv: missing"):
        load_runs(run)
    with pytest.raises(RunDirError, match="no such run directory"):
        load_runs(tmp_path / "nope")


def test_bad_curve_header_and_same_run_twice(tmp_path: Path) -> None:
    run = _small(tmp_path)
    with pytest.raises(RunDirError, match="same run_id 'r'"):
        load_runs([run, run])
    curve = next((run / "jobs").glob("*/artifacts/curve.csv"))
    curve.write_text("a,b\n1,2\n")
    with pytest.raises(RunDirError, match=r"curve\.csv: header lacks column\(s\) step, best_score"):
        load_runs(run)


def test_a_run_that_pooled_two_tasks_under_one_label_is_read_as_two(tmp_path: Path) -> None:
    """A run extended (before extensions were checked) with a changed eval_kwargs holds seeds 1-2 of one
    arm twice under one label: each job is named by its eval_kwargs, so no arm pairs half its jobs."""
    import json

    from trace_bench.analysis import leaderboard

    jobs = [job("s:t", "A", seed, 0.1 * seed, job_id=f"t3-{seed}") for seed in (1, 2)]
    jobs += [job("s:t", "A", seed, 0.5 + seed, job_id=f"t50-{seed}") for seed in (1, 2)]
    run = make_run(tmp_path, "pooled", jobs)
    manifest_path = run / "meta" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    for entry in manifest["jobs"]:
        entry["eval_kwargs"] = {"target": 3 if entry["job_id"].startswith("t3-") else 50}
    manifest_path.write_text(json.dumps(manifest))
    loaded = load_runs(run).jobs
    assert sorted(set(loaded["task"])) == ["s:t[target=3]", "s:t[target=50]"]
    board = leaderboard(loaded).set_index("task")
    assert board.loc["s:t[target=50]", "mean"] == pytest.approx(2.0) and board["count"].tolist() == [2, 2]
