"""Run every trainer on every internal: and trace_examples: task in stub mode and list what fails.

    .venv/bin/python scripts/stub_sweep.py                    # all trainers x all such tasks
    .venv/bin/python scripts/stub_sweep.py --trainers UCBSearchAlgorithm GEPA-Base --workers 2

Each trainer runs with short knobs (so the sweep takes minutes, not hours), and every trainer that
batches examples runs a second arm with ``batch_size: 2``: rollouts that share an output node only
meet in a batch.  The run goes to a temporary directory (``--runs-dir`` keeps it); the script prints
one line per job that did not end ``ok`` or ``budget_exhausted``, with the first line of its error
and the last line of its traceback, and exits 1 when one of them is not a failure by design
(:data:`EXPECTED`, listed apart).  No network: stub mode, and the
tasks swept are the ones shipped inside the package.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.trainers._cases import ALL  # noqa: E402

SUITES = ("internal", "trace_examples")
EXTERNAL: dict[str, dict[str, Any]] = {
    "DSPyTrainer": {"dspy_optimizer": "COPRO", "breadth": 2, "depth": 1},
    "TextGradTrainer": {"num_steps": 2},
    "GEPATrainer": {"max_metric_calls": 8},
    "OpenEvolveTrainer": {"iterations": 2},
    "SkyDiscover": {"iterations": 2, "search": "topk"},
}
SMALL_TASK_KWARGS: dict[str, dict[str, Any]] = {
    "internal:multiobjective_bbeh": {"n_train": 4, "n_val": 2},
    "internal:multiobjective_gsm8k": {"n_train": 4},
}
#: failures by design, as (task, trainer or "*", start of the error): not counted as findings
EXPECTED = (
    ("internal:non_trainable", "*", "no_trainable_parameters"),  # the task exists to test this refusal
    ("internal:code_param", "DSPyTrainer", "training_error: ValueError: DSPyTrainer optimizes instructions"),
)


def _task_ids() -> list[str]:
    from trace_bench.registry.tasks import TaskCatalog

    catalog = TaskCatalog.create()
    return sorted(t.id for t in catalog.list() if t.id.split(":")[0] in SUITES)


def _trainer_entries(names: list[str] | None) -> list[dict[str, Any]]:
    from trace_bench.config import parse_config
    from trace_bench.matrix.expand import expand_matrix
    from trace_bench.registry.tasks import TaskCatalog
    from trace_bench.registry.trainers import list_trainers

    chosen = names or sorted(t.id for t in list_trainers())
    entries = []
    for name in chosen:
        knobs = {**ALL.get(name, {}), **EXTERNAL.get(name, {})}
        variants = [knobs]
        try:  # a second arm that batches two examples, where the trainer has a batch knob
            probe = {"tasks": ["internal:numeric_param"],
                     "trainers": [{"id": name, "params_variants": [knobs, {**knobs, "batch_size": 2}]}]}
            expand_matrix(parse_config(probe), TaskCatalog.create())
            variants.append({**knobs, "batch_size": 2})
        except Exception:  # noqa: BLE001 - no batch knob, or batches of 2 are its default
            pass
        entries.append({"id": name, "params_variants": variants})
    return entries


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trainers", nargs="*", help="trainer ids (default: every registered trainer)")
    parser.add_argument("--tasks", nargs="*", help="task ids (default: every internal: and trace_examples: task)")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--job-timeout", type=float, default=300.0)
    parser.add_argument("--runs-dir", type=Path, help="keep the run here (default: a temporary directory)")
    args = parser.parse_args(argv)
    tasks = args.tasks or _task_ids()
    config = {"mode": "stub", "seeds": [1], "max_workers": args.workers, "job_timeout": args.job_timeout,
              "tasks": [{"id": t, "eval_kwargs": SMALL_TASK_KWARGS.get(t, {})} for t in tasks],
              "trainers": _trainer_entries(args.trainers)}
    with tempfile.TemporaryDirectory() as scratch:
        runs_dir = args.runs_dir or Path(scratch) / "runs"
        config_path = Path(scratch) / "sweep.yaml"
        config_path.write_text(yaml.safe_dump(config), encoding="utf-8")
        subprocess.run([sys.executable, "-m", "trace_bench", "run", "--config", str(config_path),
                        "--runs-dir", str(runs_dir), "--quiet"], check=False)
        runs = sorted(runs_dir.iterdir()) if runs_dir.is_dir() else []
        return _report(runs[-1]) if runs else 2


def _report(run_dir: Path) -> int:
    bad, expected = 0, 0
    results = sorted((run_dir / "jobs").glob("*/results.json"))
    for path in results:
        result = json.loads(path.read_text(encoding="utf-8"))
        if result["status"] in ("ok", "budget_exhausted"):
            continue
        error = (result.get("error") or "").splitlines()[:1]
        if any(result["task"] == task and trainer in ("*", result["trainer"]) and error and error[0].startswith(start)
               for task, trainer, start in EXPECTED):
            expected += 1
            continue
        bad += 1
        trace = (result.get("traceback") or "").strip().splitlines()
        print(f"{result['status']:>12}  {result['task']} x {result['trainer']} {result.get('params_label', '')}: "
              f"{error[0] if error else ''} | {trace[-1] if trace else ''}")
    print(f"{len(results)} jobs: {len(results) - bad - expected} ok, {expected} failed by design "
          f"({', '.join(f'{t} x {tr}' for t, tr, _ in EXPECTED)}), {bad} other failures ({run_dir})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
