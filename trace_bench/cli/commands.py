"""Command handlers; heavy modules are imported inside the command that needs them."""

from __future__ import annotations

import sys
from argparse import Namespace
from typing import Any

from trace_bench._util.availability import install_extra_hint
from trace_bench._util.errors import ConfigError

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
        from trace_bench.registry.tasks import root_suite

        benches = parse_benches(args.bench, [root_suite(args.root)] if args.root else ())
        if benches is None and args.all:
            from trace_bench.registry.tasks import _plugin_suites

            benches = [*BUILTIN_SUITES, *(s for s in _plugin_suites() if s not in BUILTIN_SUITES)]
            if args.root and root_suite(args.root) not in benches:
                benches.append(root_suite(args.root))
        catalog = TaskCatalog.create(args.root)
        specs = catalog.list(benches)
    except ConfigError as exc:
        return _fail(str(exc))
    if args.root and benches is None:
        root_ids = {s.id for s in catalog.specs.values() if s.module_path}
        specs = [s for s in specs if s.id in root_ids] + [s for s in specs if s.id not in root_ids]
    from trace_bench.sandbox.policy import quick_check

    rows = []
    no_sandbox = quick_check()
    for spec in specs:
        unavailable = spec.unavailable_reason()
        if unavailable and not args.all:
            continue
        sandbox = "required" if "sandbox" in spec.tags else ""
        reason = unavailable or (f"runs LLM-written code and needs the sandbox: {no_sandbox} (or run with "
                                 "--allow-weak-sandbox)" if sandbox and no_sandbox else "")
        rows.append({"task_id": spec.id, "suite": spec.suite, "status": "unavailable" if unavailable else "available",
                     "reason": reason, "parameters": ",".join(spec.parameter_kinds), "sandbox": sandbox,
                     "description": spec.description, **spec.yardsticks})
    # tasks that measure themselves against published values (the built-in discovery problems) show both
    yardsticks = [key for key in ("best_known", "alphaevolve") if any(key in row for row in rows)]
    _print(render(rows, ["task_id", "suite", "status", "parameters", "sandbox", *yardsticks, "reason"], args.format,
                  ["task_id", "status", "reason", *yardsticks]))
    from trace_bench.registry.tasks import broken_suites

    for suite, reason in broken_suites().items():
        print(f"trace-bench: warning: suite {suite} cannot be loaded: {reason}", file=sys.stderr)
    return 0


def cmd_list_trainers(args: Namespace) -> int:
    from trace_bench.cli.output import render

    if getattr(args, "optimizers", False):
        from trace_bench.registry.trainers import list_optimizers

        _print(render(list_optimizers(), ["optimizer", "source", "aliases"], args.format, ["optimizer", "source"]))
        return 0
    from trace_bench.registry.trainer_catalog import list_trainer_rows

    rows = [{"trainer_id": row.id, "status": "available" if row.available else "unavailable",
             "reason": row.reason or "", "source": row.source, "parameters": ",".join(row.parameters),
             "description": row.description}
            for row in list_trainer_rows(include_unavailable=args.all)]
    # parameters: the kinds of task it fits, in the words of list-tasks' parameters column
    _print(render(rows, ["trainer_id", "status", "source", "parameters", "description", "reason"], args.format,
                  ["trainer_id", "status", "parameters", "description", "reason"]))
    return 0


def _load(config_path: str, overrides: list[tuple[str, str]] | None = None) -> Any:
    from trace_bench.config.loader import load_config

    return load_config(config_path, overrides or ())


def _config_error(exc: ConfigError, path: str | None, overrides: list[tuple[str, str]] | None = None) -> int:
    """Print a config error; one about a flag (an override among them) names the flag, never a file."""
    if overrides:
        from trace_bench.config.overrides import blame, parse_overrides

        try:
            exc = blame(exc, parse_overrides(overrides))
        except ConfigError:
            pass
    if exc.file is None:
        exc = exc.with_file(path)
    return _fail(str(exc))


def cmd_validate(args: Namespace) -> int:
    from trace_bench.cli.validate import validate
    from trace_bench.llm.credentials import check_credentials, unset_key_variables

    overrides = list(args.overrides or [])
    try:
        config = _load(args.config, overrides)
        _warn_model_in_stub(config, overrides)
        check_credentials(config)
        for warning in unset_key_variables(config):
            print(f"trace-bench: warning: {warning}", file=sys.stderr)
        return validate(config, args)
    except ConfigError as exc:
        return _config_error(exc, args.config, overrides)
    except BrokenPipeError:
        raise
    except OSError as exc:  # --strict writes a manifest: e.g. a read-only runs directory
        return _fail(f"--runs-dir: cannot write the validation manifest: {exc} (choose a writable directory "
                     "with --runs-dir)")


