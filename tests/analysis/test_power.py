"""`trace-bench power`: the verdict's paired t-test planned at a minimal effect (--effect) with the sd of the
run's paired differences, at Holm's first level alpha / pairs: the power, the seeds needed and the minimum
detectable difference, checked against scipy's noncentral t (computed here independently from
results.csv), against simulation, and on every edge case a run can produce (no variance between seeds
is said, never power 1)."""

from __future__ import annotations

import csv
import json
import math
import statistics
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("scipy")
from scipy import stats  # noqa: E402

from tests.analysis.conftest import STUB_MATRIX_GROUP, STUB_MATRIX_SEEDS  # noqa: E402
from tests.analysis.runs_kit import job, make_run  # noqa: E402
from tests.conftest import run_cli  # noqa: E402
from trace_bench.analysis.power import (  # noqa: E402
    NO_VARIANCE,
    detectable_effect,
    paired_power,
    seeds_for_power,
    t_test_power,
)

pytestmark = STUB_MATRIX_GROUP


def scipy_power(effect: float, n: int, alpha: float = 0.05) -> float:
    """The textbook formula, straight from scipy: both tails of nct(n - 1, effect * sqrt(n)).  Where
    scipy's nct.cdf gives NaN (far tails) the far tail is read by symmetry, P(T'(nc) < -c) =
    P(T'(-nc) > c), an identity checked below wherever scipy gives both."""
    critical = stats.t.ppf(1 - alpha / 2, n - 1)
    nc = effect * math.sqrt(n)
    far = stats.nct.cdf(-critical, n - 1, nc)
    if math.isnan(far):
        far = stats.nct.sf(critical, n - 1, -nc)
    return float(stats.nct.sf(critical, n - 1, nc) + far)


def test_the_far_tail_identity_holds_where_scipy_gives_both() -> None:
    checked = 0
    for df in (1, 2, 4, 9, 29):
        critical = stats.t.ppf(0.975, df)
        for nc in np.linspace(0.0, 40.0, 81):
            direct = stats.nct.cdf(-critical, df, nc)
            if math.isfinite(direct):
                assert stats.nct.sf(critical, df, -nc) == pytest.approx(direct, rel=1e-9, abs=1e-300)
                checked += 1
    assert checked > 200


HAND_MADE = [  # (A, B): paired by position
    ([0.61, 0.72, 0.55, 0.68, 0.70, 0.59], [0.52, 0.60, 0.57, 0.58, 0.66, 0.50]),
    ([1.0, 2.0, 3.0], [0.5, 0.5, 0.5]),
    ([0.3, 0.1, 0.4, 0.1, 0.5, 0.9, 0.2, 0.6], [0.35, 0.05, 0.38, 0.2, 0.45, 0.8, 0.3, 0.55]),
]


@pytest.mark.parametrize(("a", "b"), HAND_MADE)
@pytest.mark.parametrize(("effect", "pairs"), [(0.05, 1), (0.2, 6)])
def test_hand_made_pairs_equal_scipy(a: list[float], b: list[float], effect: float, pairs: int) -> None:
    """The power is planned at the user's effect with the observed sd, never at the observed effect."""
    diff = [x - y for x, y in zip(a, b, strict=True)]
    n, mean, sd = len(diff), statistics.fmean(diff), statistics.stdev(diff)
    level = 0.05 / pairs
    result = paired_power(a, b, effect, pairs=pairs)
    assert (result.n, result.mean_diff, result.sd_diff) == (n, pytest.approx(mean, abs=1e-15),
                                                           pytest.approx(sd, rel=1e-12))
    assert result.alpha_level == pytest.approx(level) and result.effect_size == pytest.approx(effect / sd)
    assert result.power == pytest.approx(scipy_power(effect / sd, n, level), rel=1e-10)
    needed = result.seeds_needed
    assert needed is not None and needed >= 2
    assert scipy_power(effect / sd, needed, level) >= 0.8, "the seeds needed reach the target"
    assert needed == 2 or scipy_power(effect / sd, needed - 1, level) < 0.8, "and one seed fewer does not"
    assert scipy_power(result.min_detectable_diff / sd, n, level) == pytest.approx(0.8, abs=1e-9), \
        "the minimum detectable difference is detected with exactly the target power"


