"""The problem of a discovery task: the evolve block as one trainable code parameter.

Trace's optimizers see the block as a code parameter (``__code``) whose description carries the
fixed program around it; nothing ever executes it in the job process: the guide's sandboxed
evaluation is its only execution.  External trainers find the whole program in the problem's
``discovery_program`` entry (an :class:`~.program.EvolveProgram`) and evolve it in their own
representation, with the real ``EVOLVE-BLOCK`` markers.
"""

from __future__ import annotations

from typing import Any

from trace_bench.tasks.discovery.guide import DiscoveryGuide
from trace_bench.tasks.discovery.task import DiscoveryTask
from trace_bench.tasks.problem import DEFAULT_FAILURE_SCORE

_CONTEXT_CHARS = 1500


def build_problem(task: DiscoveryTask) -> dict[str, Any]:
    from opto import trace

    from trace_bench.sandbox import require

    mode = require()  # a job that cannot sandbox its candidates fails now, with the reason and the fix
    # An evaluator's child processes stay confined only where the kernel confines them (bubblewrap's
    # namespaces, the per-call process limit); the weak mode's audit hook does not follow an exec.
    processes = task.max_processes if mode == "bwrap" else 0
    failure = task.failure_score if task.failure_score is not None else \
        task.score_floor if task.score_floor is not None else DEFAULT_FAILURE_SCORE
    context = task.program.prefix[-_CONTEXT_CHARS:] if task.program.marked else ""
    description = (f"The code between the EVOLVE-BLOCK markers of the program below; the rest of the file is "
                   f"fixed.\n{context}" if context else "The whole program.")
    param = trace.node(task.program.block, name="__code", trainable=True, description=description)
    objective = (f"{task.system_message.strip()}\nImprove the code so that its combined_score gets higher. Keep the "
                 "names the rest of the program uses; return only code.")
    metadata: dict[str, Any] = {
        "benchmark": "discovery", "task": task.task_id, "optimizes": "evolve block" if task.program.marked else
        "whole program", "evaluator_form": task.form, "score_trust": task.trust, "failure_score": failure,
        "best_known": task.best_known.as_dict() if task.best_known is not None else None,
        "ignored_config_keys": list(task.ignored_keys), "suggested_iterations": task.iterations,
        "timeout_s": task.timeout_s, "max_processes": processes,
    }
    problem: dict[str, Any] = {
        "param": param,
        "guide": DiscoveryGuide(task, failure, processes),
        "train_dataset": {"inputs": [task.description], "infos": [task.task_id]},
        "optimizer_kwargs": {"objective": objective, "memory_size": 10},
        "metadata": metadata,
        "stub_candidates": list(task.stub_candidates),
        "failure_score": failure,
        "discovery_program": task.program,
        "discovery_system_message": task.system_message,
    }
    if task.score_floor is not None:
        problem["score_range"] = [task.score_floor, None]
    return problem
