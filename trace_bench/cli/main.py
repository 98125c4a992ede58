"""Argument parsing for ``trace-bench``; each command's module is imported only when it runs.

Every option has one line of help and every subcommand a description and examples (a test
walks the parser and fails on a missing one).  Numeric flags are checked here, so a bad value
is a usage error (exit 2) instead of a silently clamped or meaningless setting.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Sequence
from typing import TypeVar

Number = TypeVar("Number", int, float)


def cost_axes() -> tuple[str, ...]:
    """``table --cost-axis``'s choices: the frontier's cost axes, in its order of preference."""
    from trace_bench.store.frontier import COST_COLUMNS

    return tuple(COST_COLUMNS)


def _cost_axis(text: str) -> str:
    """Checked when the option is given, not when the parser is built: naming the choices needs the
    store's models, which the CLI's start-up must not import."""
    if text not in cost_axes():
        raise argparse.ArgumentTypeError(f"invalid cost axis {text!r} (choose from {', '.join(cost_axes())})")
    return text


FORMATS = ("tsv", "table", "json")
WEAK_SANDBOX_HELP = "run LLM-written code without bubblewrap where missing (weaker, recorded; = sandbox: weak)"
_RAW = argparse.RawDescriptionHelpFormatter


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("trace-bench")
    except PackageNotFoundError:  # running from a source tree
        return "0.0.0+source"


class _VersionAction(argparse.Action):
    """Looks the version up only when asked (package metadata scans are slow)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        print(f"trace-bench {_version()}")
        parser.exit()


