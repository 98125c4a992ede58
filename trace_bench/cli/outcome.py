"""What ``run`` prints when it ends: the outcome, the first failures and the leaderboard, and the
command that continues the run."""

from __future__ import annotations

from typing import Any


def refusal_line(outcome: Any) -> str:
    """One line: whose key was refused, what the provider said, and how to continue the run."""
    refused = outcome.key_refused
    variable, said = refused.key_variable or "the provider's key", refused.message or f"HTTP {refused.status}"
    if refused.kind == "quota":
        what, fix = f"the provider reports the quota of the key in {variable} spent", "add credit or set another key"
    else:
        what, fix = f"the provider refused the key in {variable}", f"set {variable} to a valid key"
    return (f"{what} ({said}); no job started after it. {fix}, then continue the run with: "
            f"{resume_command(outcome.run_dir)}")


def print_outcome(outcome: Any) -> None:
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
