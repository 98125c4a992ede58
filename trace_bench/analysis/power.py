"""Power analysis that plans: how many seeds would the verdict's test need to separate the best arm of
a task from each runner-up, if they truly differ by a minimal effect the user cares about?

The test is the verdict's (:mod:`trace_bench.store.paired`): the two-sided paired t-test over the
seeds both arms scored, Holm-corrected over the task's m pairs of arms.  Holm's first step compares
the smallest p-value with alpha / m, so the plan is made at that level (a lower bound for Holm's
power on any pair).  The effect is not the observed difference (power at the observed effect is a
function of the p-value already in hand and says nothing new): it is ``--effect``, a difference in the
score's units that would matter, with the standard deviation of the paired differences estimated from
the run.  Under a true mean difference ``effect`` and sd ``s`` of the differences, the t statistic
over n seeds follows a noncentral t with n − 1 degrees of freedom and noncentrality (effect / s)·√n:

    power(n) = P(T' > t_c) + P(T' < −t_c),   t_c = t(1 − alpha/(2m), n − 1),   T' ~ nct(n − 1, effect·√n / s)

exactly (scipy's ``nct``).  From it: the power at the current n, the fewest seeds whose power reaches
the target, and the smallest difference the current n detects with the target power (the *minimum
detectable difference*, in the score's units).

Edge cases, each a definition rather than an accident of floating point:

* fewer than two paired seeds: no standard deviation, nothing but n and the mean difference;
* **no variance between seeds** (every paired seed gave the same difference): the run gives no
  estimate of the noise, so no power is claimed (never 1).  The verdict's test then decides on the
  sign-flip p-value 2 / 2^n, so the seeds that *could* decide such a difference are given
  (:func:`trace_bench.store.paired.seeds_to_decide_without_variance`), said as such;
* effects so large that scipy's noncentral t no longer returns a number (beyond ~10^9 standard
  errors): power 1, which is what the distribution gives to double precision long before.

scipy is imported on first use (``analysis`` extra), like everything this package draws on.
"""

from __future__ import annotations

import io
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from statistics import NormalDist
from typing import Any

import numpy as np
import pandas as pd

from trace_bench.analysis.load import RunDirError, distinguish_runs, load_runs
from trace_bench.analysis.pairs import dropped_seeds, seeds_run, task_scores
from trace_bench.analysis.protocol import DEFAULT_METRIC, RANK_METRIC, RANK_SCORE, with_rank_score
from trace_bench.analysis.stats import leaderboard
from trace_bench.store.models import arm_label
from trace_bench.store.paired import ALPHA, seeds_to_decide_without_variance
from trace_bench.store.ranking import TIE_TOLERANCE

DEFAULT_ALPHA = ALPHA
DEFAULT_POWER = 0.8
#: the minimal effect planned for, in the score's units (five points on a 0–1 score)
DEFAULT_EFFECT = 0.05
#: the most seeds :func:`seeds_for_power` looks at; beyond, the answer is "more than this"
MAX_SEEDS = 10**9
_HUGE_NONCENTRALITY = 1e6


def check_levels(alpha: float, power: float) -> None:
    """``alpha`` in (0, 1) and ``power`` in (alpha, 1): at zero effect the power *is* alpha, so a
    target at or below it is met by any number of seeds and says nothing."""
    if not 0 < alpha < 1 or not math.isfinite(alpha):
        raise ValueError(f"alpha must be between 0 and 1 (exclusive), got {alpha}")
    if not alpha < power < 1 or not math.isfinite(power):
        raise ValueError(f"power must be above alpha ({alpha}) and below 1, got {power}")


def t_test_power(effect_size: float, n: int, alpha: float = DEFAULT_ALPHA) -> float:
    """Power of the two-sided one-sample (paired) t-test with ``n`` pairs at standardized effect
    ``effect_size`` (mean / sd of the differences); NaN for n < 2."""
    if n < 2 or math.isnan(effect_size):
        return math.nan
    from scipy import stats

    df = n - 1
    critical = float(stats.t.ppf(1 - alpha / 2, df))
    noncentrality = abs(effect_size) * math.sqrt(n)
    if math.isinf(noncentrality):
        return 1.0
    # The far tail P(T' < -t_c) is read as P(T'' > t_c) with T'' ~ nct(df, -noncentrality), the same number:
    # scipy's nct.cdf returns NaN there for noncentralities from about 8 (scipy 1.17), its sf does not.
    power = float(stats.nct.sf(critical, df, noncentrality) + stats.nct.sf(critical, df, -noncentrality))
    if not math.isfinite(power):
        if noncentrality > _HUGE_NONCENTRALITY:
            return 1.0
        raise ArithmeticError(f"noncentral t gave {power} at df={df}, noncentrality={noncentrality}")
    return min(power, 1.0)


