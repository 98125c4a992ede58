"""Command handlers; heavy modules are imported inside the command that needs them."""

from __future__ import annotations

import sys
from argparse import Namespace
from pathlib import Path
from typing import Any

from trace_bench.config.errors import ConfigError

USER_ERROR = 2


def _fail(message: str) -> int:
    print(f"trace-bench: error: {message}", file=sys.stderr)
    return USER_ERROR


def _print(text: str) -> None:
    if text:
        print(text)


def cmd_list_tasks(args: Namespace) -> int:
    from trace_bench.cli.output import render
    from trace_bench.registry.tasks import BUILTIN_SUITES, TaskCatalog, parse_benches

    try:
        benches = parse_benches(args.bench)
        if benches is None and args.all:
            from trace_bench.registry.tasks import _plugin_suites

            benches = [*BUILTIN_SUITES, *(s for s in _plugin_suites() if s not in BUILTIN_SUITES)]
        catalog = TaskCatalog.create(args.root)
        specs = catalog.list(benches)
    except ConfigError as exc:
        return _fail(str(exc))
    if args.root and benches is None:
        root_ids = {s.id for s in catalog.specs.values() if s.module_path}
        specs = [s for s in specs if s.id in root_ids] + [s for s in specs if s.id not in root_ids]
    rows = []
    for spec in specs:
        reason = spec.unavailable_reason()
        rows.append({"task_id": spec.id, "suite": spec.suite, "status": "unavailable" if reason else "available",
                     "reason": reason or "", "parameters": ",".join(spec.parameter_kinds),
                     "description": spec.description})
    _print(render(rows, ["task_id", "suite", "status", "parameters", "reason"], args.format,
                  ["task_id", "status", "reason"]))
    from trace_bench.registry.tasks import broken_suites

    for suite, reason in broken_suites().items():
        print(f"trace-bench: warning: suite {suite} cannot be loaded: {reason}", file=sys.stderr)
    return 0


def cmd_list_trainers(args: Namespace) -> int:
    from trace_bench.cli.output import render
    from trace_bench.registry.trainer_catalog import list_trainer_rows

    rows = [{"trainer_id": row.id, "status": "available" if row.available else "unavailable",
             "reason": row.reason or "", "source": row.source, "description": row.description}
            for row in list_trainer_rows(include_unavailable=args.all)]
    _print(render(rows, ["trainer_id", "status", "source", "reason"], args.format, ["trainer_id", "status", "reason"]))
    return 0


def _load(config_path: str) -> Any:
    from trace_bench.config.loader import load_config

    return load_config(config_path)


def _config_error(exc: ConfigError, path: str | None) -> int:
    if exc.file is None and path:
        exc = exc.with_file(path)
    return _fail(str(exc))


def cmd_validate(args: Namespace) -> int:
    from trace_bench.cli.validate import validate

    try:
        config = _load(args.config)
        return validate(config, args)
    except ConfigError as exc:
        return _config_error(exc, args.config)


def cmd_run(args: Namespace) -> int:
    from trace_bench.execution.local import warm_up

    warm_up()  # the job template imports opto while the driver reads the config and plans
    from trace_bench.runner.run import RunOptions, execute_run, locate_run

    resume_mode, resume_run = None, None
    if args.resume:
        if args.resume in ("auto", "failed", "none"):
            resume_mode = args.resume
        else:
            resume_run = args.resume
    try:
        if args.config:
            config = _load(args.config)
        elif resume_run:
            run_dir = locate_run(resume_run, args.runs_dir or "runs")
            config = _load(str(run_dir / "meta" / "config.snapshot.yaml"))
            args.runs_dir = args.runs_dir or str(run_dir.parent)
        else:
            return _fail("run needs --config FILE (or --resume RUN to continue a run)")
        if args.job_timeout is None and config.job_timeout is None and config.mode == "real":
            args.job_timeout = 600.0  # the original's default for real mode; stub jobs are unlimited
        options = RunOptions(runs_dir=args.runs_dir, root=args.root, max_workers=args.max_workers,
                             resume=resume_mode, resume_run=resume_run, force=args.force,
                             job_timeout=args.job_timeout or None, logger=args.logger, quiet=args.quiet,
                             config_path=args.config, executor=args.executor, ray_address=args.ray_address)
        outcome = execute_run(config, options)
    except ConfigError as exc:
        return _config_error(exc, args.config)
    except OSError as exc:  # e.g. the disk is full: every file written so far is intact (atomic writes)
        print(f"trace-bench: error: {exc}", file=sys.stderr)
        return 1
    _print_outcome(outcome)
    return outcome.exit_code


def _print_outcome(outcome: Any) -> None:
    from trace_bench.store.run_dir import RunPaths

    paths = RunPaths(outcome.run_dir)
    counts: dict[str, int] = {}
    for record in outcome.records:
        counts[record.status] = counts.get(record.status, 0) + 1
    print(f"Run complete: {outcome.run_id}")
    print(f"  run dir:     {paths.root}")
    print(f"  manifest:    {paths.manifest}")
    print(f"  results:     {paths.results_csv}")
    print(f"  summary:     {paths.summary}")
    print(f"  leaderboard: {paths.leaderboard}")
    print(f"  jobs:        {', '.join(f'{k}={v}' for k, v in sorted(counts.items())) or 'none'}")
    if outcome.not_run:
        print(f"  not run:     {len(outcome.not_run)} (resume with --resume {outcome.run_id})")
    _print_leaderboard(paths.leaderboard)


def _print_leaderboard(path: Path, limit: int = 20) -> None:
    import csv

    try:
        with open(path, encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
    except OSError:
        return
    if not rows:
        return
    print("Leaderboard (mean best score over seeds, per task):")
    width = max(len(r["task"]) for r in rows[:limit])
    for row in rows[:limit]:
        mean = row.get("mean_best") or "-"
        try:
            mean = f"{float(mean):.4g}"
        except ValueError:
            pass
        print(f"  {row['task']:<{width}}  #{row.get('rank') or '-':<2} {row['trainer']} ({row['params_label']})"
              f"  best={mean}  n={row['count']}  failed={row['failed']}")
    if len(rows) > limit:
        print(f"  ... {len(rows) - limit} more rows in {path}")


def cmd_report(args: Namespace) -> int:
    try:
        from trace_bench.analysis import report_main
    except ImportError as exc:
        return _fail(f"report needs the analysis extra (pip install 'trace-bench[analysis]'): {exc}")
    return report_main(args.runs, args.out)


def cmd_compare(args: Namespace) -> int:
    try:
        from trace_bench.analysis import compare_main
    except ImportError as exc:
        return _fail(f"compare needs the analysis extra (pip install 'trace-bench[analysis]'): {exc}")
    return compare_main(args.run_a, args.run_b, args.format)


def cmd_ui(args: Namespace) -> int:
    try:
        from trace_bench.ui import launch_ui
    except ImportError as exc:
        return _fail(f"the UI needs the ui extra (pip install 'trace-bench[ui]'): {exc}")
    return launch_ui(runs_dir=args.runs_dir, tasks_root=args.tasks_root, port=args.port, share=args.share)


def cmd_fake_llm(args: Namespace) -> int:
    from trace_bench.llm.fake_server import fake_llm_main

    rest = [a for a in args.rest if a != "--"]
    return fake_llm_main(rest)
