"""Trainer overhead per step in stub mode, and the wall time of a 20-step PrioritySearch job.

Overhead is what a trainer costs beyond its LLM calls: (job body time - time inside LLM calls) /
steps, from one in-process stub job per trainer on ``internal:multi_param`` (after a warm-up job,
so imports are not counted).  It includes the trainer's own evaluations, backward passes and
prompt construction; the LLM latency itself, which dominates real runs, is excluded.  The
20-step PrioritySearch figure is the same job body with the trainer's default knobs.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from _util import REPO, report

sys.path.insert(0, str(REPO))

from trace_bench.testing.trainer_contract import JobOutcome, run_trainer  # noqa: E402

STEPS = 10
TASK = "internal:multi_param"
TRAINERS: dict[str, dict[str, object]] = {
    "PrioritySearch": {"ps_steps": STEPS},
    "StreamingPrioritySearch": {"ps_steps": STEPS},
    "GEPA-Base": {"gepa_iters": STEPS},
    "GEPA-UCB": {"gepa_iters": STEPS},
    "GEPA-Beam": {"gepa_iters": STEPS},
    "BeamsearchAlgorithm": {"max_depth": STEPS},
    "BeamsearchHistoryAlgorithm": {"max_depth": STEPS},
    "UCBSearchAlgorithm": {"num_search_iterations": STEPS},
    "MinibatchAlgorithm": {"num_steps": STEPS},
    "BasicSearchAlgorithm": {"num_steps": STEPS},
    "NoOpTrainer": {"num_steps": STEPS},
}


def llm_seconds(outcome: JobOutcome) -> float:
    return sum(float(e.get("latency_s", 0.0)) for e in outcome.events() if e.get("type") == "llm_call")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        runs = Path(tmp)
        run_trainer("PrioritySearch", runs, task=TASK, params={"ps_steps": 1}, run_name="warmup")
        print(f"trainer overhead per step, stub mode, {TASK}, {STEPS} steps (excluding LLM call time)")
        for trainer_id, params in TRAINERS.items():
            outcome = run_trainer(trainer_id, runs, task=TASK, params=params, run_name=trainer_id)
            result = outcome.result
            steps = max(1, result.n_steps)
            overhead = (result.time_seconds - llm_seconds(outcome)) / steps
            label = f"  {trainer_id} ({result.llm_calls} calls, {result.n_evals} evals)"
            report(label, overhead * 1000, "ms/step")
        walls = []
        for index in range(3):
            start = time.perf_counter()
            outcome = run_trainer("PrioritySearch", runs, task="internal:numeric_param",
                                  params={"ps_steps": 20}, run_name=f"ps20-{index}")
            walls.append(time.perf_counter() - start)
        assert outcome.result.n_steps == 20, outcome.result.error
        report("20-step PrioritySearch job, stub (median of 3)", statistics.median(walls), "s", "< 3 s")
        report(f"  of which LLM calls ({outcome.result.llm_calls})", llm_seconds(outcome), "s")


if __name__ == "__main__":
    main()
