"""`trace-bench verdict`: the verdict across tasks agrees with rliable, autorank and baycomp computed here
independently from the same per-job files (results.csv), and says what it concludes per task (ties as
ties) and across tasks."""

from __future__ import annotations

import csv
import itertools
import json
import random
import statistics
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("rliable")

from tests.analysis.conftest import STUB_MATRIX_GROUP  # noqa: E402
from tests.analysis.runs_kit import job, make_run  # noqa: E402
from tests.conftest import run_cli  # noqa: E402
from trace_bench.analysis.across_tasks import BAYES_SAMPLES, BOOTSTRAP_REPS, improvement_bootstrap  # noqa: E402
from trace_bench.analysis.verdict_output import verdict_main  # noqa: E402

pytestmark = STUB_MATRIX_GROUP
TASKS = [f"s:t{i}" for i in range(1, 6)]
SHIFT = {"Strong": 0.3, "Middle": 0.15, "Weak": 0.0}


@pytest.fixture(scope="module")
def five_tasks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """5 tasks x 3 arms x 4 seeds, Strong above Middle above Weak on every task, with noise."""
    rng = random.Random(11)
    jobs = [job(task, arm, seed, round(0.2 + shift + 0.05 * i + rng.gauss(0, 0.05), 6))
            for i, task in enumerate(TASKS) for arm, shift in SHIFT.items() for seed in range(1, 5)]
    return make_run(tmp_path_factory.mktemp("verdict"), "five", jobs)


def _independent(run: Path) -> dict[str, np.ndarray]:
    """Per arm, a seeds x tasks array of normalized scores, straight from results.csv: (score − the
    task's mean initial score) / (its best observed score − that), the verdict's documented rule for a
    task without a test split."""
    with open(run / "results.csv", encoding="utf-8") as handle:
        rows = [r for r in csv.DictReader(handle) if r["status"] == "ok" and r["score_best"]]
    matrices = {}
    for arm in sorted(SHIFT):
        columns = []
        for task in TASKS:
            in_task = [r for r in rows if r["task"] == task]
            low = statistics.fmean(float(r["score_initial"]) for r in in_task)
            high = max(float(r["score_best"]) for r in in_task)
            mine = sorted((int(r["seed"]), float(r["score_best"])) for r in in_task if r["trainer"] == arm)
            columns.append([(score - low) / (high - low) for _, score in mine])
        matrices[arm] = np.array(columns).T
    return matrices


