"""Each arm's distance to a task's best known value, for tasks that declare one (discovery tasks).

``pct_of_best_known`` (results.csv) is 100 at the best published value and above 100 beyond it, the
direction of the task already applied; here it is averaged over an arm's scored seeds, and so is
``pct_of_alphaevolve`` (the built-in discovery problems' second yardstick, AlphaEvolve's value).  Arms whose
scores the candidate could reach (a plain ``evaluate()`` task) are marked by ``trust``.
"""

from __future__ import annotations

import math

import pandas as pd

COLUMNS = ("task", "trainer", "params_label", "best_known", "n", "pct_mean", "pct_max", "pct_alphaevolve_mean", "trust")
CANDIDATE_REACHABLE = "candidate-reachable"


def best_known_summary(jobs: pd.DataFrame) -> pd.DataFrame:
    """One row per (task, arm) with a best known value or a candidate-reachable score: mean and best % of
    the best known value over scored seeds (NaN without one)."""
    reachable = jobs["score_trust"].astype(str).str.contains(CANDIDATE_REACHABLE) if "score_trust" in jobs else None
    if jobs.empty or (jobs["best_known"].isna().all() and (reachable is None or not reachable.any())):
        return pd.DataFrame(columns=list(COLUMNS))
    rows = []
    for (task, trainer, label), group in jobs.groupby(["task", "trainer", "params_label"], sort=True):
        scored = group[group["scored"]]
        values = scored["pct_of_best_known"].astype(float).dropna()
        alphaevolve = scored["pct_of_alphaevolve"].astype(float).dropna() if "pct_of_alphaevolve" in scored \
            else pd.Series(dtype=float)
        reference = group["best_known"].dropna()
        trust = sorted({str(t) for t in group.get("score_trust", pd.Series(dtype=str)).fillna("") if t})
        if reference.empty and CANDIDATE_REACHABLE not in trust:
            continue
        rows.append({"task": task, "trainer": trainer, "params_label": label,
                     "best_known": float(reference.iloc[0]) if len(reference) else math.nan,
                     "n": len(values), "pct_mean": values.mean() if len(values) else math.nan,
                     "pct_max": values.max() if len(values) else math.nan,
                     "pct_alphaevolve_mean": alphaevolve.mean() if len(alphaevolve) else math.nan,
                     "trust": ",".join(trust)})
    return pd.DataFrame(rows, columns=list(COLUMNS))
