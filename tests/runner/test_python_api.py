"""The Python API: BenchRunner (original entry point) and execute_run."""

from __future__ import annotations

from pathlib import Path

import trace_bench


def test_bench_runner_from_mapping(tmp_path: Path) -> None:
    runner = trace_bench.BenchRunner({"tasks": ["internal:numeric_param"], "trainers": ["NoOpTrainer"],
                                      "seeds": [1, 2]}, runs_dir=str(tmp_path))
    outcome = runner.run()
    assert outcome.exit_code == 0 and len(outcome.records) == 2
    assert (outcome.run_dir / "results.csv").exists()
    assert {r.seed for r in outcome.records} == {1, 2}


def test_lazy_exports() -> None:
    assert trace_bench.RunConfig.__name__ == "RunConfig"
    assert callable(trace_bench.load_config)
