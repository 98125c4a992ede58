"""Small statistics for the run tables: mean, std, a Student-t 95 % interval kept inside the
score's range, and Student's t distribution's two-sided tail (the verdict's paired test).

The leaderboard is written by the runner, which must not need the optional ``analysis`` extra, and
importing scipy would cost the driver ~1.7 s on a 2-core machine (more than a 50-job stub run spends
writing its tables).  ``scipy`` gives the exact t quantile when installed.  Without it, the 97.5 %
quantile comes from a table for df <= 30 and from Hill's (1970) series beyond, which agrees with
scipy to better than 1e-6 there; the tail probability is the regularized incomplete beta function
(a continued fraction), equal to scipy's ``t.sf`` to 1e-12 (both checked by tests), so the
leaderboard does not depend on the extras installed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def _t_quantile_hill(p: float, df: int) -> float:
    """Upper quantile of Student's t for one-sided tail ``1 - p`` (Hill, CACM algorithm 396)."""
    tail = 2.0 * (1.0 - p)  # two-sided tail probability
    if df == 1:
        return math.tan(math.pi * (1.0 - tail / 2.0) - math.pi / 2.0) if tail < 1 else 0.0
    if df == 2:
        return math.sqrt(2.0 / (tail * (2.0 - tail)) - 2.0)
    a = 1.0 / (df - 0.5)
    b = 48.0 / (a * a)
    c = ((20700.0 * a / b - 98.0) * a - 16.0) * a + 96.36
    d = ((94.5 / (b + c) - 3.0) / b + 1.0) * math.sqrt(a * math.pi / 2.0) * df
    x = d * tail
    y = x ** (2.0 / df)
    if y > 0.05 + a:
        z = _normal_quantile(0.5 * tail)
        y = z * z
        if df < 5:
            c += 0.3 * (df - 4.5) * (z + 0.6)
        c = (((0.05 * d * z - 5.0) * z - 7.0) * z - 2.0) * z + b + c
        y = (((((0.4 * y + 6.3) * y + 36.0) * y + 94.5) / c - y - 3.0) / b + 1.0) * z
        y = a * y * y
        y = math.expm1(y)
    else:
        y = ((1.0 / (((df + 6.0) / (df * y) - 0.089 * d - 0.822) * (df + 2.0) * 3.0) + 0.5 / (df + 4.0)) * y - 1.0) \
            * (df + 1.0) / (df + 2.0) + 1.0 / y
    return math.sqrt(df * y)


def _normal_quantile(upper_tail: float) -> float:
    from statistics import NormalDist

    return NormalDist().inv_cdf(1.0 - upper_tail)


# Student t 0.975 quantiles for df = 1..30 (six decimals).
_T975 = (12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004, 2.262157, 2.228139,
         2.200985, 2.178813, 2.160369, 2.144787, 2.131450, 2.119905, 2.109816, 2.100922, 2.093024, 2.085963,
         2.079614, 2.073873, 2.068658, 2.063899, 2.059539, 2.055529, 2.051831, 2.048407, 2.045230, 2.042272)


def t_quantile_fallback(p: float, df: int) -> float:
    if p == 0.975 and 1 <= df <= len(_T975):
        return _T975[df - 1]
    return _t_quantile_hill(p, df)


def t_quantile(p: float, df: int) -> float:
    """Student-t quantile.  The common case (95 % interval, up to 31 seeds) comes from the table
    (scipy's values to 6 decimals): importing scipy costs the driver ~1.7 s on a 2-core machine,
    more than a whole 50-job stub run spends writing its tables.  Past 30 degrees of freedom Hill's
    approximation agrees with scipy to 1e-8 (``tests/analysis/test_stats.py``), so large runs never
    import scipy either."""
    if p == 0.975 and 1 <= df <= len(_T975):
        return _T975[df - 1]
    if df > len(_T975):
        return _t_quantile_hill(p, df)
    try:
        from scipy.stats import t

        return float(t.ppf(p, df))
    except ImportError:
        return t_quantile_fallback(p, df)


ScoreRange = tuple[float | None, float | None]


def within(low: float, high: float, score_range: ScoreRange | None) -> tuple[float, float]:
    """An interval of a mean cut to the range its scores are declared to lie in.  The true mean lies in
    that range, so the cut interval covers it exactly as often as the uncut one: it only stops
    claiming values no score can take (``[0.904, 1.023]`` on a [0, 1] score is ``[0.904, 1]``)."""
    if score_range is None:
        return low, high
    bottom, top = score_range
    if bottom is not None and math.isfinite(bottom):
        low, high = max(low, bottom), max(high, bottom)
    if top is not None and math.isfinite(top):
        low, high = min(low, top), min(high, top)
    return low, high


def summarize(values: Sequence[float], score_range: ScoreRange | None = None
              ) -> tuple[int, float | None, float | None, float | None, float | None]:
    """(n, mean, sample std, CI low, CI high) with a two-sided 95 % Student-t interval, cut to
    ``score_range`` (:func:`within`)."""
    clean = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    n = len(clean)
    if n == 0:
        return 0, None, None, None, None
    mean = sum(clean) / n
    if n == 1:
        return 1, mean, None, None, None
    std = math.sqrt(sum((v - mean) ** 2 for v in clean) / (n - 1))
    half = t_quantile(0.975, n - 1) * std / math.sqrt(n)
    low, high = within(mean - half, mean + half, score_range)
    return n, mean, std, low, high


def t_two_sided_p(statistic: float, df: float) -> float:
    """P(|T| >= |statistic|) for Student's t with ``df`` degrees of freedom: the regularized
    incomplete beta function I_x(df/2, 1/2) at x = df / (df + t^2).  Infinite statistic: 0."""
    if math.isnan(statistic) or df <= 0:
        return math.nan
    if math.isinf(statistic):
        return 0.0
    x = df / (df + statistic * statistic)
    return min(1.0, max(0.0, _regularized_beta(x, df / 2.0, 0.5)))


def _regularized_beta(x: float, a: float, b: float) -> float:
    """I_x(a, b) by Lentz's continued fraction, on the side of the symmetry I_x(a, b) = 1 - I_(1-x)(b, a)
    where it converges fast."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_fraction(x, a, b) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(1.0 - x, b, a) / b


def _beta_fraction(x: float, a: float, b: float) -> float:
    tiny, epsilon = 1e-300, 1e-15
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 400):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= d * c
        if abs(d * c - 1.0) < epsilon:
            break
    return result