def _warn_model_in_stub(config: Any, overrides: list[tuple[str, str]]) -> None:
    if config.mode == "stub" and any(flag == "--model" for flag, _ in overrides):
        print("trace-bench: warning: --model has no effect in stub mode (the stub LLM answers every call); "
              "add --mode real to call the model", file=sys.stderr)


def _preload_follows_file(overrides: list[tuple[str, str]]) -> bool:
    """Whether the job template the config file's text asks for is the run's: not when an override
    changes its mode, LLM, trainers or tasks (then the run starts it once the config is resolved)."""
    for flag, text in overrides:
        if flag in ("--mode", "--model") or flag == "--set" and text.split(".", 1)[0].split("=", 1)[0].strip() in (
                "mode", "llm", "trainers", "tasks"):
            return False
    return True


def cmd_run(args: Namespace) -> int:
    from trace_bench.runner.interrupts import InterruptHandler

    # Installed before anything slow (imports, config, the run's creation): Ctrl-C from here on is a
    # clean interrupt that leaves the run resumable, never a traceback.
    with InterruptHandler(quiet=args.quiet) as interrupts:
        return _run(args, interrupts)


def _run(args: Namespace, interrupts: Any) -> int:
    try:
        return _run_command(args, interrupts)
    finally:
        if args.executor in (None, "local"):
            from trace_bench.runner.warm import stop_job_template

            stop_job_template()


def _run_command(args: Namespace, interrupts: Any) -> int:
    from trace_bench.store import layout

    resume_mode, resume_run = None, None
    if args.resume:
        if args.resume in ("auto", "failed", "none"):
            resume_mode = args.resume
        else:
            resume_run = args.resume
    # the one place a resumed run is located: everything below is handed its directory
    run_dir = layout.find_run(resume_run, args.runs_dir or "runs") if resume_run else None
    overrides = list(args.overrides or [])
    if args.executor in (None, "local") and _preload_follows_file(overrides):
        from trace_bench.runner.warm import peek_preload, peek_trainers, start_job_template

        # a replay's config is the recorded real run's (the replay changes only its cache)
        source = layout.find_run(args.replay, args.runs_dir or "runs") if args.replay else run_dir
        config_path = args.config or (layout.snapshot_file(source) if source else None)
        # asynchronous: the job template imports opto while this process reads the config (and,
        # for a real run or an external trainer, the provider libraries, once for every job)
        start_job_template(peek_preload(config_path, replay=bool(args.replay)), peek_trainers(config_path))
    from trace_bench.runner.run import RunOptions, execute_run, locate_run
    from trace_bench.store.run_store import RunVanished

    config_file = args.config  # what a config error names: the resumed run's snapshot when no --config
    if args.replay and (args.config or resume_run):
        return _fail("--replay: the config comes from the recorded run; do not combine it with --config or "
                     "--resume RUN")
    if args.replay and overrides:
        flag, text = overrides[0]
        return _fail(f"{flag} {text}: --replay re-runs the recorded run's config as it was (its LLM cache answers "
                     "only that run's calls); start a new run with the override instead")
    try:
        if resume_run:
            run_dir = run_dir or locate_run(resume_run, args.runs_dir or "runs")  # ConfigError: not a run
            resume_run = str(run_dir)
        if args.replay:
            from trace_bench.runner.replay import replay_config

            config, recorded, root = replay_config(args.replay, args.runs_dir)
            args.runs_dir = args.runs_dir or str(recorded.parent)
            args.root = args.root or root
        elif args.config and run_dir is None:
            config = _load(args.config, overrides)
        elif run_dir is not None:
            from trace_bench.config.loader import read_config_data
            from trace_bench.runner.overrides import resumed_config

            snapshot = layout.snapshot_file(run_dir)
            if not args.config and not snapshot.exists():
                return _fail(f"--resume: run {run_dir} has no config snapshot ({snapshot} is missing): pass the "
                             f"config it was started with: trace-bench run --resume {args.resume} --config FILE")
            config_file = args.config or str(snapshot)
            # the run keeps the overrides it recorded; a new one may not change it (exit 2)
            config, overrides = resumed_config(read_config_data(config_file), config_file, run_dir, overrides)
            if not args.config:
                args.runs_dir = args.runs_dir or str(run_dir.parent)
        else:
            return _fail("run needs --config FILE (or --resume RUN to continue a run)")
        if args.allow_weak_sandbox:
            config = config.model_copy(update={"sandbox": "weak"})
        options = RunOptions(runs_dir=args.runs_dir, root=args.root, max_workers=args.max_workers,
                             resume=resume_mode, resume_run=resume_run, force=args.force,
                             job_timeout=args.job_timeout, logger=args.logger, quiet=args.quiet,
                             config_path=args.config, executor=args.executor, ray_address=args.ray_address,
                             no_preflight=getattr(args, "no_preflight", False), overrides=overrides)
        _warn_model_in_stub(config, overrides)
        outcome = execute_run(config, options, interrupts)
    except ConfigError as exc:
        return _config_error(exc, config_file, overrides)
    except RunVanished as exc:
        again = f"trace-bench run --config {args.config}" if args.config else "trace-bench run --config FILE"
        print(f"trace-bench: error: {exc}; the run stopped and its jobs were killed. What it held went with it: "
              f"start it again with {again}", file=sys.stderr)
        return 1
    except OSError as exc:  # e.g. the disk is full: every file written so far is intact (atomic writes)
        print(f"trace-bench: error: {exc}", file=sys.stderr)
        return 1
    _print_outcome(outcome)
    if outcome.key_refused is not None:
        print(f"trace-bench: error: {_refusal_line(outcome)}", file=sys.stderr)
    return outcome.exit_code


