"""Command handlers; heavy modules are imported inside the command that needs them (``run``'s
in cli/run_command.py)."""

from __future__ import annotations

import sys
from argparse import Namespace

from trace_bench._util.availability import install_extra_hint
from trace_bench._util.errors import ConfigError
from trace_bench.cli.run_command import cmd_run as cmd_run  # main finds every cmd_<name> here
from trace_bench.cli.usage import config_error, fail, load, print_text, warn_model_in_stub


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
        return fail(str(exc))
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
    print_text(render(rows, ["task_id", "suite", "status", "parameters", "sandbox", *yardsticks, "reason"], args.format,
                  ["task_id", "status", "reason", *yardsticks]))
    from trace_bench.registry.tasks import broken_suites

    for suite, reason in broken_suites().items():
        print(f"trace-bench: warning: suite {suite} cannot be loaded: {reason}", file=sys.stderr)
    return 0


def cmd_list_trainers(args: Namespace) -> int:
    from trace_bench.cli.output import render

    if getattr(args, "optimizers", False):
        from trace_bench.registry.trainers import list_optimizers

        print_text(render(list_optimizers(), ["optimizer", "source", "aliases"], args.format, ["optimizer", "source"]))
        return 0
    from trace_bench.registry.trainer_catalog import list_trainer_rows

    rows = [{"trainer_id": row.id, "status": "available" if row.available else "unavailable",
             "reason": row.reason or "", "source": row.source, "parameters": ",".join(row.parameters),
             "description": row.description, "budget_knob": row.budget_knob or "",
             "budget_stop": row.budget_stop or "not declared"}
            for row in list_trainer_rows(include_unavailable=args.all)]
    # parameters: the kinds of task it fits, in the words of list-tasks' parameters column;
    # budget_knob/budget_stop (--all, and always in json/csv): what a budget frees and how it then stops
    budget = ["budget_knob", "budget_stop"] if args.all else []
    print_text(render(rows, ["trainer_id", "status", "source", "parameters", "description", "budget_knob", "budget_stop",
                         "reason"], args.format, ["trainer_id", "status", "parameters", "description", *budget,
                                                  "reason"]))
    return 0


def cmd_validate(args: Namespace) -> int:
    from trace_bench.cli.validate import validate
    from trace_bench.llm.credentials import check_credentials, unset_key_variables

    overrides = list(args.overrides or [])
    try:
        config = load(args.config, overrides)
        warn_model_in_stub(config, overrides)
        check_credentials(config)
        for warning in unset_key_variables(config):
            print(f"trace-bench: warning: {warning}", file=sys.stderr)
        return validate(config, args)
    except ConfigError as exc:
        return config_error(exc, args.config, overrides)
    except BrokenPipeError:
        raise
    except OSError as exc:  # --strict writes a manifest: e.g. a read-only runs directory
        return fail(f"--runs-dir: cannot write the validation manifest: {exc} (choose a writable directory "
                     "with --runs-dir)")


def cmd_report(args: Namespace) -> int:
    try:
        from trace_bench.analysis import report_main
    except ImportError as exc:
        return fail(f"report needs the analysis extra ({install_extra_hint('analysis')}): {exc}")
    return report_main(args.runs, args.out)


def cmd_compare(args: Namespace) -> int:
    try:
        from trace_bench.analysis import compare_main
    except ImportError as exc:
        return fail(f"compare needs the analysis extra ({install_extra_hint('analysis')}): {exc}")
    return compare_main(args.runs, args.format, args.arms)


def cmd_table(args: Namespace) -> int:
    try:
        from trace_bench.analysis.table import table_main
    except ImportError as exc:
        return fail(f"table needs the analysis extra ({install_extra_hint('analysis')}): {exc}")
    return table_main(args.runs, args.metric, args.format, args.frontier, args.cost_axis)


def cmd_power(args: Namespace) -> int:
    try:
        from trace_bench.analysis.power import power_main
    except ImportError as exc:
        return fail(f"power needs the analysis extra ({install_extra_hint('analysis')}): {exc}")
    return power_main(args.runs, args.format, args.alpha, args.power, args.metric, args.effect)


def cmd_verdict(args: Namespace) -> int:
    try:
        from trace_bench.analysis.verdict_output import verdict_main
    except ImportError as exc:
        return fail(f"verdict needs the analysis extra ({install_extra_hint('analysis')}): {exc}")
    return verdict_main(args.runs, args.format, args.rope, args.metric, args.alpha)


def cmd_ui(args: Namespace) -> int:
    try:
        from trace_bench.ui import launch_ui
    except ImportError as exc:
        return fail(f"the UI needs the ui extra ({install_extra_hint('ui')}): {exc}")
    return launch_ui(runs_dir=args.runs_dir, tasks_root=args.tasks_root, port=args.port, share=args.share,
                     no_token=args.no_token)
