"""Argument parsing for ``trace-bench``; each command's module is imported only when it runs."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

FORMATS = ("tsv", "table", "json")
WEAK_SANDBOX_HELP = ("run LLM-written code without bubblewrap where it is missing (weaker isolation, recorded in the "
                     "run; same as sandbox: weak)")


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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="trace-bench", description="Benchmark LLM-as-optimizer algorithms on Trace.")
    parser.add_argument("--version", action=_VersionAction, nargs=0, help="show the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("list-tasks", help="list discoverable tasks")
    p.add_argument("--root", help="directory of user task modules (original LLM4AD layout or one module per task)")
    p.add_argument("--bench", "--dataset-name", dest="bench", help="comma-separated suites, e.g. llm4ad,internal")
    p.add_argument("--all", action="store_true", help="include unavailable tasks")
    p.add_argument("--format", choices=FORMATS, default="tsv")

    p = sub.add_parser("list-trainers", help="list trainers")
    p.add_argument("--all", action="store_true", help="include unavailable trainers with the reason")
    p.add_argument("--optimizers", action="store_true", help="list the optimizer names instead (opto's own as opto:<Name>)")
    p.add_argument("--format", choices=FORMATS, default="tsv")

    p = sub.add_parser("validate", help="check a config without running it")
    p.add_argument("--config", required=True)
    p.add_argument("--root")
    p.add_argument("--bench", "--dataset-name", dest="bench")
    p.add_argument("--strict", action="store_true",
                   help="also build every task, check trainable parameters and write a manifest")
    p.add_argument("--runs-dir", "--output-dir", dest="runs_dir")
    p.add_argument("--allow-weak-sandbox", action="store_true", help=WEAK_SANDBOX_HELP)

    p = sub.add_parser("run", help="run an experiment")
    p.add_argument("--config", help="YAML/JSON config (optional with --resume RUN: the run's snapshot is used)")
    p.add_argument("--root")
    p.add_argument("--runs-dir", "--output-dir", dest="runs_dir")
    p.add_argument("--max-workers", "--n-concurrent", dest="max_workers", type=int)
    p.add_argument("--force", action="store_true", help="re-run every job (same as --resume none)")
    p.add_argument("--resume", help="auto | failed | none, or a run id/path to continue in place")
    p.add_argument("--job-timeout", dest="job_timeout", type=float,
                   help="per-job wall-clock limit in seconds (default: config; 0 in stub, 600 in real mode)")
    p.add_argument("--logger", help="override the logger of every trainer (e.g. none, ConsoleLogger)")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.add_argument("--executor", choices=("local", "ray"), help="where jobs run (default: config, else local)")
    p.add_argument("--ray-address", dest="ray_address", help="Ray cluster address (default: start a local one)")
    p.add_argument("--allow-weak-sandbox", action="store_true", help=WEAK_SANDBOX_HELP)

    p = sub.add_parser("report", help="write a self-contained report.html for one or more runs")
    p.add_argument("runs", nargs="+")
    p.add_argument("--out")

    p = sub.add_parser("compare", help="paired comparison of two runs")
    p.add_argument("run_a")
    p.add_argument("run_b")
    p.add_argument("--format", choices=("table", "json"), default="table")

    p = sub.add_parser("ui", help="launch the Gradio UI")
    p.add_argument("--runs-dir", default="runs")
    p.add_argument("--tasks-root", dest="tasks_root")
    p.add_argument("--port", type=int)
    p.add_argument("--share", action="store_true")

    p = sub.add_parser("fake-llm", help="run the fake OpenAI-compatible server (tests, demos)")
    p.add_argument("rest", nargs=argparse.REMAINDER)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["fake-llm"]:  # its own option parser (argparse REMAINDER drops leading options)
        from trace_bench.llm.fake_server import fake_llm_main

        return fake_llm_main(argv[1:])
    args = build_parser().parse_args(argv)
    from trace_bench.runtime import set_environment_defaults

    set_environment_defaults()  # no telemetry or price-map downloads from the driver either (ui, ray, mlflow)
    from trace_bench.cli import commands

    handler = getattr(commands, "cmd_" + args.command.replace("-", "_"))
    try:
        return int(handler(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `trace-bench list-tasks | head`
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