def _refusal_line(outcome: Any) -> str:
    """One line: whose key was refused, what the provider said, and how to continue the run."""
    refused = outcome.key_refused
    variable, said = refused.key_variable or "the provider's key", refused.message or f"HTTP {refused.status}"
    if refused.kind == "quota":
        what, fix = f"the provider reports the quota of the key in {variable} spent", "add credit or set another key"
    else:
        what, fix = f"the provider refused the key in {variable}", f"set {variable} to a valid key"
    return (f"{what} ({said}); no job started after it. {fix}, then continue the run with: "
            f"{resume_command(outcome.run_dir)}")


def _print_outcome(outcome: Any) -> None:
    from trace_bench.store.run_store import RunStore

    paths = RunStore(outcome.run_dir)
    counts: dict[str, int] = {}
    for record in outcome.records:
        counts[record.status] = counts.get(record.status, 0) + 1
    resume = resume_command(paths.root)
    if outcome.interrupted:
        print(f"Run interrupted: {outcome.run_id} (continue it with: {resume})")
    elif outcome.not_run:
        print(f"Run stopped early: {outcome.run_id}")
    else:
        print(f"Run complete: {outcome.run_id}")
    print(f"  run dir:     {paths.root}")
    print(f"  manifest:    {paths.manifest_path}")
    print(f"  results:     {paths.results_csv_path}")
    print(f"  summary:     {paths.summary_path}")
    print(f"  leaderboard: {paths.leaderboard_path}")
    print(f"  jobs:        {', '.join(f'{k}={v}' for k, v in sorted(counts.items())) or 'none'}")
    if counts.get("budget_exhausted"):
        print("               (budget_exhausted: ran until its budget was spent, a normal end; its scores count)")
    if outcome.not_run:
        print(f"  not run:     {len(outcome.not_run)} (resume with: {resume})")
    if any(record.spec.mode == "stub" for record in outcome.records):
        print(f"  mode:        {STUB_NOTE}")
    _print_failures(outcome.records)
    _print_leaderboard(paths)


def _print_failures(records: list[Any]) -> None:
    from trace_bench.runner.console import first_failures

    lines = first_failures(records)
    if lines:
        print("Failures (per task, the first failed job's error; its stdout.log has the traceback):")
        print("\n".join(lines))


def resume_command(run_dir: Any) -> str:
    """The command that continues the run at ``run_dir``, as it works when pasted here: the run's
    path (relative to the working directory when it lies below it), so no --runs-dir is needed."""
    import shlex
    from pathlib import Path

    path = Path(run_dir).resolve()
    try:
        shown = str(path.relative_to(Path.cwd()))
    except ValueError:
        shown = str(path)
    return f"trace-bench run --resume {shlex.quote(shown)}"


