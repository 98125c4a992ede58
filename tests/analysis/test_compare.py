"""compare: planted differences found, null differences not, unfair comparisons refused; two arms of one
run decided as the leaderboard decides."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

pytest.importorskip("scipy")

from tests.analysis.runs_kit import job, make_run  # noqa: E402
from tests.conftest import run_cli  # noqa: E402
from trace_bench.analysis import CompareError, compare_main, compare_runs, format_compare, load_runs  # noqa: E402

SEEDS = range(1, 9)


def _arm(shift: float, rng: random.Random, tasks: tuple[str, ...] = ("s:t1", "s:t2"), trainer: str = "PS",
         seeds: range = SEEDS) -> list[dict]:
    return [job(task, trainer, seed, round(2.0 + seed / 10 + shift + rng.gauss(0, 0.05), 6))
            for task in tasks for seed in seeds]


def test_planted_difference_is_significant_and_null_is_not(tmp_path: Path) -> None:
    rng = random.Random(0)
    better = make_run(tmp_path, "better", _arm(1.0, rng), model="m-big")
    base = make_run(tmp_path, "base", _arm(0.0, rng), model="m-small")
    twin = make_run(tmp_path, "twin", _arm(0.0, rng), model="m-other")
    planted = compare_runs(better, base)
    assert planted.differing_axes == ["llm"] and len(planted.rows) == 2
    from scipy import stats

    a, b = load_runs(better).jobs, load_runs(base).jobs
    for row in planted.rows:
        x = a[a["task"] == row["task"]].sort_values("seed")["score_best"]
        y = b[b["task"] == row["task"]].sort_values("seed")["score_best"]
        assert row["seeds"] == 8 and row["significant"] and row["p_value"] == pytest.approx(stats.ttest_rel(x, y).pvalue)
        assert row["wins"] == 8 and row["p_holm"] <= 2 * row["p_value"] + 1e-15
        assert row["mean_a_minus_b"] == pytest.approx(1.0, abs=0.1) and row["ci_low"] > 0.8
    null = compare_runs(base, twin)
    assert not any(row["significant"] for row in null.rows) and all(r["p_value"] > 0.05 for r in null.rows)
    text = format_compare(planted)
    assert "differing axis: llm" in text and "2 arm(s) compared, 2 significant, 0 tied" in text
    assert "paired t-test" in text


def test_jobs_pair_by_cell_not_by_job_id(tmp_path: Path) -> None:
    rng = random.Random(1)
    a = make_run(tmp_path, "a", _arm(0.5, rng, seeds=range(1, 6)), model="x")
    b = make_run(tmp_path, "b", _arm(0.0, rng, seeds=range(1, 6)) + [job("s:t1", "PS", 6, 1.0, status="failed")],
                 model="x")
    b_ids = {p.name for p in (b / "jobs").iterdir()}
    assert b_ids & {p.name for p in (a / "jobs").iterdir()}  # same LLM: same ids
    result = compare_runs(a, b)
    assert result.differing_axes == ["seeds"] and result.only_in_b == 1 and result.rows[0]["seeds"] == 5


def test_non_overlapping_matrices_are_refused(tmp_path: Path) -> None:
    rng = random.Random(2)
    a = make_run(tmp_path, "a", _arm(0.0, rng, tasks=("s:t1",)))
    b = make_run(tmp_path, "b", _arm(0.0, rng, tasks=("s:other",)))
    with pytest.raises(CompareError, match=r"share no \(task, trainer, params variant, seed\) cell.*do not overlap"):
        compare_runs(a, b)


def test_more_than_one_axis_is_refused_naming_the_axes(tmp_path: Path) -> None:
    rng = random.Random(3)
    a = make_run(tmp_path, "a", _arm(0.0, rng), model="m1")
    b = make_run(tmp_path, "b", _arm(0.0, rng, trainer="GEPA", seeds=range(1, 4)), model="m2")
    with pytest.raises(CompareError, match=r"differ in 3 axes \(llm, trainers, seeds\)"):
        compare_runs(a, b)


def test_compare_main_exit_codes_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rng = random.Random(4)
    a = make_run(tmp_path, "a", _arm(1.0, rng), model="m1")
    b = make_run(tmp_path, "b", _arm(0.0, rng), model="m2")
    assert compare_main([str(a), str(b)], "json") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["differing_axes"] == ["llm"] and all(r["significant"] for r in data["rows"])
    assert compare_main([str(a), str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert "no such run directory" in err and "Traceback" not in err
    assert compare_main([str(a), str(b)], "yaml") == 2
    assert compare_main([str(a)]) == 2 and "one run and --arms A B" in capsys.readouterr().err


def test_compare_uses_the_held_out_score_when_both_runs_have_it(tmp_path: Path) -> None:
    """A overfits: higher on the split that selected its state, lower on the test split.  compare
    reports the held-out difference and names it; the optimistic split would say the opposite."""
    def arm(best: float, test: float) -> list[dict]:
        return [job("s:qa", "PS", seed, best + seed / 100, score_test_best=test + seed / 100, score_test=test)
                for seed in SEEDS]
    overfit = make_run(tmp_path, "overfit", arm(0.9, 0.4), model="m-a")
    honest = make_run(tmp_path, "honest", arm(0.7, 0.6), model="m-b")
    result = compare_runs(overfit, honest)
    (row,) = result.rows
    assert row["metric"] == "test_best" and row["mean_a_minus_b"] == pytest.approx(-0.2)
    assert row["losses"] == 8 and row["significant"]
    assert any("held-out test score of the best state" in note for note in result.notes)
    without_test = make_run(tmp_path, "no-test", [job("s:qa", "PS", seed, 0.7 + seed / 100) for seed in SEEDS],
                            model="m-c")
    (row,) = compare_runs(overfit, without_test).rows
    assert row["metric"] == "best" and row["mean_a_minus_b"] == pytest.approx(0.2), "no test score on one side"
    assert "optimistic" in format_compare(compare_runs(overfit, without_test))


def test_only_seeds_scored_in_both_runs_are_paired_and_the_dropped_are_counted(tmp_path: Path) -> None:
    """Run B lost seeds 7 and 8 of arm PS on s:t1: that arm pairs seeds 1-6 and says it dropped 2."""
    rng = random.Random(3)
    a = make_run(tmp_path, "a", _arm(0.5, rng), model="m-big")
    lossy = [dict(j, status="task_error", score_best=None) if j["task"] == "s:t1" and j["seed"] > 6 else j
             for j in _arm(0.0, rng)]
    b = make_run(tmp_path, "b", lossy, model="m-small")
    rows = {r["task"]: r for r in compare_runs(a, b).rows}
    assert (rows["s:t1"]["seeds"], rows["s:t1"]["dropped"]) == (6, 2)
    assert (rows["s:t2"]["seeds"], rows["s:t2"]["dropped"]) == (8, 0)
    assert "dropped" in format_compare(compare_runs(a, b)).splitlines()[3]


def test_two_arms_of_one_run_through_the_cli_agree_with_the_leaderboard(tmp_path: Path) -> None:
    """``compare RUN --arms A B``: per task, the pair's Holm p over the task's pairs of arms, the
    leaderboard's own decision: tied where it shares a rank, significant where it separates them."""
    from trace_bench.analysis import leaderboard

    rng = random.Random(5)
    jobs = (_arm(0.6, rng, trainer="PS") + _arm(0.0, rng, trainer="Base")
            + [dict(j, task="s:t3") for j in _arm(0.0, rng, tasks=("s:t3",), trainer="PS")]
            + _arm(0.0, rng, tasks=("s:t3",), trainer="Base"))
    run = make_run(tmp_path, "arms", jobs)
    proc = run_cli("compare", str(run), "--arms", "PS", "Base", "--format", "json", check=True)
    data = json.loads(proc.stdout)
    assert (data["arm_a"], data["arm_b"]) == ("PS", "Base")
    rows = {r["task"]: r for r in data["rows"]}
    board = leaderboard(load_runs(run).jobs).set_index(["task", "trainer"])
    for task, row in rows.items():
        assert row["p_holm"] == pytest.approx(board.loc[(task, "Base"), "p_vs_best"] if
                                              board.loc[(task, "PS"), "vs_best"] == "best" else
                                              board.loc[(task, "PS"), "p_vs_best"])
        assert row["significant"] == (board.loc[(task, "PS"), "rank"] != board.loc[(task, "Base"), "rank"])
    assert rows["s:t1"]["significant"] and not rows["s:t3"]["significant"]
    text = run_cli("compare", str(run), "--arms", "PS", "Base", check=True).stdout
    assert "A = PS   B = Base" in text and "no, tied" in text and "1 tied" in text
    wrong = run_cli("compare", str(run), "--arms", "PS", "Nope")
    assert wrong.returncode == 2 and "no arm 'Nope'" in wrong.stderr and "its arms: Base; PS" in wrong.stderr