def test_the_aggregates_equal_the_libraries_on_the_same_files(five_tasks: Path) -> None:
    from autorank import autorank
    from baycomp import two_on_multiple
    from rliable import library, metrics

    proc = run_cli("verdict", str(five_tasks), "--format", "json", "--rope", "0.02")
    assert proc.returncode == 0, proc.stderr
    across = json.loads(proc.stdout)["across_tasks"]
    matrices = _independent(five_tasks)
    assert across["tasks"] == TASKS and across["seeds"] == [1, 2, 3, 4] and across["left_out"] == []
    for arm, matrix in matrices.items():
        assert np.allclose(across["normalized_scores"][arm], matrix, atol=1e-12)

    np.random.seed(0)  # rliable's stratified bootstrap resamples with numpy's global generator
    points, intervals = library.get_interval_estimates(
        matrices, lambda s: np.array([metrics.aggregate_iqm(s), metrics.aggregate_mean(s)]), reps=BOOTSTRAP_REPS,
        random_state=np.random.RandomState(0))
    aggregate = {r["arm"]: r for r in across["aggregate"]}
    for arm in matrices:
        got = aggregate[arm]
        assert [got["iqm"], got["mean"]] == pytest.approx(list(points[arm]), rel=1e-12)
        assert [got["iqm_low"], got["iqm_high"]] == pytest.approx([intervals[arm][0][0], intervals[arm][1][0]])
        assert [got["mean_low"], got["mean_high"]] == pytest.approx([intervals[arm][0][1], intervals[arm][1][1]])
    assert [r["arm"] for r in across["aggregate"]] == ["Strong", "Middle", "Weak"]
    from trace_bench.analysis import load_runs
    from trace_bench.analysis.across_tasks import cross_task_verdict

    jobs = load_runs(five_tasks).jobs
    first, second = cross_task_verdict(jobs, rope=0.02), cross_task_verdict(jobs, rope=0.02)
    assert first.aggregate == second.aggregate == across["aggregate"], "a verdict is reproducible"
    assert first.improvement == second.improvement == across["improvement"]

    improvement = {(r["arm"], r["versus"]): r for r in across["improvement"]}
    for x, y in itertools.permutations(matrices, 2):  # the interval: test_the_improvement_bootstrap_...
        point = metrics.probability_of_improvement(matrices[x], matrices[y])
        assert improvement[(x, y)]["probability"] == pytest.approx(float(point), abs=1e-12)
        assert improvement[(x, y)]["low"] <= improvement[(x, y)]["probability"] <= improvement[(x, y)]["high"]

    means = pd.DataFrame({arm: matrix.mean(axis=0) for arm, matrix in sorted(matrices.items())}, index=TASKS)
    ranked = autorank(means, alpha=0.05, verbose=False, order="descending", force_mode="nonparametric")
    ranks = across["ranks"]
    assert ranks["test"] == ranked.omnibus == "friedman" and ranks["posthoc"] == ranked.posthoc
    assert ranks["p_value"] == pytest.approx(ranked.pvalue) and ranks["critical_difference"] == pytest.approx(ranked.cd)
    assert ranks["mean_ranks"] == pytest.approx(dict(ranked.rankdf["meanrank"]))
    assert ["Strong", "Weak"] in ranks["different"], "five tasks, Strong always first and Weak always last"

    bayes = {(r["arm"], r["versus"]): r for r in across["bayesian"]}
    for a, b in itertools.combinations(sorted(matrices), 2):
        expected = two_on_multiple(matrices[a].mean(axis=0), matrices[b].mean(axis=0), rope=0.02,
                                   nsamples=BAYES_SAMPLES, random_state=0)
        got = bayes[(a, b)]
        assert [got["p_better"], got["p_equivalent"], got["p_worse"]] == pytest.approx(list(expected), abs=1e-12)
        assert got["rope"] == 0.02


def test_the_improvement_bootstrap_resamples_as_rliable_does() -> None:
    """The vectorized stratified bootstrap of P(X > Y) against rliable's on data with ties and spread:
    both intervals from 1,000 resamples (rliable's take ~2 ms each), equal to within their Monte Carlo
    error."""
    from rliable import library, metrics

    rng = np.random.default_rng(3)
    x = np.round(rng.normal(0.6, 0.1, size=(5, 2)), 1)
    y = np.round(rng.normal(0.5, 0.1, size=(5, 2)), 1)
    ours = np.percentile(improvement_bootstrap(x, y, 1000, np.random.RandomState(0)), [2.5, 97.5])
    _, theirs = library.get_interval_estimates({"p": (x, y)}, metrics.probability_of_improvement, reps=1000,
                                               random_state=np.random.RandomState(0))
    assert ours.tolist() == pytest.approx(np.ravel(theirs["p"]).tolist(), abs=0.05)


def test_markdown_says_what_it_concludes(five_tasks: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert verdict_main([str(five_tasks)]) == 0
    text = capsys.readouterr().out
    assert "paired t-test over seeds" in text and "Holm over the task's pairs of arms" in text
    short = text[text.index("## In short"):text.index("## Per task")]
    assert "highest IQM of normalized scores: Strong" in short
    assert "Friedman" in text and "critical difference" in text
    assert verdict_main([str(five_tasks)], "yaml") == 2 and "unknown format" in capsys.readouterr().err
    rows = list(csv.DictReader(capsys.readouterr().out.splitlines() if verdict_main([str(five_tasks)], "csv") == 0
                               else []))
    assert {r["section"] for r in rows} == {"per_task", "aggregate", "improvement", "ranks", "bayesian"}


def test_a_stub_run_with_two_tasks(stub_matrix_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two tasks: no Friedman test (autorank needs five), said so; a stub run says so."""
    assert verdict_main([str(stub_matrix_run)]) == 0
    text = capsys.readouterr().out
    assert "Stub mode: a deterministic stub answered every LLM call" in text
    assert "Friedman's test needs at least 5 tasks" in text and "this run has 2" in text
    short = text[text.index("## In short"):text.index("## Per task")].splitlines()
    assert any(line.startswith("- internal:code_param: ") for line in short)
    assert all("sole best" in line or "tied at #1" in line for line in short if line.startswith("- internal:"))