def seeds_for_power(effect_size: float, power: float = DEFAULT_POWER, alpha: float = DEFAULT_ALPHA,
                    max_seeds: int = MAX_SEEDS) -> int | None:
    """The fewest pairs (at least 2) whose :func:`t_test_power` reaches ``power`` at ``effect_size``;
    None when the effect is 0 or NaN (never) or more than ``max_seeds`` would be needed.  The power
    rises with n at a fixed nonzero effect, so the answer is exact: a bracket is grown around the
    normal approximation's n (with Guenther's correction, usually within one of the answer) and
    bisected, a few noncentral t evaluations per pair instead of a search from 2."""
    check_levels(alpha, power)
    if math.isnan(effect_size) or effect_size == 0:
        return None

    def enough(n: int) -> bool:
        return t_test_power(effect_size, n, alpha) >= power

    if enough(2):
        return 2
    normal = NormalDist()
    z_alpha, z_power = normal.inv_cdf(1 - alpha / 2), normal.inv_cdf(power)
    guess = ((z_alpha + z_power) / abs(effect_size)) ** 2 + z_alpha ** 2 / 2
    start = min(max(3, math.ceil(guess)) if math.isfinite(guess) else max_seeds, max_seeds)
    step = 1
    if enough(start):  # enough(low) is False, enough(high) True
        high, low = start, start - 1
        while low > 2 and enough(low):
            high, step = low, step * 2
            low = max(2, high - step)
    else:
        low, high = start, min(start + 1, max_seeds)
        while not enough(high):
            if high >= max_seeds:
                return None
            low, step = high, step * 2
            high = min(low + step, max_seeds)
    while high - low > 1:
        middle = (low + high) // 2
        if enough(middle):
            high = middle
        else:
            low = middle
    return high


@lru_cache(maxsize=4096)
def detectable_effect(n: int, power: float = DEFAULT_POWER, alpha: float = DEFAULT_ALPHA) -> float:
    """The standardized effect (in sd units) that ``n`` pairs detect with probability ``power``;
    NaN for n < 2.  Solved on the noncentrality, where the power is continuous and increasing."""
    check_levels(alpha, power)
    if n < 2:
        return math.nan
    from scipy.optimize import brentq

    def shortfall(noncentrality: float) -> float:
        return t_test_power(noncentrality / math.sqrt(n), n, alpha) - power

    high = 1.0
    while shortfall(high) < 0:
        high *= 2
    noncentrality = brentq(shortfall, 0.0, high, xtol=1e-12, rtol=4 * np.finfo(float).eps, maxiter=200)
    return float(noncentrality) / math.sqrt(n)


@dataclass(frozen=True)
class PowerResult:
    """The plan for one pair of arms (see the module docstring): ``n`` paired seeds, the observed mean
    and sd of the differences, the ``effect`` planned for and its standardized size (effect / sd), the
    test's level ``alpha_level`` (alpha / pairs), the power at n, the seeds needed for the target
    power (None: never, or beyond :data:`MAX_SEEDS`), the minimum detectable difference at n, and a
    ``note`` (``no variance between seeds``, ``fewer than 2 paired seeds``) where the numbers are not
    power figures."""

    n: int
    mean_diff: float
    sd_diff: float
    effect: float
    effect_size: float
    alpha_level: float
    power: float
    seeds_needed: int | None
    min_detectable_diff: float
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


NO_VARIANCE = "no variance between seeds"