def test_power_agrees_with_simulated_t_tests() -> None:
    """Independent of any noncentral t: the share of simulated experiments a t-test calls
    significant is the power (within four standard errors of 20,000 simulations)."""
    rng = np.random.default_rng(7)
    for effect, n in ((0.8, 8), (0.5, 20), (1.5, 3)):
        samples = rng.normal(effect, 1.0, size=(20_000, n))
        t = samples.mean(axis=1) / (samples.std(axis=1, ddof=1) / math.sqrt(n))
        rejected = float(np.mean(np.abs(t) > stats.t.ppf(0.975, n - 1)))
        expected = t_test_power(effect, n)
        assert abs(rejected - expected) < 4 * math.sqrt(expected * (1 - expected) / 20_000), (effect, n)


def test_alpha_and_target_change_the_answers_as_scipy_says() -> None:
    result = paired_power([3.0, 2.4, 2.9, 3.3], [2.0, 2.2, 2.0, 2.9], effect=0.5, alpha=0.01, power=0.9)
    size = 0.5 / result.sd_diff
    assert result.power == pytest.approx(scipy_power(size, 4, 0.01), rel=1e-10)
    assert scipy_power(size, result.seeds_needed, 0.01) >= 0.9 > scipy_power(size, result.seeds_needed - 1, 0.01)
    assert scipy_power(detectable_effect(4, 0.9, 0.01), 4, 0.01) == pytest.approx(0.9, abs=1e-9)


def test_edge_cases() -> None:
    one = paired_power([0.7], [0.5])
    assert one.n == 1 and one.mean_diff == pytest.approx(0.2) and one.note == "fewer than 2 paired seeds"
    assert math.isnan(one.sd_diff) and math.isnan(one.power) and one.seeds_needed is None
    assert math.isnan(one.min_detectable_diff), "one pair has no sd: nothing to say about power"

    none = paired_power([], [])
    assert none.n == 0 and math.isnan(none.mean_diff) and math.isnan(none.power)

    constant = paired_power([0.9, 0.8, 0.7], [0.6, 0.5, 0.4])  # every seed +0.3 (float noise below the tolerance)
    assert constant.sd_diff == 0 and constant.note == NO_VARIANCE
    assert math.isnan(constant.power), "no variance between seeds is said, never power 1"
    assert constant.seeds_needed == 6, "identical differences decide from six seeds (sign-flip 2/2^6 < 0.05)"
    assert paired_power([0.9, 0.8, 0.7], [0.6, 0.5, 0.4], pairs=6).seeds_needed == 8

    identical = paired_power([0.4, 0.5, 0.6], [0.4, 0.5, 0.6])
    assert identical.mean_diff == 0 and identical.note == NO_VARIANCE and identical.seeds_needed is None

    noisy = paired_power([0.1, 0.5, 0.3], [0.3, 0.3, 0.3])  # differences -0.2, 0.2, 0: mean 0, sd 0.2
    assert noisy.mean_diff == pytest.approx(0, abs=1e-12) and noisy.power == pytest.approx(scipy_power(0.05 / 0.2, 3), rel=1e-10)
    assert noisy.min_detectable_diff == pytest.approx(detectable_effect(3) * 0.2, rel=1e-12)

    for bad in (0.0, -0.1, math.inf):
        with pytest.raises(ValueError, match="effect must be a positive"):
            paired_power([0.1, 0.2], [0.0, 0.0], effect=bad)


