"""report.html: every section, numbers checked by hand, escaping, and the real pipeline end to end."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

pytest.importorskip("scipy")

from tests.analysis.runs_kit import job, make_run  # noqa: E402
from tests.conftest import only_run_dir, run_cli  # noqa: E402
from trace_bench.analysis import report_main, write_report  # noqa: E402

SECTION_IDS = ("leaderboard", "verdict", "per-task", "curves", "frontier", "reach", "win-matrix", "power", "cost",
               "failures")


def _no_external_resources(html: str) -> None:
    assert "<script" not in html.lower() and "<link" not in html.lower()
    assert not re.search(r"(src|href)=\"(https?:)?//", html)


def test_every_section_and_hand_computed_numbers(tmp_path: Path) -> None:
    run = make_run(tmp_path, "r", [job("s:t", "A", 1, 1.0), job("s:t", "A", 2, 2.0), job("s:t", "A", 3, 3.0),
                                   job("s:t", "B", 1, 0.5), job("s:t", "B", 2, 0.5), job("s:t", "B", 3, 0.5),
                                   job("s:t", "B", 4, None, status="timeout", error="job exceeded 60 s")])
    out = write_report(run)
    assert out == run / "report.html"
    html = out.read_text()
    for section in SECTION_IDS:
        assert f'<section id="{section}">' in html
    assert "[-0.4841, 4.484]" in html  # mean 2, std 1, t(0.975, 2)/sqrt(3)
    assert "no variance between seeds" in html  # B scored 0.5 on every seed
    assert "job exceeded 60 s" in html and "timeout" in html
    from scipy import stats

    power = html[html.index('<section id="power">'):html.index('<section id="cost">')]
    critical = stats.t.ppf(0.975, 2)  # A - B = 0.5, 1.5, 2.5: mean 1.5, sd 1, three seeds; planned at 0.05
    expected = stats.nct.sf(critical, 2, 0.05 * 3 ** 0.5) + stats.nct.cdf(-critical, 2, 0.05 * 3 ** 0.5)
    assert (f'<td class="num">1.5</td><td class="num">1</td><td class="num">0.05</td>'
            f'<td class="num">{expected:.4g}</td>') in power
    assert html.count("<svg") == 2, "one task: one chart of curves (four panels) and one frontier chart"
    assert all(f"best selection-split score vs {axis}" in html for axis in ("LLM calls", "tokens", "USD"))
    assert "best score so far, selection split (optimistic)" in html, "the curves' axis names its score"
    _no_external_resources(html)


def test_untrusted_text_is_escaped(tmp_path: Path) -> None:
    evil = "<script>alert(1)</script>"
    run = make_run(tmp_path, "r", [job(evil, "A&B\"'", 1, 1.0, params_label="<b>x</b>"),
                                   job(evil, "C", 1, None, status="failed", error="<img src=x onerror=alert(2)>")])
    html = write_report(run, tmp_path / "out.html").read_text()
    assert evil not in html and "<img" not in html and "<b>x" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "A&amp;B&quot;&#x27;" in html
    _no_external_resources(html)


def test_several_runs_keep_conditions_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = make_run(tmp_path, "a", [job("s:t", "A", s, 1.0 + s) for s in (1, 2, 3)], model="m1")
    b = make_run(tmp_path, "b", [job("s:t", "A", s, 0.5 * s) for s in (1, 2, 3)], model="m2")
    monkeypatch.chdir(tmp_path)
    assert report_main([str(a), str(b)], None) == 0
    html = (tmp_path / "report.html").read_text()
    assert "A @ a" in html and "A @ b" in html and "3–0–0" not in html  # 3 seeds cannot beat alpha=0.05


def test_report_main_explains_user_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = make_run(tmp_path, "r", [job("s:t", "A", 1, 1.0)])
    (run / "results.csv").unlink()
    assert report_main([str(run)], None) == 2
    err = capsys.readouterr().err
    assert "results.csv: missing" in err and "Traceback" not in err
    assert report_main([], None) == 2


def test_report_on_a_real_run(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("tasks: [internal:numeric_param, internal:non_trainable]\nseeds: [1, 2, 3]\nmax_workers: 2\n"
                      "trainers:\n  - id: PrioritySearch\n    ps_steps: 2\n  - NoOpTrainer\n")
    run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "runs"), "--quiet")
    run = only_run_dir(tmp_path / "runs")
    proc = run_cli("report", str(run), check=True)
    assert "report written" in proc.stdout
    html = (run / "report.html").read_text()
    rows = list(csv.DictReader(open(run / "results.csv")))
    best = [float(r["score_best"]) for r in rows if r["trainer"] == "PrioritySearch" and r["status"] == "ok"]
    assert len(best) == 3
    per_task = html[html.index('id="per-task"'):html.index('id="curves"')]
    row = re.search(r"<h3>internal:numeric_param</h3>.*?<td>PrioritySearch</td><td>ps_steps=2</td>"
                    r'<td class="num">3</td><td class="num">0</td><td class="num">0</td><td>selection \(optimistic\)</td>'
                    r'<td class="num">([^<]*)</td>',
                    per_task)
    assert row and row.group(1) == f"{sum(best) / 3:.4g}"
    assert "no_trainable_parameters" in html  # the failures section gives the reason
    assert html.count("<svg") >= 1 and "best selection-split score vs tokens" in html  # one chart per task
    # a stub run costs 0 USD: its USD panel charts steps instead and says why (no empty panel, no
    # title too long for it), and the report says it is a stub run
    assert "best score vs step: stub mode, USD is 0" in html and "vs USD" not in html
    assert "no data on this axis" not in html
    assert "Stub mode: a deterministic stub answered every LLM call" in html
    for section in SECTION_IDS:
        assert f'id="{section}"' in html
