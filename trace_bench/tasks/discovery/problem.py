"""The problem of a discovery task: the evolve block (or a prompt folder's prompt) as one trainable
parameter.

Trace's optimizers see a program's block as a code parameter (``__code``) whose description carries
the fixed program around it, and a prompt folder's prompt as a text parameter (``prompt``); nothing
ever executes either in the job process: the guide's sandboxed evaluation is their only execution.
External trainers find the whole program in the problem's ``discovery_program`` entry (an
:class:`~.program.EvolveProgram`) and its language in ``discovery_language``, and evolve it in their
own representation, with the real ``EVOLVE-BLOCK`` markers.  ``strict_checks`` is what
``validate --strict`` asks of a task folder beyond building it (:func:`strict_checks`).
"""

from __future__ import annotations

from typing import Any

from trace_bench.tasks.discovery.guide import DiscoveryGuide
from trace_bench.tasks.discovery.task import DiscoveryTask
from trace_bench.tasks.problem import DEFAULT_FAILURE_SCORE

_CONTEXT_CHARS = 1500


def strict_checks(task: DiscoveryTask, guide: DiscoveryGuide) -> list[tuple[str, str]]:
    """``(verdict, detail)`` lines for ``validate --strict`` (beside its line of the keys the config
    does not use, with why): the layout and config read, the requirements this environment misses, and whether the evaluator
    imports in the sandbox's interpreter (a module it lacks is named with its install command)."""
    folder = task.folder
    if folder is None or folder.layout is None:
        return []
    from trace_bench.tasks.discovery.requirements import network_reads, requirement_problems

    layout, settings = folder.layout, folder.settings
    checks: list[tuple[str, str]] = []
    used = f"{layout.peer} layout, evaluator {layout.evaluator} ({layout.protocol}"
    used += f", cascade of {task.stages} stages, thresholds {list(task.thresholds)})" if task.stages > 1 else ")"
    used += f"; config {settings.config_file}" if settings.config_file else "; no config file"
    used += f"; timeout {task.timeout_s:g} s per evaluation"
    if settings.system_message_source:
        used += f"; system message {settings.system_message_source} ({len(settings.system_message)} chars)"
    checks.append(("OK", used))
    checks += [("WARN", note) for note in task.notes]
    checks += requirement_problems(folder.path, layout.workdir)
    downloads = network_reads(folder.path, layout.evaluator, layout.workdir)
    if downloads:
        checks.append(("WARN", f"the evaluator fetches data over the network ({', '.join(downloads)}): the sandbox "
                               "has none, so those evaluations fail unless the data is in the folder"))
    if task.llm:
        checks.append(("OK", "the evaluator calls an LLM: through the run's gateway (eval_llm_calls)"))
    fault = guide.load_fault()
    checks.append(("FAIL", fault) if fault else ("OK", "the evaluator imports in the sandbox"))
    return checks


def build_problem(task: DiscoveryTask) -> dict[str, Any]:
    from opto import trace

    from trace_bench.sandbox import require

    mode = require()  # a job that cannot sandbox its candidates fails now, with the reason and the fix
    if task.llm and mode != "bwrap":
        raise RuntimeError(f"{task.task_id}: its evaluator calls an LLM, which it reaches through the sandbox's "
                           "loopback; the weak sandbox has none (install bubblewrap, see docs/task-suites.md)")
    # An evaluator's child processes stay confined only where the kernel confines them (bubblewrap's
    # namespaces, the per-call process limit); the weak mode's audit hook does not follow an exec.
    processes = task.max_processes if mode == "bwrap" else 0
    failure = task.failure_score if task.failure_score is not None else \
        task.score_floor if task.score_floor is not None else DEFAULT_FAILURE_SCORE
    prompt = task.folder is not None and task.folder.layout is not None and task.folder.layout.prompt
    context = task.program.prefix[-_CONTEXT_CHARS:] if task.program.marked else ""
    if prompt:
        param = trace.node(task.program.block, name="prompt", trainable=True,
                           description="The prompt the task's evaluator gives its LLM.")
        wanted = "Improve the prompt so that its combined_score gets higher; return only the prompt."
    else:
        description = (f"The code between the EVOLVE-BLOCK markers of the program below; the rest of the file is "
                       f"fixed.\n{context}" if context else "The whole program.")
        param = trace.node(task.program.block, name="__code", trainable=True, description=description)
        wanted = "Improve the code so that its combined_score gets higher. Keep the names the rest of the program " \
                 "uses; return only code."
    metadata: dict[str, Any] = {
        "benchmark": "discovery", "task": task.task_id, "optimizes": "prompt" if prompt else "evolve block"
        if task.program.marked else "whole program", "evaluator_form": task.form, "score_trust": task.trust,
        "failure_score": failure, "best_known": task.best_known.as_dict() if task.best_known is not None else None,
        "ignored_config_keys": list(task.ignored_keys), "suggested_iterations": task.iterations,
        "ignored_config_text": task.folder.settings.ignored_text() if task.folder is not None else "",
        "timeout_s": task.timeout_s, "max_processes": processes, "evaluator_protocol": task.protocol,
        "config_file": task.folder.settings.config_file if task.folder is not None else "",
        "evaluator_calls_llm": task.llm,
        "continuous_form": "declared" if task.continuous is not None else f"none: {task.no_continuous_form}",
    }
    guide = DiscoveryGuide(task, failure, processes)
    problem: dict[str, Any] = {
        "param": param,
        "guide": guide,
        "train_dataset": {"inputs": [task.description], "infos": [task.task_id]},
        "optimizer_kwargs": {"objective": f"{task.system_message.strip()}\n{wanted}", "memory_size": 10},
        "metadata": metadata,
        "stub_candidates": list(task.stub_candidates),
        "failure_score": failure,
        "discovery_program": task.program,
        "discovery_system_message": task.system_message,
        "discovery_language": task.language,
        "strict_checks": lambda: strict_checks(task, guide),
        "continuous_form": task.continuous,  # for classical solvers (SLSQPMultistart); None without one
    }
    if task.score_floor is not None:
        problem["score_range"] = [task.score_floor, None]
    return problem
