"""``trace-bench validate``: check a config; with ``--strict`` also build every task."""

from __future__ import annotations

import os
from argparse import Namespace
from pathlib import Path
from typing import Any

from trace_bench.config.models import RunConfig
from trace_bench.matrix.expand import JobSpec, expand_matrix
from trace_bench.registry.tasks import TaskCatalog, parse_benches


def _strict_task_check(jobs: list[JobSpec]) -> list[tuple[str, str, str]]:
    """(task, verdict, detail) for each distinct task: builds the problem and counts trainables."""
    import contextlib
    import io

    from trace_bench.runner.job import JobFailure, prepare_process
    from trace_bench.runner.problem_loader import load_problem
    from trace_bench.trainers.params import trainable_parameters

    with contextlib.redirect_stdout(io.StringIO()):  # opto announces its LLM backend on import
        prepare_process()
        import opto.optimizers  # noqa: F401
    results = []
    seen: set[str] = set()
    for job in jobs:
        key = f"{job.task}|{sorted(job.eval_kwargs.items())!r}"
        if key in seen or job.skip_reason:
            continue
        seen.add(key)
        previous_mode = os.environ.get("TRACE_BENCH_MODE")
        os.environ["TRACE_BENCH_MODE"] = job.mode  # as in the job body: a task may check only in real mode
        try:
            problem = load_problem(job)
        except JobFailure as exc:
            results.append((job.task, "SKIP" if exc.status == "skipped" else "FAIL", str(exc)))
            continue
        finally:
            if previous_mode is None:
                os.environ.pop("TRACE_BENCH_MODE", None)
            else:
                os.environ["TRACE_BENCH_MODE"] = previous_mode
        count = len(trainable_parameters(problem.param))
        if count == 0:
            verdict = "EXPECTED" if job.task == "internal:non_trainable" else "FAIL"
            results.append((job.task, verdict, "no_trainable_parameters"))
        else:
            results.append((job.task, "OK", f"{count} trainable parameter(s), selection on {problem.selection_split}"))
    return results


def validate(config: RunConfig, args: Namespace) -> int:
    benches = parse_benches(getattr(args, "bench", None))
    if benches:
        config = config.model_copy(update={"tasks": [t for t in config.tasks
                                                     if (t.id.split(":", 1)[0] if ":" in t.id else "llm4ad") in benches]})
    catalog = TaskCatalog.create(args.root)
    jobs = expand_matrix(config, catalog)
    errors = 0
    for trainer in sorted({j.trainer for j in jobs}):
        print(f"[OK] trainer {trainer}")
    skipped = {j.task: j.skip_reason for j in jobs if j.skip_reason}
    for task in dict.fromkeys(j.task for j in jobs):
        print(f"[SKIP] task {task}: {skipped[task]}" if task in skipped else f"[OK] task {task}")
    if args.strict:
        for task, verdict, detail in _strict_task_check(jobs):
            print(f"[{verdict}] {task}: {detail}")
            errors += verdict == "FAIL"
        print(f"[OK] matrix: {len(jobs)} jobs expanded deterministically")
        for job in jobs:
            print(f"  job {job.job_id}: {job.task} x {job.trainer} ({job.params_label}) seed={job.seed}")
        manifest = _write_manifest(config, jobs, args.runs_dir or config.runs_dir)
        print(f"[OK] manifest written: {manifest}")
    else:
        print(f"[OK] matrix: {len(jobs)} jobs")
    return 1 if errors else 0


def _write_manifest(config: RunConfig, jobs: list[JobSpec], runs_dir: str) -> Path:
    from trace_bench.matrix.identity import config_hash, new_run_id
    from trace_bench.runner.run import manifest_entry, snapshot_text
    from trace_bench.store.atomic import write_json, write_text
    from trace_bench.store.events import utc_now
    from trace_bench.store.run_dir import RunPaths

    digest = config_hash(config)
    paths = RunPaths(Path(runs_dir) / (config.run_id or new_run_id(digest)))
    data: dict[str, Any] = {"schema_version": 1, "run_id": paths.root.name, "config_hash": digest,
                            "mode": config.mode, "tags": config.tags, "total_jobs": len(jobs),
                            "created_at": utc_now(), "validated_only": True,
                            "jobs": [manifest_entry(j, "validated") for j in jobs]}
    write_text(paths.snapshot, snapshot_text(config))
    write_json(paths.manifest, data)
    return paths.manifest
