"""``trace-bench run``: the flags resolved into a config and options, the run executed, its
outcome printed."""

from __future__ import annotations

import sys
from argparse import Namespace
from typing import Any

from trace_bench._util.errors import ConfigError
from trace_bench.cli.outcome import print_outcome, refusal_line
from trace_bench.cli.usage import config_error, fail, load, warn_model_in_stub


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
        _start_template_early(args, run_dir)
    from trace_bench.runner.run import RunOptions, execute_run, locate_run
    from trace_bench.store.run_store import RunVanished

    config_file = args.config  # what a config error names: the resumed run's snapshot when no --config
    refused = _replay_refusal(args, overrides, resume_run)
    if refused:
        return fail(refused)
    try:
        if resume_run:
            run_dir = run_dir or locate_run(resume_run, args.runs_dir or "runs")  # ConfigError: not a run
            resume_run = str(run_dir)
        if run_dir is not None and not args.replay:
            config_file = args.config or str(layout.snapshot_file(run_dir))
        resolved = _config_of(args, run_dir, overrides)
        if isinstance(resolved, str):
            return fail(resolved)
        config, overrides = resolved
        if args.allow_weak_sandbox:
            config = config.model_copy(update={"sandbox": "weak"})
        options = RunOptions(runs_dir=args.runs_dir, root=args.root, max_workers=args.max_workers,
                             resume=resume_mode, resume_run=resume_run, force=args.force,
                             job_timeout=args.job_timeout, logger=args.logger, quiet=args.quiet,
                             config_path=args.config, executor=args.executor, ray_address=args.ray_address,
                             no_preflight=getattr(args, "no_preflight", False), overrides=overrides)
        warn_model_in_stub(config, overrides)
        outcome = execute_run(config, options, interrupts)
    except ConfigError as exc:
        return config_error(exc, config_file, overrides)
    except RunVanished as exc:
        again = f"trace-bench run --config {args.config}" if args.config else "trace-bench run --config FILE"
        print(f"trace-bench: error: {exc}; the run stopped and its jobs were killed. What it held went with it: "
              f"start it again with {again}", file=sys.stderr)
        return 1
    except OSError as exc:  # e.g. the disk is full: every file written so far is intact (atomic writes)
        print(f"trace-bench: error: {exc}", file=sys.stderr)
        return 1
    print_outcome(outcome)
    if outcome.key_refused is not None:
        print(f"trace-bench: error: {refusal_line(outcome)}", file=sys.stderr)
    return outcome.exit_code


def _start_template_early(args: Namespace, run_dir: Any) -> None:
    """Start the job template from the config file's text, before the config is read: it imports
    opto while this process reads the config (and, for a real run or an external trainer, the
    provider libraries, once for every job).  A template forked from this process starts once this
    process holds pydantic and the config and store models, which it then need not build again; a
    spawned one starts at once."""
    from trace_bench.runner.warm import peek_preload, peek_trainers, start_job_template, template_forks
    from trace_bench.store import layout

    if template_forks():
        from multiprocessing import resource_tracker

        # the tracker every job is handed is a fresh interpreter (~40 ms of CPU): started now, while
        # the second core is idle, not beside the template's imports and this process's
        resource_tracker.ensure_running()
        # the template, forked from here, then shares the records' models (pydantic builds them: most
        # of the import of both processes); the driver's own modules are imported after the fork,
        # while the template imports opto
        import trace_bench.config.models  # noqa: F401
        import trace_bench.store.models  # noqa: F401

    # a replay's config is the recorded real run's (the replay changes only its cache)
    source = layout.find_run(args.replay, args.runs_dir or "runs") if args.replay else run_dir
    config_path = args.config or (layout.snapshot_file(source) if source else None)
    start_job_template(peek_preload(config_path, replay=bool(args.replay)), peek_trainers(config_path))


def _replay_refusal(args: Namespace, overrides: list[tuple[str, str]], resume_run: str | None) -> str | None:
    """Why ``--replay`` cannot be combined with the other flags given, if it cannot."""
    if args.replay and (args.config or resume_run):
        return "--replay: the config comes from the recorded run; do not combine it with --config or --resume RUN"
    if args.replay and overrides:
        flag, text = overrides[0]
        return (f"{flag} {text}: --replay re-runs the recorded run's config as it was (its LLM cache answers "
                "only that run's calls); start a new run with the override instead")
    return None


def _config_of(args: Namespace, run_dir: Any,
               overrides: list[tuple[str, str]]) -> tuple[Any, list[tuple[str, str]]] | str:
    """The run's config and the overrides it is resolved with: the recorded run's (``--replay``),
    the file's, or the resumed run's snapshot with the overrides it recorded; or what is wrong.
    Sets ``args.runs_dir`` (and ``args.root``) to the recorded or resumed run's where unset."""
    if args.replay:
        from trace_bench.runner.replay import replay_config

        config, recorded, root = replay_config(args.replay, args.runs_dir)
        args.runs_dir = args.runs_dir or str(recorded.parent)
        args.root = args.root or root
        return config, overrides
    if args.config and run_dir is None:
        return load(args.config, overrides), overrides
    if run_dir is None:
        return "run needs --config FILE (or --resume RUN to continue a run)"
    from trace_bench.config.loader import read_config_data
    from trace_bench.runner.overrides import resumed_config
    from trace_bench.store import layout

    snapshot = layout.snapshot_file(run_dir)
    if not args.config and not snapshot.exists():
        return (f"--resume: run {run_dir} has no config snapshot ({snapshot} is missing): pass the "
                f"config it was started with: trace-bench run --resume {args.resume} --config FILE")
    config_file = args.config or str(snapshot)
    # the run keeps the overrides it recorded; a new one may not change it (exit 2)
    config, overrides = resumed_config(read_config_data(config_file), config_file, run_dir, overrides)
    if not args.config:
        args.runs_dir = args.runs_dir or str(run_dir.parent)
    return config, overrides
