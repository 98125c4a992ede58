"""External trainers' stub jobs with and without the provider libraries in the job template.

    .venv/bin/python perf/external_template.py [--rounds N]

Runs configs/discovery_arena.yaml (15 stub jobs: PrioritySearch, OpenEvolve, GEPA, SkyDiscover's
AdaEvolve and EvoX) twice per round, alternating: once with the lean template forced (what every
stub run had before: each external trainer's job imported openai/litellm itself), once as the CLI
now starts it.  Prints each trainer's mean job wall time (the ``time_seconds`` the tables and the
cost-quality frontier compare) and the run's wall time.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _util import REPO, python, report

CONFIG = REPO / "configs" / "discovery_arena.yaml"
# The CLI with the lean template forced, as before the change (a __main__ guard: forkserver re-imports it).
LEAN = ("import sys\nif __name__ == '__main__':\n    import trace_bench.runner.warm as warm\n"
        "    warm.TEMPLATES[warm.FULL] = warm.PRELOAD\n    from trace_bench.cli.main import main\n"
        "    sys.exit(main(sys.argv[1:]))\n")


def run(lean: bool, runs: Path) -> tuple[float, dict[str, float]]:
    if lean:
        runs.parent.mkdir(parents=True, exist_ok=True)
        script = runs.parent / "lean_cli.py"
        script.write_text(LEAN)
        head = [python(), str(script)]
    else:
        head = [python(), "-m", "trace_bench"]
    start = time.perf_counter()
    subprocess.run([*head, "run", "--config", str(CONFIG), "--runs-dir", str(runs), "--quiet"], cwd=REPO,
                   check=True, capture_output=True)
    wall = time.perf_counter() - start
    [run_dir] = list(runs.iterdir())
    per_trainer: dict[str, list[float]] = {}
    with open(run_dir / "results.csv", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            per_trainer.setdefault(row["trainer"], []).append(float(row["time_seconds"]))
    return wall, {name: statistics.mean(times) for name, times in per_trainer.items()}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    walls: dict[bool, list[float]] = {True: [], False: []}
    jobs: dict[bool, dict[str, list[float]]] = {True: {}, False: {}}
    with tempfile.TemporaryDirectory(prefix="tb-perf-ext-") as tmp:
        for index in range(args.rounds):
            for lean in (True, False):
                wall, means = run(lean, Path(tmp) / f"{index}-{lean}" / "runs")
                walls[lean].append(wall)
                for name, value in means.items():
                    jobs[lean].setdefault(name, []).append(value)
    for name in jobs[False]:
        before, after = statistics.median(jobs[True][name]), statistics.median(jobs[False][name])
        report(f"{name}: job wall, lean template", before, "s")
        report(f"{name}: job wall, provider template", after, "s")
    report("run wall, lean template (median)", statistics.median(walls[True]), "s")
    report("run wall, provider template (median)", statistics.median(walls[False]), "s")
    report("ratio provider / lean (run wall)", statistics.median(walls[False]) / statistics.median(walls[True]), "x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
