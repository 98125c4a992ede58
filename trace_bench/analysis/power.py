"""Power analysis of paired comparisons: are there enough seeds to tell two arms apart?

For two arms on one task, paired by seed, the differences d = A − B over the seeds both completed
(the others are ``dropped``, counted, never imputed) give n, their mean and sample standard deviation, and the observed effect size dz = mean / sd.  A
two-sided paired t-test at level ``alpha`` rejects when |t| > t(1 − alpha/2, n − 1); under an effect
dz the statistic follows a noncentral t with n − 1 degrees of freedom and noncentrality dz·√n, so

    power(n, dz) = P(T' > t_c) + P(T' < −t_c),   T' ~ nct(n − 1, dz·√n)

exactly (scipy's ``nct``).  From it: the power at the current n, the fewest seeds whose power
reaches the target at the observed effect, and the smallest difference the current n detects with
the target power (the *minimum detectable difference*, in the score's units, at the observed sd).

Edge cases, each a definition rather than an accident of floating point:

* n < 2: no standard deviation, so nothing but n and the mean difference;
* mean difference 0 (within the ties' tolerance; identical arms included): no effect to detect, the
  power is ``alpha`` (the test's false-positive rate) and no number of seeds reaches the target;
* sd 0 with a nonzero mean (every seed moved by the same amount): the effect is infinite, power 1,
  and two seeds suffice; the minimum detectable difference is 0;
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
from trace_bench.analysis.protocol import DEFAULT_METRIC, RANK_METRIC, RANK_SCORE, with_rank_score
from trace_bench.analysis.stats import dropped_seeds, paired_samples, seeds_run
from trace_bench.store.ranking import TIE_TOLERANCE

DEFAULT_ALPHA = 0.05
DEFAULT_POWER = 0.8
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
    """The power analysis of one set of paired differences (see the module docstring): NaN where
    n < 2; ``seeds_needed`` None when no number of seeds (up to :data:`MAX_SEEDS`) reaches the
    target."""

    n: int
    mean_diff: float
    sd_diff: float
    effect_size: float
    power: float
    seeds_needed: int | None
    min_detectable_diff: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def paired_power(a: Any, b: Any, alpha: float = DEFAULT_ALPHA, power: float = DEFAULT_POWER,
                 tolerance: float = TIE_TOLERANCE) -> PowerResult:
    """Power analysis of A − B over pairs where both are finite; differences within ``tolerance``
    count as 0, as in the paired tests."""
    check_levels(alpha, power)
    diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    diff = diff[np.isfinite(diff)]
    diff = np.where(np.abs(diff) <= tolerance, 0.0, diff)
    n = len(diff)
    mean = float(diff.mean()) if n else math.nan
    if n < 2:
        return PowerResult(n, mean, math.nan, math.nan, math.nan, None, math.nan)
    sd = float(diff.std(ddof=1))
    if abs(mean) <= tolerance:
        mean, effect = 0.0, 0.0
    elif sd <= tolerance:
        sd, effect = 0.0, math.copysign(math.inf, mean)
    else:
        effect = mean / sd
    return PowerResult(n, mean, sd, effect, t_test_power(effect, n, alpha), seeds_for_power(effect, power, alpha),
                       detectable_effect(n, power, alpha) * sd)


POWER_COLUMNS = ["task", "arm_a", "arm_b", "metric", "n", "dropped", "mean_diff", "sd_diff", "effect_size", "power",
                 "seeds_needed", "min_detectable_diff"]


def power_table(jobs: pd.DataFrame, alpha: float = DEFAULT_ALPHA, power: float = DEFAULT_POWER,
                metric: str = DEFAULT_METRIC) -> pd.DataFrame:
    """One row per task and pair of arms sharing a scored seed (``arm_a`` < ``arm_b``, differences
    A − B), on the task's ranking score (``metric`` where the task has it, else the selection split's
    best: column ``metric``), with :class:`PowerResult`'s fields over the seeds both arms completed, and
    ``dropped``: the seeds either arm ran that are not paired (the other arm's job failed or is missing)."""
    check_levels(alpha, power)
    if jobs.empty:
        return pd.DataFrame(columns=POWER_COLUMNS)
    ranked = with_rank_score(jobs, metric)
    chosen = ranked.groupby("task")[RANK_METRIC].first()
    ran = seeds_run(ranked)
    rows = [{"task": task, "arm_a": arm_a, "arm_b": arm_b, "metric": chosen[task],
             "dropped": dropped_seeds(ran, task, arm_a, arm_b, len(a)), **paired_power(a, b, alpha, power).as_dict()}
            for task, arm_a, arm_b, a, b in paired_samples(ranked, RANK_SCORE)]
    frame = pd.DataFrame(rows, columns=POWER_COLUMNS)
    frame["seeds_needed"] = frame["seeds_needed"].astype("Int64")
    return frame


def seeds_column(power: float) -> str:
    """The name the outputs give ``seeds_needed``: ``seeds_for_80`` for a power of 0.8."""
    return f"seeds_for_{power * 100:.6g}"


def describe(alpha: float, power: float) -> str:
    """What the columns mean, for the terminal and the report."""
    percent = f"{power * 100:.6g}%"
    return (f"Two-sided paired t-test at alpha {alpha:g} over the seeds both arms completed (A − B); dropped: seeds "
            "either arm ran that are not paired (the other arm's job failed or is missing). power: chance "
            f"that n seeds show the observed mean difference as significant; seeds for {percent}: seeds needed "
            f"for {percent} power at the observed effect (mean / sd); min. detectable: the smallest difference n "
            f"seeds detect with {percent} power at the observed sd, in the score's units. One test at a time: "
            "with k comparisons under Holm, use alpha / k for a conservative figure.")


def seeds_text(value: Any, effect_size: float) -> str:
    """How the table shows ``seeds_needed``: ``never`` for no effect, ``> 10^9`` beyond the search."""
    if value is not None and not pd.isna(value):
        return f"{int(value):,}"
    if isinstance(effect_size, float) and math.isnan(effect_size):
        return "-"
    return "never" if effect_size == 0 else f"> {MAX_SEEDS:.0e}".replace("e+0", "e")


def as_records(frame: pd.DataFrame, power: float) -> list[dict[str, Any]]:
    """JSON-ready rows: NaN and missing become None, ``seeds_needed`` takes its output name."""
    name = seeds_column(power)
    records = []
    for row in frame.to_dict("records"):
        clean = {name if key == "seeds_needed" else key: None if _missing(value) else value
                 for key, value in row.items()}
        clean["n"], clean["dropped"] = int(clean["n"]), int(clean["dropped"])
        if clean[name] is not None:
            clean[name] = int(clean[name])
        records.append(clean)
    return records


def _missing(value: Any) -> bool:
    if value is None or value is pd.NA:
        return True
    return isinstance(value, float) and not math.isfinite(value)



FORMATS = ("md", "csv", "json")
HEADER = ["task", "A", "B", "metric", "n", "dropped", "mean A − B", "sd", "power", "seeds for {}%", "min. detectable"]


def _number(value: Any, digits: int = 4) -> str:
    return "-" if _missing(value) else f"{float(value):.{digits}g}"


def to_markdown(frame: pd.DataFrame, alpha: float, power: float) -> str:
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    header = [h.format(f"{power * 100:.6g}") for h in HEADER]
    rows = [line([str(r["task"]), str(r["arm_a"]), str(r["arm_b"]), str(r["metric"]), str(r["n"]), str(r["dropped"]),
                  _number(r["mean_diff"]), _number(r["sd_diff"]), _number(r["power"], 3),
                  seeds_text(r["seeds_needed"], r["effect_size"]), _number(r["min_detectable_diff"])])
            for _, r in frame.iterrows()]
    align = "|" + "|".join(["---"] * 4 + ["---:"] * 7) + "|"
    return "\n".join([line(header), align, *rows, "", describe(alpha, power)]) + "\n"


def to_csv(frame: pd.DataFrame, alpha: float, power: float) -> str:
    buffer = io.StringIO()
    frame.rename(columns={"seeds_needed": seeds_column(power)}).to_csv(buffer, index=False, lineterminator="\n",
                                                                      float_format="%.10g")
    return buffer.getvalue()


def to_json(frame: pd.DataFrame, alpha: float, power: float) -> str:
    return json.dumps({"alpha": alpha, "power": power, "test": "two-sided paired t", "rows": as_records(frame, power)},
                      indent=2) + "\n"


RENDERERS = {"md": to_markdown, "csv": to_csv, "json": to_json}


def power_main(run_paths: Sequence[str], fmt: str = "md", alpha: float = DEFAULT_ALPHA, power: float = DEFAULT_POWER,
               metric: str = DEFAULT_METRIC) -> int:
    """Print the power analysis of one or more runs; 2 on a user error (bad run, level or format)."""
    try:
        if fmt not in RENDERERS:
            raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
        check_levels(alpha, power)
        runs = distinguish_runs(load_runs(list(run_paths)))
        frame = power_table(runs.jobs, alpha, power, metric)
    except (RunDirError, ValueError) as exc:
        print(f"trace-bench: error: {exc}", file=sys.stderr)
        return 2
    if frame.empty:
        print("trace-bench: error: no two arms of a task share a scored seed: nothing to pair", file=sys.stderr)
        return 2
    sys.stdout.write(RENDERERS[fmt](frame, alpha, power))
    return 0