def paired_power(a: Any, b: Any, effect: float = DEFAULT_EFFECT, alpha: float = DEFAULT_ALPHA,
                 power: float = DEFAULT_POWER, pairs: int = 1, tolerance: float = TIE_TOLERANCE) -> PowerResult:
    """The plan for A − B over pairs where both are finite (differences within ``tolerance`` count as
    0, as in the test), at a true difference ``effect`` and the test's level alpha / ``pairs``."""
    check_levels(alpha, power)
    if not effect > 0 or not math.isfinite(effect):
        raise ValueError(f"effect must be a positive difference in the score's units, got {effect}")
    level = alpha / max(1, pairs)
    diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    diff = diff[np.isfinite(diff)]
    diff = np.where(np.abs(diff) <= tolerance, 0.0, diff)
    n = len(diff)
    mean = float(diff.mean()) if n else math.nan
    if n < 2:
        return PowerResult(n, mean, math.nan, effect, math.nan, level, math.nan, None, math.nan,
                           "fewer than 2 paired seeds")
    sd = float(diff.std(ddof=1))
    if sd <= tolerance:
        needed = seeds_to_decide_without_variance(pairs, alpha) if abs(mean) > tolerance else None
        return PowerResult(n, mean, 0.0, effect, math.nan, level, math.nan, needed, math.nan, NO_VARIANCE)
    size = effect / sd
    return PowerResult(n, mean, sd, effect, size, level, t_test_power(size, n, level),
                       seeds_for_power(size, power, level), detectable_effect(n, power, level) * sd)


POWER_COLUMNS = ["task", "best", "arm", "metric", "n", "dropped", "mean_diff", "sd_diff", "effect", "effect_size",
                 "alpha_level", "power", "seeds_needed", "min_detectable_diff", "note"]


def power_table(jobs: pd.DataFrame, effect: float = DEFAULT_EFFECT, alpha: float = DEFAULT_ALPHA,
                power: float = DEFAULT_POWER, metric: str = DEFAULT_METRIC) -> pd.DataFrame:
    """One row per task and runner-up: the plan (:class:`PowerResult`) for separating the task's best
    arm (the leaderboard's) from that arm, differences best − arm, on the leaderboard's metric; with
    ``dropped``, the seeds either arm ran that are not paired."""
    check_levels(alpha, power)
    if jobs.empty:
        return pd.DataFrame(columns=POWER_COLUMNS)
    board = leaderboard(jobs, metric, alpha)
    bests = {str(r["task"]): arm_label(str(r["trainer"]), str(r["params_label"]))
             for _, r in board.iterrows() if r["vs_best"] == "best"}
    ranked = with_rank_score(jobs, metric)
    chosen = ranked.groupby("task")[RANK_METRIC].first()
    ran = seeds_run(ranked)
    rows = []
    for task, scores in task_scores(ranked, RANK_SCORE).items():
        best = bests.get(task)
        if best is None or best not in scores:
            continue
        pairs = len(scores) * (len(scores) - 1) // 2
        for arm in sorted(scores, key=lambda name: -float(np.mean(list(scores[name].values())))):
            if arm == best:
                continue
            seeds = sorted(set(scores[best]) & set(scores[arm]))
            plan = paired_power([scores[best][s] for s in seeds], [scores[arm][s] for s in seeds], effect, alpha,
                                power, pairs)
            rows.append({"task": task, "best": best, "arm": arm, "metric": chosen[task],
                         "dropped": dropped_seeds(ran, task, best, arm, plan.n), **plan.as_dict()})
    frame = pd.DataFrame(rows, columns=POWER_COLUMNS)
    frame["seeds_needed"] = frame["seeds_needed"].astype("Int64")
    return frame


def seeds_column(power: float) -> str:
    """The name the outputs give ``seeds_needed``: ``seeds_for_80`` for a power of 0.8."""
    return f"seeds_for_{power * 100:.6g}"


def describe(alpha: float, power: float, effect: float) -> str:
    """What the columns mean, for the terminal and the report."""
    percent = f"{power * 100:.6g}%"
    return (f"How many seeds would separate each task's best arm from each runner-up, if they truly differed by "
            f"{effect:g} (--effect, in the score's units)? The verdict's test: two-sided paired t-test over the "
            f"seeds both arms scored, at level alpha {alpha:g} / m for the task's m pairs of arms (Holm's first "
            f"step). sd: of the paired differences best − arm in this run; power: chance that n seeds separate a "
            f"true difference of {effect:g}; seeds for {percent}: the fewest seeds with {percent} power; min. "
            f"detectable: the smallest true difference n seeds separate with {percent} power. '{NO_VARIANCE}': "
            "every seed gave the same difference, so no power is claimed; the seeds shown are those at which "
            "identical differences decide (sign-flip p = 2/2^n).")