def _argument(parse: Callable[[str], Number], expected: str, ok: Callable[[Number], bool],
              must: str) -> Callable[[str], Number]:
    """An argparse type: ``parse(text)`` (else "expected {expected}"), checked by ``ok`` (else
    "must {must}")."""

    def convert(text: str) -> Number:
        try:
            value = parse(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
        if not ok(value):
            raise argparse.ArgumentTypeError(f"must {must}, got {value if isinstance(value, int) else repr(text)}")
        return value

    return convert


positive_int = _argument(int, "a whole number", lambda v: v >= 1, "be at least 1")
seconds = _argument(float, "a number of seconds", lambda v: math.isfinite(v) and v >= 0,
                    "be a finite number of seconds >= 0 (0 = no limit)")
probability = _argument(float, "a number between 0 and 1", lambda v: 0 < v < 1, "be strictly between 0 and 1")
port = _argument(int, "a port number", lambda v: 0 <= v <= 65535, "be between 0 and 65535")
positive_number = _argument(float, "a number", lambda v: math.isfinite(v) and v > 0, "be a positive number")
rope_width = _argument(float, "a number between 0 and 1", lambda v: 0 <= v < 1, "be at least 0 and below 1")


class _OverrideAction(argparse.Action):
    """Collects every config override flag into ``args.overrides`` as (flag, text), in command-line
    order (a later override of the same key wins)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        text = " ".join(values) if isinstance(values, list) else str(values)
        overrides = list(getattr(namespace, "overrides", None) or [])
        overrides.append((option_string or self.option_strings[0], text))
        namespace.overrides = overrides


OVERRIDES_HELP = ("Overrides (applied in order to the config file before it is validated; recorded in the run's\n"
                  "meta/config.snapshot.yaml and part of its config_hash; seeds, model, mode, tasks and trainer\n"
                  "settings also change the job ids):\n"
                  "  --seeds 1,2,3 | 1-5 | 7     seed values (7 is the one seed 7, not seven seeds)\n"
                  "  --model NAME                llm.model\n"
                  "  --mode stub|real            mode\n"
                  "  --budget llm_calls=5[,...]  budget.llm_calls (also tokens, usd, wall_s, evaluations)\n"
                  "  --set key.path=value        any key; the value is YAML; list entries by index "
                  "(tasks.0.eval_kwargs.target=3)")


def _add_overrides(p: argparse.ArgumentParser) -> None:
    group = p.add_argument_group("config overrides", "applied in command-line order; repeat --set as needed")
    group.add_argument("--set", action=_OverrideAction, dest="overrides", metavar="KEY.PATH=VALUE",
                       help="set any config key (YAML value; list entries by index: tasks.0.eval_kwargs.target=3)")
    group.add_argument("--seeds", action=_OverrideAction, dest="overrides", nargs="+", metavar="SEEDS",
                       help="the seeds: 1,2,3 or 1 2 3 or a range 1-5 (--seeds 7 is the one seed 7)")
    group.add_argument("--model", action=_OverrideAction, dest="overrides", metavar="NAME",
                       help="llm.model (the model of every role without its own)")
    group.add_argument("--mode", action=_OverrideAction, dest="overrides", choices=("stub", "real"),
                       help="stub (offline, deterministic) or real (providers)")
    group.add_argument("--budget", action=_OverrideAction, dest="overrides", metavar="KEY=VALUE[,KEY=VALUE]",
                       help="per-job budget: llm_calls, tokens, usd, wall_s, evaluations (e.g. llm_calls=5)")


def _command(sub: argparse._SubParsersAction, name: str, summary: str, description: str,
             examples: Sequence[str]) -> argparse.ArgumentParser:
    epilog = "examples:\n" + "\n".join(f"  {line}" for line in examples)
    parser = sub.add_parser(name, help=summary, description=f"{summary}.\n\n{description}", epilog=epilog,
                            formatter_class=_RAW)
    parser.set_defaults(overrides=[])
    return parser


def _add_analysis_commands(sub: argparse._SubParsersAction) -> None:
    """``report``, ``table``, ``power``, ``compare`` and ``verdict``: the commands that read finished runs
    (the analysis extra) and state the verdict on one metric."""
    metrics = ("test_best", "test_last", "best")
    metric_help = ("test_best (default): held-out test score of the best state; test_last: last iterate's; "
                   "best: selection split")
    p = _command(sub, "report", "write a self-contained report.html for one or more runs",
                 "Leaderboard with the verdict's ranks (ties as ties), the verdict across tasks, per-task tables,\n"
                 "anytime curves, frontier, win/tie/loss matrix, power plan, integrity and failures, in one offline\n"
                 "HTML page (needs the analysis extra).",
                 ["trace-bench report runs/20261123-003753-b82f598c",
                  "trace-bench report runs/RUN_A runs/RUN_B --out /tmp/both.html"])
    p.add_argument("runs", nargs="+", metavar="RUN_DIR", help="run directories to report on")
    p.add_argument("--out", help="output file (default: <run>/report.html for one run)")

    p = _command(sub, "table", "print the paper-style table of one or more runs",
                 "Per task and arm: rank and verdict (paired t-tests, Holm per task: ties share a rank), mean\n"
                 "(standard error) over seeds of the held-out test score of the best state (--metric for others),\n"
                 "n, failed jobs, and mean wall time, trainer-phase tokens and USD per job (every job that ran,\n"
                 "failed ones included). Tasks without a test split show the selection split's best score, marked\n"
                 "optimistic. --frontier adds each task's cost-quality frontier; a task with a best known value gets\n"
                 "the cost to reach 90, 99 and 100 % of it.",
                 ["trace-bench table runs/RUN_ID", "trace-bench table runs/RUN_ID --frontier",
                  "trace-bench table runs/RUN_ID --metric test_last --format latex",
                  "trace-bench table runs/RUN_A runs/RUN_B --format csv > table.csv"])
    p.add_argument("runs", nargs="+", metavar="RUN_DIR", help="run directories (runs of another LLM stay apart)")
    p.add_argument("--metric", choices=metrics, default="test_best", help=metric_help)
    p.add_argument("--format", choices=("md", "csv", "latex"), default="md", help="output format (default: md)")
    p.add_argument("--frontier", action="store_true",
                   help="mark each task's cost-quality frontier (arms no other beats on both mean cost and score) "
                        "and list it under the table")
    p.add_argument("--cost-axis", type=_cost_axis, default=None, metavar="AXIS",
                   help="the frontier's cost: usd, tokens, llm_calls, evaluations or wall_s (implies --frontier; "
                        "default: usd, else tokens)")

    p = _command(sub, "power", "how many seeds would separate each task's best arm from each runner-up?",
                 "Per task and runner-up: the verdict's paired t-test at its Holm level (alpha / pairs), for a true\n"
                 "difference of --effect in the score's units, with the sd of the paired differences from the run:\n"
                 "the power at the current seeds, the seeds needed for the target power and the minimum detectable\n"
                 "difference. No variance between seeds is said as such (needs the analysis extra).",
                 ["trace-bench power runs/RUN_ID", "trace-bench power runs/RUN_ID --effect 0.02 --power 0.9",
                  "trace-bench power runs/RUN_A runs/RUN_B --format csv > power.csv"])
    p.add_argument("runs", nargs="+", metavar="RUN_DIR", help="run directories (runs of another LLM stay apart)")
    p.add_argument("--format", choices=("md", "csv", "json"), default="md", help="output format (default: md)")
    p.add_argument("--effect", type=positive_number, default=0.05,
                   help="the smallest true difference worth detecting, in the score's units (default: 0.05)")
    p.add_argument("--alpha", type=probability, default=0.05, help="two-sided level before Holm (default: 0.05)")
    p.add_argument("--power", type=probability, default=0.8, help="target power (default: 0.8)")
    p.add_argument("--metric", choices=metrics, default="test_best", help=metric_help)

    p = _command(sub, "compare", "paired comparison of two runs, or of two arms of one run",
                 "Two runs: pairs their jobs by task, trainer, params variant and seed, A - B with its 95% interval\n"
                 "and Holm-corrected p-values over the arms. One run with --arms A B: per task, arm A against arm B\n"
                 "by seed, decided as the leaderboard decides (Holm over the task's pairs of arms). Both use the\n"
                 "verdict's paired t-test on the held-out test score (needs the analysis extra).",
                 ["trace-bench compare runs/RUN_A runs/RUN_B",
                  "trace-bench compare runs/RUN --arms PrioritySearch NoOpTrainer",
                  "trace-bench compare runs/RUN_A runs/RUN_B --format json"])
    p.add_argument("runs", nargs="+", metavar="RUN", help="two run directories, or one with --arms")
    p.add_argument("--arms", nargs=2, metavar=("A", "B"),
                   help="two arms of one run, by label ('Trainer [params]') or by trainer where it names one arm")
    p.add_argument("--format", choices=("table", "json"), default="table", help="output format (default: table)")

    p = _command(sub, "verdict", "what a run concludes, per task and across tasks",
                 "Per task: ranks from paired t-tests over seeds, Holm-corrected per task (ties as ties). Across\n"
                 "tasks: normalized scores with stratified-bootstrap IQM and mean and the probability of\n"
                 "improvement (rliable), average ranks with Friedman and Nemenyi (autorank, five tasks or more),\n"
                 "and a Bayesian signed-rank test with a region of practical equivalence (baycomp).",
                 ["trace-bench verdict runs/RUN_ID", "trace-bench verdict runs/RUN_ID --rope 0.02 --format json",
                  "trace-bench verdict runs/RUN_A runs/RUN_B --format csv > verdict.csv"])
    p.add_argument("runs", nargs="+", metavar="RUN_DIR", help="run directories (runs of another LLM stay apart)")
    p.add_argument("--format", choices=("md", "csv", "json"), default="md", help="output format (default: md)")
    p.add_argument("--rope", type=rope_width, default=0.01,
                   help="region of practical equivalence on the normalized 0-1 scale (default: 0.01)")
    p.add_argument("--alpha", type=probability, default=0.05, help="level of the tests (default: 0.05)")
    p.add_argument("--metric", default="test_best", metavar="METRIC",
                   help="test_best (default), test_last, best; at_equal, auc, at_<spend>: the curves at equal spend")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="trace-bench", formatter_class=_RAW,
        description="Benchmark LLM-as-optimizer algorithms on Trace: a config names tasks x trainers x params "
                    "variants x seeds;\n`run` executes the matrix into a run directory that `report`, `compare` "
                    "and `ui` read.",
        epilog="examples:\n  trace-bench list-tasks --bench internal\n"
               "  trace-bench run --config configs/smoke.yaml\n  trace-bench COMMAND --help")
    parser.add_argument("--version", action=_VersionAction, nargs=0, help="show the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    _add_catalog_commands(sub)
    _add_run_commands(sub)
    _add_analysis_commands(sub)
    _add_server_commands(sub)
    return parser


def _add_catalog_commands(sub: argparse._SubParsersAction) -> None:
    """``list-tasks`` and ``list-trainers``: what a config may name."""
    p = _command(sub, "list-tasks", "list discoverable tasks",
                 "Reads static metadata only (no task module is imported). Without --all, tasks that cannot run\n"
                 "on this machine are hidden; --all lists them with the reason, and the opt-in suites too.",
                 ["trace-bench list-tasks", "trace-bench list-tasks --bench internal,trace_examples --format table",
                  "trace-bench list-tasks --all --format json"])
    p.add_argument("--root", help="directory of user tasks: LLM4AD layout, one module per task, or task folders "
                                  "(evaluator.py)")
    p.add_argument("--bench", "--dataset-name", dest="bench", help="comma-separated suites, e.g. llm4ad,internal")
    p.add_argument("--all", action="store_true",
                   help="also list unavailable tasks (with the reason) and the opt-in suites (terminal_bench)")
    p.add_argument("--format", choices=FORMATS, default="tsv", help="output format (default: tsv)")

    p = _command(sub, "list-trainers", "list trainers",
                 "Concrete registered trainers (built-in, external libraries, plugins), sorted by id.",
                 ["trace-bench list-trainers", "trace-bench list-trainers --all --format table"])
    p.add_argument("--all", action="store_true", help="include unavailable trainers with the reason")
    p.add_argument("--optimizers", action="store_true", help="list the optimizer names instead (opto's own as opto:<Name>)")
    p.add_argument("--format", choices=FORMATS, default="tsv", help="output format (default: tsv)")


def _add_run_commands(sub: argparse._SubParsersAction) -> None:
    """``validate`` and ``run``: a config checked, then executed."""
    p = _command(sub, "validate", "check a config without running it",
                 "Parses the config, resolves every trainer, knob, optimizer and task, checks credentials in real\n"
                 "mode and expands the matrix. Exit 0 valid, 1 a task failed to build (--strict), 2 config error.",
                 ["trace-bench validate --config configs/smoke.yaml",
                  "trace-bench validate --config configs/smoke.yaml --seeds 1-3 --set budget.llm_calls=5",
                  "trace-bench validate --config configs/m1_validation.yaml --strict --runs-dir /tmp/runs"])
    p.add_argument("--config", required=True, help="YAML/JSON config file to check")
    p.add_argument("--root", help="directory of user task modules")
    p.add_argument("--bench", "--dataset-name", dest="bench", help="check only the config's tasks of these suites")
    p.add_argument("--strict", action="store_true",
                   help="also build every task, check trainable parameters and write a manifest")
    p.add_argument("--runs-dir", "--output-dir", dest="runs_dir",
                   help="where --strict writes the manifest (default: the config's runs_dir)")
    p.add_argument("--allow-weak-sandbox", action="store_true", help=WEAK_SANDBOX_HELP)
    _add_overrides(p)

    p = _command(sub, "run", "run an experiment",
                 "Runs every job of the config's matrix, each in a fresh process, into <runs-dir>/<run_id>.\n"
                 "A real run first sends one cheap request per endpoint, model and key (the preflight).\n"
                 "Exit 0 when every job ended ok, 1 when some did not or the run was interrupted, 2 on a config\n"
                 "or usage error or a failed preflight (nothing is run).\n\n" + OVERRIDES_HELP + "\n"
                 "--resume RUN keeps the overrides the run recorded; an override there that would change the run's\n"
                 "config (its config_hash) is refused (exit 2): start a new run with it instead.",
                 ["trace-bench run --config configs/smoke.yaml --runs-dir /tmp/runs",
                  "trace-bench run --config exp.yaml --max-workers 4 --job-timeout 300",
                  "trace-bench run --config exp.yaml --seeds 1,2 --set budget.llm_calls=5",
                  "trace-bench run --config exp.yaml --mode real --model gpt-4o-mini --budget usd=0.5",
                  "trace-bench run --resume 20261123-003753-b82f598c --runs-dir /tmp/runs",
                  "trace-bench run --replay 20261123-003753-b82f598c   # offline, from the run's LLM cache"])
    p.add_argument("--config", help="YAML/JSON config (optional with --resume RUN: the run's snapshot is used)")
    p.add_argument("--root", help="directory of user task modules")
    p.add_argument("--runs-dir", "--output-dir", dest="runs_dir",
                   help="where the run directory is created (default: the config's runs_dir, else runs)")
    p.add_argument("--max-workers", "--n-concurrent", dest="max_workers", type=positive_int,
                   help="job processes at once, at least 1 (default: the config's max_workers)")
    p.add_argument("--force", action="store_true", help="re-run every job (same as --resume none)")
    p.add_argument("--resume", help="auto | failed | none, or a run id/path to continue in place")
    p.add_argument("--replay", metavar="RUN",
                   help="re-run a recorded real-mode run (id or path) offline from its config snapshot and LLM "
                        "cache, as a new run")
    p.add_argument("--job-timeout", dest="job_timeout", type=seconds,
                   help="per-job wall-clock limit in seconds, 0 = none (default: config; none in stub, 600 in real)")
    p.add_argument("--logger", help="override the logger of every trainer (e.g. none, ConsoleLogger)")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.add_argument("--executor", choices=("local", "ray"), help="where jobs run (default: config, else local)")
    p.add_argument("--ray-address", dest="ray_address", help="Ray cluster address (default: start a local one)")
    p.add_argument("--allow-weak-sandbox", action="store_true", help=WEAK_SANDBOX_HELP)
    p.add_argument("--no-preflight", dest="no_preflight", action="store_true",
                   help="real mode: skip checking each endpoint, model and key with one cheap request first")
    _add_overrides(p)


def _add_server_commands(sub: argparse._SubParsersAction) -> None:
    """``ui`` and ``fake-llm``: the servers the package starts."""
    p = _command(sub, "ui", "launch the Gradio UI",
                 "Serves the UI on 127.0.0.1. Every request needs the token printed in the start-up URL (once\n"
                 "opened, the browser keeps it in a cookie). Needs the ui extra.",
                 ["trace-bench ui --runs-dir runs", "trace-bench ui --runs-dir runs --share --port 7860"])
    p.add_argument("--runs-dir", default="runs", help="runs directory to browse and launch into (default: runs)")
    p.add_argument("--tasks-root", dest="tasks_root", help="directory of user task modules for launched runs")
    p.add_argument("--port", type=port, help="port to listen on (default: the first free one from 7860)")
    p.add_argument("--share", action="store_true", help="also publish a public gradio.live link (token still needed)")
    p.add_argument("--no-token", dest="no_token", action="store_true",
                   help="serve without a token (loopback only, not with --share): any local user can start runs")

    p = _command(sub, "fake-llm", "run the fake OpenAI-compatible server (tests, demos)",
                 "Stub answers with exact usage and optional faults; prints its base URL and serves until Ctrl-C.\n"
                 "Its options: trace-bench fake-llm --help.",
                 ["trace-bench fake-llm --port 8000", "trace-bench fake-llm --port 0 --latency 0.05 --error-rate 0.1"])
    p.add_argument("rest", nargs=argparse.REMAINDER, metavar="OPTIONS", help="the server's options (see above)")


def _end_the_program(code: int) -> None:
    """The command is done: end the interpreter without taking its heap apart.  Its shutdown
    would walk (collections) and free (module teardown) every object the command loaded, pydantic's
    schemas and the store's models: 50-80 ms at the end of every ``run``.  So the heap is frozen,
    the ``atexit`` handlers run and the standard streams are flushed as the shutdown would, and the
    process exits.  Everything a command writes is closed and renamed into place by then (a file
    left open would lose what it buffers: none is, see tests/cli).  Only for the program's own
    ``main()`` (no ``argv`` given: a caller that runs a command inside a longer-lived process, the
    Python API or tests, keeps its interpreter), and only where no other thread would still be
    waited for; otherwise the interpreter ends as usual, with the heap frozen."""
    import atexit
    import gc
    import os
    import threading

    gc.freeze()
    if any(thread.is_alive() and not thread.daemon for thread in threading.enumerate()
           if thread is not threading.main_thread()):
        return
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # a reader that went away, a closed stream
            pass
    os._exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    whole_program = argv is None  # the console script and ``python -m trace_bench``
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["fake-llm"]:  # its own option parser (argparse REMAINDER drops leading options)
        from trace_bench.llm.fake_server import fake_llm_main

        rest = argv[1:]
        return fake_llm_main(rest[1:] if rest[:1] == ["--"] else rest)
    args = build_parser().parse_args(argv)
    if whole_program and args.command == "run" and getattr(args, "executor", None) in (None, "local"):
        from trace_bench._util.hash_seed import fix_hash_seed

        fix_hash_seed()  # what cli.entry could not tell from the words (an abbreviated option, "ray" in a path)
    from trace_bench._util.runtime import set_environment_defaults

    set_environment_defaults()  # no telemetry or price-map downloads from the driver either (ui, ray, mlflow)
    from trace_bench.cli import commands

    handler = getattr(commands, "cmd_" + args.command.replace("-", "_"))
    try:
        code = int(handler(args) or 0)
        if whole_program:
            _end_the_program(code)
        return code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `trace-bench list-tasks | head`
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
