"""report and compare: numbers checked by hand, planted differences found, bad inputs explained."""

from __future__ import annotations

import csv
import json
import random
import re
from pathlib import Path

import pytest
import yaml

pytest.importorskip("pandas")
pytest.importorskip("scipy")

from tests.conftest import only_run_dir, run_cli  # noqa: E402
from trace_bench.analysis import CompareError, RunDirError, compare_runs, load_runs, write_report  # noqa: E402
from trace_bench.analysis.stats import per_arm  # noqa: E402
from trace_bench.store.schemas import CSV_COLUMNS  # noqa: E402


def make_run(root: Path, name: str, rows: list[dict], config: dict | None = None) -> Path:
    run = root / name
    (run / "meta").mkdir(parents=True)
    (run / "meta" / "manifest.json").write_text(json.dumps({"run_id": name, "jobs": []}))
    (run / "meta" / "config.snapshot.yaml").write_text(yaml.safe_dump(config or {"mode": "stub", "seeds": [1]}))
    with open(run / "results.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        for i, row in enumerate(rows):
            writer.writerow({"run_id": name, "job_id": f"{name}-{i}", "suite": "internal", "params_label": "default",
                             "status": "ok", "score_initial": 0, "llm_calls": 1, "total_tokens": 10, "cost_usd": 0,
                             "time_seconds": 1, **row})
    return run


def test_per_task_numbers_match_hand_computation(tmp_path: Path) -> None:
    run = make_run(tmp_path, "r", [{"task": "t", "trainer": "A", "seed": s, "score_best": v}
                                   for s, v in zip((1, 2, 3), (1.0, 2.0, 3.0), strict=True)])
    arm = per_arm(load_runs([run]).jobs).iloc[0]
    assert arm["n"] == 3 and arm["mean"] == pytest.approx(2.0) and arm["std"] == pytest.approx(1.0)
    assert arm["ci_high"] - arm["mean"] == pytest.approx(2.4843, abs=1e-3)  # t(0.975, 2) * 1 / sqrt(3)
    html = write_report([run]).read_text()
    for section in ("leaderboard", "per-task", "curves", "win-matrix", "cost", "failures"):
        assert f'id="{section}"' in html
    assert "2 ± 2.48" in html
    assert "<script" not in html and "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")


def test_report_on_a_real_three_seed_run(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("tasks: [internal:numeric_param, internal:non_trainable]\nseeds: [1, 2, 3]\nmax_workers: 2\n"
                      "trainers:\n  - id: PrioritySearch\n    ps_steps: 2\n  - NoOpTrainer\n")
    run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "runs"), "--quiet")
    run = only_run_dir(tmp_path / "runs")
    proc = run_cli("report", str(run), check=True)
    assert "report written" in proc.stdout
    html = (run / "report.html").read_text()
    rows = list(csv.DictReader(open(run / "results.csv")))
    ps = [float(r["score_best"]) for r in rows if r["trainer"] == "PrioritySearch" and r["status"] == "ok"]
    assert len(ps) == 3
    assert f"{sum(ps) / 3:.4g}" in html
    assert "no_trainable_parameters" in html  # failures section lists reasons
    assert html.count("<svg") >= 4


def test_html_is_escaped(tmp_path: Path) -> None:
    run = make_run(tmp_path, "r", [{"task": "<script>alert(1)</script>", "trainer": "A&B", "seed": 1, "score_best": 1,
                                    "status": "failed", "error": "<img src=x onerror=alert(2)>"}])
    html = write_report([run]).read_text()
    assert "<script>alert(1)" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def _arm_rows(trainer: str, shift: float, seeds: int, rng: random.Random) -> list[dict]:
    return [{"task": task, "trainer": trainer, "seed": s, "score_best": base + shift + rng.gauss(0, 0.01)}
            for task, base in (("t1", 1.0), ("t2", 5.0)) for s in range(1, seeds + 1)]


def test_compare_finds_planted_difference_and_not_a_null_one(tmp_path: Path) -> None:
    rng = random.Random(0)
    config = {"mode": "real", "llm": {"model": "m1"}, "seeds": list(range(1, 9))}
    a = make_run(tmp_path, "a", _arm_rows("PS", 1.0, 8, rng), config)
    b = make_run(tmp_path, "b", _arm_rows("PS", 0.0, 8, rng), {**config, "llm": {"model": "m2"}})
    planted = compare_runs(a, b)
    assert planted.differing_axes == ["llm"]
    assert all(row["significant"] and row["mean_a_minus_b"] == pytest.approx(1.0, abs=0.05) for row in planted.rows)
    c = make_run(tmp_path, "c", _arm_rows("PS", 0.0, 8, rng), {**config, "llm": {"model": "m3"}})
    null = compare_runs(b, c)
    assert not any(row["significant"] for row in null.rows)
    proc = run_cli("compare", str(a), str(b), check=True)
    assert re.search(r"t1\s+PS .* yes", proc.stdout)


def test_compare_refuses_non_overlapping_or_multi_axis_runs(tmp_path: Path) -> None:
    rng = random.Random(1)
    a = make_run(tmp_path, "a", _arm_rows("PS", 0, 3, rng), {"mode": "stub", "seeds": [1, 2, 3]})
    b = make_run(tmp_path, "b", [{**r, "task": "other"} for r in _arm_rows("PS", 0, 3, rng)],
                 {"mode": "stub", "seeds": [1, 2, 3], "tasks": ["other"]})
    with pytest.raises(CompareError, match="do not overlap"):
        compare_runs(a, b)
    c = make_run(tmp_path, "c", _arm_rows("PS", 0, 3, rng), {"mode": "real", "seeds": [4, 5], "tasks": ["x"]})
    with pytest.raises(CompareError, match="more than one axis"):
        compare_runs(a, c)
    proc = run_cli("compare", str(a), str(b))
    assert proc.returncode == 2 and "do not overlap" in proc.stderr


def test_damaged_run_dirs_are_explained(tmp_path: Path) -> None:
    run = make_run(tmp_path, "r", [{"task": "t", "trainer": "A", "seed": 1, "score_best": 1}])
    (run / "meta" / "manifest.json").write_text('{"jobs": [')
    with pytest.raises(RunDirError, match="manifest.json: not valid JSON"):
        load_runs([run])
    (run / "meta" / "manifest.json").write_text("{}")
    (run / "results.csv").unlink()
    with pytest.raises(RunDirError, match="results.csv: missing"):
        load_runs([run])
    proc = run_cli("report", str(run))
    assert proc.returncode == 2 and "results.csv: missing" in proc.stderr and "Traceback" not in proc.stderr