def seeds_text(value: Any, note: str = "") -> str:
    """How the table shows ``seeds_needed``: ``> 10^9`` beyond the search, ``-`` where not given."""
    if value is not None and not pd.isna(value):
        return f"{int(value):,}" + (" (if identical)" if note == NO_VARIANCE else "")
    return "-" if note else f"> {MAX_SEEDS:.0e}".replace("e+0", "e")


def as_records(frame: pd.DataFrame, power: float) -> list[dict[str, Any]]:
    """JSON-ready rows: NaN and missing become None, ``seeds_needed`` takes its output name."""
    name = seeds_column(power)
    records = []
    for row in frame.to_dict("records"):
        clean = {name if key == "seeds_needed" else key: None if _missing(value) else value
                 for key, value in row.items()}
        clean["n"], clean["dropped"] = int(row["n"]), int(row["dropped"])
        if clean[name] is not None:
            clean[name] = int(row["seeds_needed"])
        records.append(clean)
    return records


def _missing(value: Any) -> bool:
    if value is None or value is pd.NA:
        return True
    return isinstance(value, float) and not math.isfinite(value)


FORMATS = ("md", "csv", "json")
HEADER = ["task", "best", "runner-up", "metric", "n", "dropped", "mean best − arm", "sd", "effect", "level", "power",
          "seeds for {}%", "min. detectable"]


def _number(value: Any, digits: int = 4) -> str:
    return "-" if _missing(value) else f"{float(value):.{digits}g}"


def to_markdown(frame: pd.DataFrame, alpha: float, power: float, effect: float) -> str:
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    header = [h.format(f"{power * 100:.6g}") for h in HEADER]
    rows = [line([str(r["task"]), str(r["best"]), str(r["arm"]), str(r["metric"]), str(r["n"]), str(r["dropped"]),
                  _number(r["mean_diff"]), _number(r["sd_diff"]) if not r["note"] else r["note"], _number(r["effect"]),
                  _number(r["alpha_level"], 3), _number(r["power"], 3), seeds_text(r["seeds_needed"], r["note"]),
                  _number(r["min_detectable_diff"])])
            for _, r in frame.iterrows()]
    align = "|" + "|".join(["---"] * 4 + ["---:"] * 9) + "|"
    return "\n".join([line(header), align, *rows, "", describe(alpha, power, effect)]) + "\n"


def to_csv(frame: pd.DataFrame, alpha: float, power: float, effect: float) -> str:
    buffer = io.StringIO()
    frame.rename(columns={"seeds_needed": seeds_column(power)}).to_csv(buffer, index=False, lineterminator="\n",
                                                                      float_format="%.10g")
    return buffer.getvalue()


def to_json(frame: pd.DataFrame, alpha: float, power: float, effect: float) -> str:
    return json.dumps({"alpha": alpha, "power": power, "effect": effect,
                       "test": "two-sided paired t-test, Holm over the task's pairs (planned at alpha / pairs)",
                       "rows": as_records(frame, power)}, indent=2) + "\n"


RENDERERS = {"md": to_markdown, "csv": to_csv, "json": to_json}


def power_main(run_paths: Sequence[str], fmt: str = "md", alpha: float = DEFAULT_ALPHA, power: float = DEFAULT_POWER,
               metric: str = DEFAULT_METRIC, effect: float = DEFAULT_EFFECT) -> int:
    """Print the power plan of one or more runs; 2 on a user error (bad run, level, effect or format)."""
    try:
        if fmt not in RENDERERS:
            raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
        check_levels(alpha, power)
        if not effect > 0 or not math.isfinite(effect):
            raise ValueError(f"--effect must be a positive difference in the score's units, got {effect}")
        runs = distinguish_runs(load_runs(list(run_paths)))
        frame = power_table(runs.jobs, effect, alpha, power, metric)
    except (RunDirError, ValueError) as exc:
        print(f"trace-bench: error: {exc}", file=sys.stderr)
        return 2
    if frame.empty:
        print("trace-bench: error: no task has two arms with a scored seed: nothing to plan", file=sys.stderr)
        return 2
    sys.stdout.write(RENDERERS[fmt](frame, alpha, power, effect))
    return 0