def test_huge_and_far_effects_stay_numbers() -> None:
    """scipy's nct.cdf returns NaN for the far tail from a noncentrality of about 8; the power still
    comes out, equal to the upper tail plus the mirrored far tail."""
    effect = 76.75 / math.sqrt(2)  # scipy 1.17: nct.cdf(-12.7, 1, 76.75) is NaN
    power = t_test_power(effect, 2)
    assert power == pytest.approx(scipy_power(effect, 2), rel=1e-15) and power < 1
    assert t_test_power(1e12, 5) == 1.0 and seeds_for_power(1e12) == 2
    huge = paired_power([1e6, 2e6 + 1, 3e6], [0.0, 1e6, 2e6], effect=1e9)
    assert huge.power == 1.0 and huge.seeds_needed == 2
    tiny = paired_power([0.0, 1.0, 0.0, 1.0, 1e-6], [0.0, 0.0, 1.0, 1.0, 0.0], effect=1e-6)
    assert tiny.seeds_needed is None, "more than a billion seeds: reported as beyond the search"
    for n in (2, 3, 5, 10, 30):
        for nc in np.linspace(0.0, 60.0, 61):
            assert 0.05 - 1e-12 <= t_test_power(nc / math.sqrt(n), n) <= 1.0


@pytest.mark.parametrize(("power", "alpha"), [(0.8, 0.05), (0.9, 0.01), (0.5, 0.2), (0.99, 0.001)])
def test_seeds_needed_equal_a_search_from_two(power: float, alpha: float) -> None:
    """The search starts near the normal approximation; it must land where counting up from 2 does."""
    for effect in (0.1, 0.3, 0.5, 0.8, 1.0, 1.5, 3.0, 10.0, -0.7):
        n = 2
        while scipy_power(effect, n, alpha) < power:
            n += 1
        assert seeds_for_power(effect, power, alpha) == n, (effect, power, alpha)


def test_the_power_grows_with_seeds_and_effect() -> None:
    powers = [t_test_power(0.7, n) for n in range(2, 40)]
    assert powers == sorted(powers)
    assert [t_test_power(e, 6) for e in (0.0, 0.5, 1.0, 2.0)] == sorted(t_test_power(e, 6) for e in (0.0, 0.5, 1, 2))
    assert seeds_for_power(0.5) == seeds_for_power(-0.5), "two-sided: the sign does not matter"


