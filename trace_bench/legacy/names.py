"""The one table of the original Trace-Bench's names that moved, and where each lives now.

The original exposed these on modules that are packages here (``trace_bench.runner``,
``trace_bench.registry``, ``trace_bench.cli``, ``trace_bench.matrix``).  Those packages'
``__init__`` name nothing of this layer: each sets ``__getattr__ =
relocated_getattr(__name__)`` (:mod:`trace_bench._util.relocated`), and this module, imported by
``import trace_bench``, registers :data:`RELOCATED` there.  An old name resolves on first use, with
one DeprecationWarning per name.
"""

from __future__ import annotations

from trace_bench._util.relocated import register

_REGISTRY = "trace_bench.legacy.registry"

#: package -> {old name: "module" or "module:attribute" where it lives now}
RELOCATED: dict[str, dict[str, str]] = {
    "trace_bench.runner": {
        "BenchRunner": "trace_bench.legacy.runner",
        "RunSummary": "trace_bench.legacy.runner",
        "execute_run": "trace_bench.runner.run",
        "RunOptions": "trace_bench.runner.options",
        "RunOutcome": "trace_bench.runner.options",
        # helpers of the original's runner about its artifacts
        "_state_rel_paths": "trace_bench.legacy.results:state_paths",
        "_select_best_state": "trace_bench.legacy.results:select_best_state",
        "_token_scope_note": "trace_bench.legacy.results:token_scope_note",
    },
    "trace_bench.registry": {
        **{name: _REGISTRY for name in (
            "TrainerSpec", "discover_hf_tasks", "discover_internal", "discover_llm4ad", "discover_tasks",
            "discover_terminal_bench", "discover_trace_examples", "discover_trainers", "discover_veribench",
            "ensure_llm4ad_importable", "ensure_opto_importable", "expand_special_tasks", "load_task_bundle",
            "load_task_module")},
        "normalize_task_id": "trace_bench.registry.tasks",
        "TaskSpec": "trace_bench.registry.specs",
    },
    "trace_bench.cli": {name: "trace_bench.legacy.cli" for name in (
        "cmd_list_tasks", "cmd_list_trainers", "cmd_validate", "cmd_run", "cmd_ui")},
    # trace-bench's own names that moved when the in-job code got its package (docs/adding-trainer.md
    # imported ``run_job`` from the module ``trace_bench.runner.job``)
    "trace_bench.runner.job": {name: "trace_bench.runner.job.body" for name in (
        "run_job", "job_body", "prepare_process", "seed_everything")},
    "trace_bench.matrix": {
        "expand_matrix": "trace_bench.legacy.matrix",
        "compute_job_id": "trace_bench.legacy.matrix",
        "LegacyJob": "trace_bench.legacy.matrix",
        "JobSpec": "trace_bench.matrix.expand",
    },
}


register(RELOCATED)
