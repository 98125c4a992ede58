"""The original ``trace_bench.cli`` functions (``cmd_run`` is what the original's
``benchmarks/LLM4AD/trainers_benchmark.py`` calls), as calls of the ``trace-bench`` command.

Each turns its arguments into the command line the original's parser would have received and
runs our CLI on it in-process, so output and exit codes are the CLI's own: ``cmd_run`` returns 0
only when every job ended ok or skipped (the original returned 0 whenever the runner returned),
and a config error is printed with exit code 2 instead of raised.  The original's default task
root, ``benchmarks/LLM4AD/benchmark_tasks``, is passed on only when that directory exists.
"""

from __future__ import annotations

from pathlib import Path

ORIGINAL_DEFAULT_ROOT = "benchmarks/LLM4AD/benchmark_tasks"


def _cli(command: str, *options: tuple[str, object]) -> int:
    from trace_bench.cli.main import main

    argv = [command]
    for flag, value in options:
        if value is None or value is False:
            continue
        if flag == "--root" and str(value) == ORIGINAL_DEFAULT_ROOT and not Path(ORIGINAL_DEFAULT_ROOT).is_dir():
            continue
        argv += [flag] if value is True else [flag, str(value)]
    return main(argv)


def cmd_list_tasks(root: str | None = None, bench: str | None = None, *, include_all: bool = False) -> int:
    return _cli("list-tasks", ("--root", root), ("--bench", bench), ("--all", include_all))


def cmd_list_trainers(include_all: bool = False) -> int:
    return _cli("list-trainers", ("--all", include_all))


def cmd_validate(config_path: str, root: str | None = None, bench: str | None = None, strict: bool = False,
                 runs_dir: str | None = None) -> int:
    return _cli("validate", ("--config", config_path), ("--root", root), ("--bench", bench), ("--strict", strict),
                ("--runs-dir", runs_dir))


def cmd_run(config_path: str, root: str | None = None, runs_dir: str | None = None, max_workers: int | None = None,
            force: bool = False, job_timeout: float | None = None, resume: str | None = None,
            logger_override: str | None = None) -> int:
    return _cli("run", ("--config", config_path), ("--root", root), ("--runs-dir", runs_dir),
                ("--max-workers", max_workers), ("--force", force), ("--job-timeout", job_timeout),
                ("--resume", resume), ("--logger", logger_override))


def cmd_ui(runs_dir: str = "runs", tasks_root: str | None = None, share: bool = False, port: int | None = None) -> int:
    return _cli("ui", ("--runs-dir", runs_dir), ("--tasks-root", tasks_root), ("--share", share), ("--port", port))