def _independent(run: Path) -> dict[tuple[str, str, str], dict[str, float]]:
    """Per task, its best arm (the highest mean of the complete arms) against each other arm, recomputed
    from results.csv: n, mean and sd of best − arm, and the task's number of pairs of arms."""
    with open(run / "results.csv", encoding="utf-8") as handle:
        rows = [r for r in csv.DictReader(handle) if r["status"] in ("ok", "budget_exhausted") and r["score_best"]]
    held_out = {r["task"] for r in rows if r["score_test_best"]}
    scores: dict[str, dict[str, dict[int, float]]] = {}
    for row in rows:
        arm = row["trainer"] + ("" if row["params_label"] in ("", "default") else f" [{row['params_label']}]")
        column = "score_test_best" if row["task"] in held_out else "score_best"
        scores.setdefault(row["task"], {}).setdefault(arm, {})[int(row["seed"])] = float(row[column])
    out = {}
    for task, arms in scores.items():
        best = max(sorted(arms), key=lambda name: statistics.fmean(arms[name].values()))
        for arm in arms:
            if arm == best:
                continue
            seeds = sorted(set(arms[best]) & set(arms[arm]))
            diff = [arms[best][s] - arms[arm][s] for s in seeds]
            diff = [0.0 if abs(d) <= 1e-9 else d for d in diff]
            out[(task, best, arm)] = {"n": len(diff), "mean": statistics.fmean(diff), "sd": statistics.stdev(diff),
                                      "pairs": len(arms) * (len(arms) - 1) // 2}
    return out


def test_power_of_a_stub_run_equals_scipy(stub_matrix_run: Path) -> None:
    proc = run_cli("power", str(stub_matrix_run), "--format", "json", "--effect", "0.1")
    assert proc.returncode == 0, proc.stderr
    printed = json.loads(proc.stdout)
    assert (printed["alpha"], printed["power"], printed["effect"]) == (0.05, 0.8, 0.1)
    expected = _independent(stub_matrix_run)
    assert {(r["task"], r["best"], r["arm"]) for r in printed["rows"]} == set(expected)
    checked = 0
    for row in printed["rows"]:
        want = expected[(row["task"], row["best"], row["arm"])]
        level = 0.05 / want["pairs"]
        assert row["n"] == want["n"] == STUB_MATRIX_SEEDS and row["alpha_level"] == pytest.approx(level)
        assert row["mean_diff"] == pytest.approx(want["mean"], abs=1e-12)
        assert row["sd_diff"] == pytest.approx(want["sd"], rel=1e-9, abs=1e-12)
        if want["sd"] <= 1e-9:  # no variance between seeds: said, and no power claimed
            assert row["note"] == "no variance between seeds" and row["power"] is None
            continue
        assert row["power"] == pytest.approx(scipy_power(0.1 / want["sd"], STUB_MATRIX_SEEDS, level), rel=1e-9)
        needed = row["seeds_for_80"]
        assert scipy_power(0.1 / want["sd"], needed, level) >= 0.8
        assert needed == 2 or scipy_power(0.1 / want["sd"], needed - 1, level) < 0.8
        checked += 1
    assert checked >= 2, "the stub run has pairs with an ordinary spread, checked against scipy"
    metrics = {r["task"]: r["metric"] for r in printed["rows"]}
    assert metrics == {"internal:code_param": "test_best", "internal:numeric_param": "best"}


def test_formats_and_target(stub_matrix_run: Path) -> None:
    markdown = run_cli("power", str(stub_matrix_run))
    assert markdown.returncode == 0, markdown.stderr
    assert markdown.stdout.startswith("| task | best | runner-up | metric | n | dropped | mean best − arm | sd | effect |")
    assert "if they truly differed by 0.05 (--effect" in markdown.stdout
    table = list(csv.DictReader(run_cli("power", str(stub_matrix_run), "--format", "csv", "--power", "0.9",
                                        check=True).stdout.splitlines()))
    assert "seeds_for_90" in table[0] and "seeds_for_80" not in table[0]
    finite = [r for r in table if r["effect_size"] not in ("", "inf", "-inf")]
    assert finite and all(scipy_power(float(r["effect_size"]), int(r["seeds_for_90"]), float(r["alpha_level"])) >= 0.9
                          for r in finite)


def test_hand_made_run_through_the_cli(tmp_path: Path) -> None:
    a_scores, b_scores = HAND_MADE[0]
    jobs = [job("s:t", "A", seed, a) for seed, a in enumerate(a_scores)]
    jobs += [job("s:t", "B", seed, b) for seed, b in enumerate(b_scores)]
    jobs.append(job("s:t", "B", 99, 0.9))  # a seed A lacks: not paired
    jobs.append(job("s:t", "A", 98, None, status="failed", error="boom"))
    run = make_run(tmp_path, "r", jobs)
    row = json.loads(run_cli("power", str(run), "--format", "json", "--effect", "0.02", check=True).stdout)["rows"][0]
    diff = [x - y for x, y in zip(a_scores, b_scores, strict=True)]
    # B's extra seed (0.9) makes its mean the higher: B is the best arm, A the runner-up (B − A)
    assert (row["best"], row["arm"], row["n"], row["dropped"], row["metric"]) == ("B", "A", 6, 2, "best")
    assert row["mean_diff"] == pytest.approx(-statistics.fmean(diff), abs=1e-12)
    assert row["power"] == pytest.approx(scipy_power(0.02 / statistics.stdev(diff), 6), rel=1e-10)


def test_user_errors_exit_2(tmp_path: Path, stub_matrix_run: Path) -> None:
    for args, message in (((str(stub_matrix_run), "--alpha", "0.5", "--power", "0.4"), "power must be above alpha"),
                          ((str(tmp_path / "nope"),), "no such run directory"),
                          ((str(stub_matrix_run), "--alpha", "1.5"), "between 0 and 1"),
                          ((str(stub_matrix_run), "--effect", "0"), "must be a positive number")):
        proc = run_cli("power", *args)
        assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    lonely = make_run(tmp_path, "one", [job("s:t", "A", 1, 0.5)])
    proc = run_cli("power", str(lonely))
    assert proc.returncode == 2 and "nothing to plan" in proc.stderr
