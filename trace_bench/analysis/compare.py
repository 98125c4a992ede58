"""Paired comparison of two runs over shared (task, trainer, params, seed) cells."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from trace_bench.analysis.load import load_runs
from trace_bench.analysis.stats import ARM, Paired, holm, paired_test

KEY = [*ARM, "seed"]


class CompareError(ValueError):
    """The two runs cannot be compared fairly; the message says why."""


@dataclass
class CompareResult:
    run_a: str
    run_b: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    differing_axes: list[str] = field(default_factory=list)


def _snapshot(run_dir: Path) -> dict[str, Any]:
    import yaml

    try:
        data = yaml.safe_load((run_dir / "meta" / "config.snapshot.yaml").read_text())
    except (OSError, yaml.YAMLError):
        return {}
    return data if isinstance(data, dict) else {}


def differing_axes(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    def llm(c: dict[str, Any]) -> Any:
        block = c.get("llm") or {}
        return (c.get("mode"), block.get("provider"), block.get("model"), json.dumps(block.get("roles"), sort_keys=True))

    def trainers(c: dict[str, Any]) -> Any:
        return sorted(str(t.get("id")) for t in c.get("trainers") or [])

    def variants(c: dict[str, Any]) -> Any:
        return json.dumps([(t.get("id"), t.get("params_variants"), t.get("params")) for t in c.get("trainers") or []],
                          sort_keys=True, default=str)

    axes = {"llm": llm, "trainers": trainers,
            "params_variants": variants,
            "tasks": lambda c: json.dumps(c.get("tasks"), sort_keys=True, default=str),
            "seeds": lambda c: c.get("seeds")}
    out = []
    for name, key in axes.items():
        if key(a) != key(b):
            if name == "params_variants" and "trainers" in out:
                continue
            out.append(name)
    return out


def compare_runs(run_a: str | Path, run_b: str | Path, alpha: float = 0.05) -> CompareResult:
    runs = load_runs([run_a, run_b])
    a_dir, b_dir = Path(run_a), Path(run_b)
    axes = differing_axes(_snapshot(a_dir), _snapshot(b_dir))
    if len(axes) > 1:
        raise CompareError(f"the runs differ in more than one axis ({', '.join(axes)}); a fair comparison changes "
                           "one axis at a time (see docs/running-experiments.md)")
    jobs = runs.jobs[runs.jobs["scored"]]
    left = jobs[jobs["run_id"] == a_dir.name].set_index(KEY)
    right = jobs[jobs["run_id"] == b_dir.name].set_index(KEY)
    shared = left.index.intersection(right.index)
    if len(shared) == 0:
        raise CompareError(f"runs {a_dir.name} and {b_dir.name} share no (task, trainer, params, seed) cell "
                           "with a score; their matrices do not overlap")
    result = CompareResult(a_dir.name, b_dir.name, differing_axes=axes)
    tests: list[tuple[tuple[Any, ...], Paired]] = []
    shared_frame = pd.DataFrame(index=shared).reset_index()
    for arm, group in shared_frame.groupby(ARM, sort=True):
        index = pd.MultiIndex.from_frame(group[KEY])
        tests.append((arm, paired_test(left.loc[index, "score_best"].to_numpy(),
                                       right.loc[index, "score_best"].to_numpy())))
    adjusted = holm([t.p_value for _, t in tests])
    for (arm, test), p_adj in zip(tests, adjusted, strict=True):
        result.rows.append({**dict(zip(ARM, arm, strict=True)), "seeds": test.n, "mean_a_minus_b": test.mean_diff,
                            "ci_low": test.ci_low, "ci_high": test.ci_high, "p_value": test.p_value,
                            "p_holm": p_adj, "significant": bool(not math.isnan(p_adj) and p_adj < alpha),
                            "wins": test.wins, "ties": test.ties, "losses": test.losses})
    return result


def format_compare(result: CompareResult) -> str:
    lines = [f"compare {result.run_a} (A) vs {result.run_b} (B)"
             + (f"; differing axis: {result.differing_axes[0]}" if result.differing_axes else ""),
             f"{'task':<32} {'trainer':<22} {'params':<20} {'n':>3} {'A-B':>10} {'95% CI':>23} {'p':>8} sig"]
    for row in result.rows:
        ci = f"[{row['ci_low']:.4g}, {row['ci_high']:.4g}]" if not math.isnan(row["ci_low"]) else "-"
        lines.append(f"{row['task']:<32} {row['trainer']:<22} {row['params_label'][:20]:<20} {row['seeds']:>3} "
                     f"{row['mean_a_minus_b']:>10.4g} {ci:>23} {row['p_holm']:>8.3g} "
                     f"{'yes' if row['significant'] else 'no'}")
    return "\n".join(lines)