def _short(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


LEADERBOARD_NOTE = ("Leaderboard (per task, mean over seeds of one metric: test_best = held-out test score of the best "
                    "state; best = selection split, optimistic, where a task has no test split; [95% CI]. Ranks come "
                    "from paired t-tests over seeds, Holm-corrected per task at alpha 0.05: arms the test cannot "
                    "separate from the best share its rank (tied, with the p-value against the best); an arm with "
                    "failed or missing seeds ranks after the complete ones):")
STUB_NOTE = ("stub (a deterministic stub answered every LLM call: tokens count its answers, USD is 0; nothing here "
             "measures a real model)")


def _verdict_text(row: dict[str, Any], ties: int) -> str:
    """What the verdict says of one arm against its task's best arm."""
    p = row.get("p_vs_best")
    at = "" if p is None else f" (p={_short(p)})"
    return {"best": "best, separated from every other arm" if not ties else f"best mean, tied with {ties} arm(s)",
            "tied": f"tied with the best{at}", "below": f"below the best{at}",
            "above": f"above the best{at}, incomplete"}.get(str(row.get("vs_best") or ""), "")


def _print_leaderboard(run: Any, limit: int = 20) -> None:
    from trace_bench.store.models import StoreError
    from trace_bench.store.ranking import seeds_cell

    try:
        rows = run.read_leaderboard_rows() or []
    except StoreError:
        return
    path = run.leaderboard_path
    if not rows:
        return
    print(LEADERBOARD_NOTE)
    ties = {task: sum(1 for r in rows if r["task"] == task and r.get("vs_best") == "tied") for task in {r["task"] for r in rows}}
    width = max(len(r["task"]) for r in rows[:limit])
    for row in rows[:limit]:
        low, high = _short(row.get("ci95_low")), _short(row.get("ci95_high"))
        interval = " (no variance between seeds)" if row.get("no_variance") else \
            f" [{low}, {high}]" if low != "-" and high != "-" else ""
        metric = row.get("metric") or row.get("ranked_on") or "best"
        mean = row.get("mean", row.get("mean_best"))
        incomplete = row.get("complete") is False  # typed by the store (older leaderboards: no column)
        seeds = f"  incomplete: {seeds_cell(row['count'], row['planned'])}" if incomplete else ""
        verdict = _verdict_text(row, ties[row["task"]])
        print(f"  {row['task']:<{width}}  #{row.get('rank') or '-':<2} {row['trainer']} ({row['params_label']})"
              f"  {metric}={_short(mean)}{interval}  n={row['count']}  failed={row['failed']}{seeds}"
              + (f"  {verdict}" if verdict else ""))
    if len(rows) > limit:
        print(f"  ... {len(rows) - limit} more rows in {path}")


def cmd_report(args: Namespace) -> int:
    try:
        from trace_bench.analysis import report_main
    except ImportError as exc:
        return _fail(f"report needs the analysis extra ({install_extra_hint('analysis')}): {exc}")
    return report_main(args.runs, args.out)


def cmd_compare(args: Namespace) -> int:
    try:
        from trace_bench.analysis import compare_main
    except ImportError as exc:
        return _fail(f"compare needs the analysis extra ({install_extra_hint('analysis')}): {exc}")
    return compare_main(args.runs, args.format, args.arms)


def cmd_table(args: Namespace) -> int:
    try:
        from trace_bench.analysis.table import table_main
    except ImportError as exc:
        return _fail(f"table needs the analysis extra ({install_extra_hint('analysis')}): {exc}")
    return table_main(args.runs, args.metric, args.format, args.frontier, args.cost_axis)


def cmd_power(args: Namespace) -> int:
    try:
        from trace_bench.analysis.power import power_main
    except ImportError as exc:
        return _fail(f"power needs the analysis extra ({install_extra_hint('analysis')}): {exc}")
    return power_main(args.runs, args.format, args.alpha, args.power, args.metric, args.effect)


def cmd_verdict(args: Namespace) -> int:
    try:
        from trace_bench.analysis.verdict_output import verdict_main
    except ImportError as exc:
        return _fail(f"verdict needs the analysis extra ({install_extra_hint('analysis')}): {exc}")
    return verdict_main(args.runs, args.format, args.rope, args.metric, args.alpha)


def cmd_ui(args: Namespace) -> int:
    try:
        from trace_bench.ui import launch_ui
    except ImportError as exc:
        return _fail(f"the UI needs the ui extra ({install_extra_hint('ui')}): {exc}")
    return launch_ui(runs_dir=args.runs_dir, tasks_root=args.tasks_root, port=args.port, share=args.share,
                     no_token=args.no_token)
