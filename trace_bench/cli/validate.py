"""``trace-bench validate``: print what the runner's validation found (the CLI only parses and prints)."""

from __future__ import annotations

from argparse import Namespace

from trace_bench.config.models import RunConfig
from trace_bench.registry.tasks import parse_benches


def validate(config: RunConfig, args: Namespace) -> int:
    from trace_bench.runner.validation import validate_config

    if getattr(args, "allow_weak_sandbox", False):
        config = config.model_copy(update={"sandbox": "weak"})
    from trace_bench.registry.tasks import root_suite

    extra = [root_suite(args.root)] if args.root else []
    result = validate_config(config, root=args.root, benches=parse_benches(getattr(args, "bench", None), extra),
                             strict=args.strict, runs_dir=args.runs_dir,
                             overrides=getattr(args, "overrides", None) or (), source=args.config)
    for trainer in result.trainers:
        print(f"[OK] trainer {trainer}")
    for task, skip_reason in result.tasks:
        print(f"[SKIP] task {task}: {skip_reason}" if skip_reason else f"[OK] task {task}")
    for check in result.sandbox_checks:
        print(f"[{check.verdict}] sandbox for {check.task}: {check.detail}")
    if not args.strict:
        print(f"[OK] matrix: {len(result.jobs)} jobs")
        return 1 if result.failed else 0
    for check in result.task_checks:
        print(f"[{check.verdict}] {check.task}: {check.detail}")
    print(f"[OK] matrix: {len(result.jobs)} jobs expanded deterministically")
    for job in result.jobs:
        print(f"  job {job.job_id}: {job.task} x {job.trainer} ({job.params_label}) seed={job.seed}")
    print(f"[OK] manifest written: {result.manifest_path}")
    return 1 if result.failed else 0
