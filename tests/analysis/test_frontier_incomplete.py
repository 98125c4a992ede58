"""No survivorship on the cost–quality frontier, in the power analysis and in the integrity audit.

An arm that lost seeds (failed, or planned and never written) shows the mean of its survivors, which
may be its lucky seeds.  Before, such an arm was placed on the frontier like any other, and could push
complete arms off it; the power table did not say how many seeds a pair dropped, and the integrity
section did not say an arm was incomplete.  Here, a hand-made run: ``Lucky`` looks cheaper and better
than ``Mid`` and ``Best`` on its two surviving seeds (its third failed), ``Partial`` lost a seed that
its run planned but never wrote; both are marked incomplete everywhere and neither is on the frontier.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

pytest.importorskip("scipy")

from tests.analysis.runs_kit import job, make_run  # noqa: E402
from tests.conftest import run_cli  # noqa: E402

ARMS = {"Cheap": (0.001, [0.2, 0.3, 0.4]),
        "Mid": (0.01, [0.5, 0.6, 0.7]),
        "Best": (0.05, [0.8, 0.8, 0.8]),
        "Lucky": (0.005, [0.9, 0.95, None]),       # seed 3 failed: cheaper than Mid, better than Best
        "Partial": (0.002, [0.85, 0.9])}           # seed 3 planned, never written
COMPLETE_FRONTIER = {"Cheap", "Mid", "Best"}


@pytest.fixture
def run(tmp_path: Path) -> Path:
    jobs = []
    for arm, (usd, scores) in ARMS.items():
        for seed, score in enumerate(scores, start=1):
            if score is None:
                jobs.append(job("s:t", arm, seed, None, status="failed", error="the evaluator crashed", cost_usd=usd))
                continue
            jobs.append(job("s:t", arm, seed, score + 0.05, score_test_best=score, score_test_last=score,
                            cost_usd=usd, total_tokens=int(usd * 1e6), llm_calls=3))
    path = make_run(tmp_path, "r", jobs)
    manifest_path = path / "meta" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    missing = {**next(e for e in manifest["jobs"] if e["trainer"] == "Partial"), "job_id": "never-written", "seed": 3,
               "index": len(manifest["jobs"])}
    manifest["jobs"].append(missing)
    manifest_path.write_text(json.dumps(manifest))
    return path


def test_store_rule_would_have_put_the_lucky_arm_on_the_frontier() -> None:
    """The same means without the completeness flags: the survivors push Mid and Best off."""
    from trace_bench.store.frontier import on_frontier

    names = list(ARMS)
    means = [(usd, sum(s for s in scores if s is not None) / len([s for s in scores if s is not None]))
             for usd, scores in ARMS.values()]
    naive = {n for n, on in zip(names, on_frontier(means), strict=True) if on}
    assert naive == {"Cheap", "Partial", "Lucky"}, naive
    fair = on_frontier(means, [n in COMPLETE_FRONTIER for n in names])
    assert {n for n, on in zip(names, fair, strict=True) if on} == COMPLETE_FRONTIER


def test_table_frontier_leaves_incomplete_arms_out_and_says_so(run: Path) -> None:
    proc = run_cli("table", str(run), "--frontier", "--format", "csv", "--metric", "test_best")
    assert proc.returncode == 0, proc.stderr
    rows = {r["trainer"]: r for r in csv.DictReader(proc.stdout.splitlines())}
    assert {t for t, r in rows.items() if r["on_frontier"] == "True"} == COMPLETE_FRONTIER
    assert (rows["Lucky"]["n"], rows["Lucky"]["planned"], rows["Lucky"]["complete"]) == ("2", "3", "False")
    assert (rows["Partial"]["n"], rows["Partial"]["planned"], rows["Partial"]["complete"]) == ("2", "3", "False")

    markdown = run_cli("table", str(run), "--frontier", "--metric", "test_best", check=True).stdout
    lucky = next(line for line in markdown.splitlines() if line.startswith("| s:t |") and "| Lucky |" in line)
    assert lucky.endswith("| no: 2/3 seeds |"), lucky
    line = next(ln for ln in markdown.splitlines() if ln.startswith("- s:t"))
    front, _, left_out = line.partition("; left out, incomplete: ")
    assert "Lucky" not in front and "Partial" not in front and "Mid (0.01 USD" in front, line
    assert left_out == "Partial (2/3 seeds), Lucky (2/3 seeds)", line
    assert "an incomplete arm (k/N seeds: some failed or are missing) is never on it" in markdown


def test_report_marks_incomplete_arms_in_the_frontier_power_and_integrity_sections(run: Path) -> None:
    from trace_bench.analysis import write_report

    html = write_report(run).read_text()
    frontier = html[html.index('<section id="frontier">'):html.index('<section id="win-matrix">')]
    assert 'data-series="5" data-frontier="3" data-incomplete="2"' in frontier
    assert frontier.count(">2/3 (incomplete)</td>") == 2 and frontier.count("<td>no: incomplete</td>") == 2
    assert frontier.count('<tr class="incomplete">') == 2 and frontier.count('<tr class="win">') == 3
    assert "Lucky (incomplete 2/3 seeds, never on the frontier)" in frontier, "the chart's legend"

    power = html[html.index('<section id="power">'):html.index('<section id="integrity">')]
    assert "<th>dropped</th>" in power
    integrity = html[html.index('<section id="integrity">'):html.index('<section id="cost">')]
    assert integrity.count("2/3 (incomplete)") == 2 and "<th>gap seeds</th>" in integrity


def test_power_says_how_many_seeds_each_pair_dropped(run: Path) -> None:
    proc = run_cli("power", str(run), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    rows = {(r["best"], r["arm"]): r for r in json.loads(proc.stdout)["rows"]}
    assert set(rows) == {("Best", arm) for arm in ("Cheap", "Mid", "Lucky", "Partial")}, "the complete best arm"
    assert (rows[("Best", "Lucky")]["n"], rows[("Best", "Lucky")]["dropped"]) == (2, 1), "Lucky's seed 3 failed"
    assert (rows[("Best", "Mid")]["n"], rows[("Best", "Mid")]["dropped"]) == (3, 0)
    markdown = run_cli("power", str(run), check=True).stdout
    assert markdown.splitlines()[0].startswith("| task | best | runner-up | metric | n | dropped |")
    assert "if they truly differed by 0.05" in markdown


def test_integrity_table_counts_an_arms_seeds(run: Path) -> None:
    from trace_bench.analysis import load_runs
    from trace_bench.analysis.integrity import integrity_table

    table = integrity_table(load_runs(run).jobs).set_index("trainer")
    assert (table.loc["Lucky", "scored"], table.loc["Lucky", "planned"], table.loc["Lucky", "complete"]) == (2, 3, False)
    assert (table.loc["Partial", "scored"], table.loc["Partial", "planned"]) == (2, 3)
    assert bool(table.loc["Mid", "complete"]) and table.loc["Mid", "gap_n"] == 3


def test_ui_browse_frontier_marks_incomplete_arms(run: Path) -> None:
    from trace_bench.ui.plots import frontier_html

    html = frontier_html(run)
    assert "left out, incomplete: Partial (2/3 seeds), Lucky (2/3 seeds)" in html
    assert 'data-frontier="3" data-incomplete="2"' in html
