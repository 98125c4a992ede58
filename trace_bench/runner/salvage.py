"""Records for jobs that did not report (killed on timeout, out of memory, crashed, interrupted).

What a job writes as it goes (curve.csv, events.jsonl, best_state.yaml) is enough to keep its
best-so-far result and the LLM spend so far, so a killed job is still a useful row.  Its curve gets
a last ``stop`` row at the spend its budget journal counted (calls cut in flight included), so the
curve reaches the job's whole trainer-phase spend, and its traceback field holds the tail of its
stdout.log (a killed process leaves no Python traceback; a crash prints one there).
"""

from __future__ import annotations

from trace_bench.execution.job_process import Finished
from trace_bench.matrix.expand import JobSpec
from trace_bench.runner.job import new_result
from trace_bench.store.events import utc_now
from trace_bench.store.job_store import JobStore
from trace_bench.store.models import CurveRow, JobResult, JobStarted, LLMCall, StoreError
from trace_bench.store.status import Status


def spent_in_training(job: JobStore) -> dict[str, float]:
    """LLM spend of a job's attempt, as the budget counts it (training phase only, cache answers
    included): its budget journal, where calls a kill cut off in flight are charged too; the
    ``llm_call`` events for a directory written before the journal existed."""
    journal = job.read_spend()
    if journal is not None:
        return journal
    calls = tokens = 0
    usd = 0.0
    for event in job.events(contains='"llm_call"'):
        if isinstance(event, LLMCall) and event.counts_against_budget:
            calls += 1
            tokens += event.total_tokens
            usd += event.cost_usd
    return {"llm_calls": calls, "tokens": tokens, "usd": usd}


def salvage_record(spec: JobSpec, job: JobStore, *, run_id: str, status: str, error: str, wall_s: float,
                   attempt: int, carried: dict[str, float] | None = None) -> JobResult:
    """A record built from what the job wrote: scores from its curve, usage from its events (the
    trainer's calls as the job's spend, the harness's measurement calls apart, as a finished job)."""
    record = new_result(spec, run_id, attempt, status=Status(status))
    record.error = error
    tail = job.read_stdout_tail()
    record.traceback = f"{error}\n--- the last lines of stdout.log ---\n{tail}" if tail.strip() else error
    record.time_seconds = round(wall_s, 6)
    record.finished_at = utc_now()
    rows = job.read_curve()
    if rows:
        record.score_initial = rows[0].score
        record.score_final = rows[-1].score
        bests = [r.best_score for r in rows if r.best_score is not None]
        record.score_best = max(bests) if bests else None
        record.n_steps = rows[-1].step
    calls = prompt = completion = total = hits = 0
    cost = 0.0
    measure_calls = measure_tokens = 0
    measure_cost = 0.0
    for event in job.events():
        if isinstance(event, LLMCall) and not event.error and not event.counts_against_budget:
            measure_calls += 1
            measure_tokens += event.total_tokens
            measure_cost += event.cost_usd
        elif isinstance(event, LLMCall) and not event.error:
            hits += int(event.cached)
            calls += 1
            prompt += event.prompt_tokens
            completion += event.completion_tokens
            total += event.total_tokens
            cost += event.cost_usd
        elif isinstance(event, JobStarted) and not record.started_at:
            record.started_at = event.ts
    record.cache_hits = hits
    record.llm_calls, record.prompt_tokens, record.completion_tokens, record.total_tokens = calls, prompt, completion, total
    record.cost_usd = round(cost, 10)
    record.measure_llm_calls, record.measure_tokens = measure_calls, measure_tokens
    record.measure_cost_usd = round(measure_cost, 10)
    spent = spent_in_training(job)
    carried = carried or {}
    record.budget_spent = {k: spent.get(k, 0) + carried.get(k, 0) for k in ("llm_calls", "tokens", "usd")}
    if rows and rows[-1].kind not in ("final", "harness_final", "stop"):
        _append_stop_row(job, rows[-1], record, spent, wall_s)
    return record


def _append_stop_row(job: JobStore, last: CurveRow, record: JobResult, spent: dict[str, float], wall_s: float) -> None:
    """The curve's last row at the spend the job reached before it was killed (no score: the
    parameters it left were never measured)."""
    row = CurveRow(step=last.step, wall_s=round(wall_s, 6), n_evals=last.n_evals,
                   llm_calls=max(int(spent.get("llm_calls", 0)), last.llm_calls or 0),
                   tokens=max(int(spent.get("tokens", 0)), last.tokens or 0),
                   usd=round(max(float(spent.get("usd", 0.0)), last.usd or 0.0), 10), score=None,
                   best_score=record.score_best, measure_llm_calls=record.measure_llm_calls,
                   measure_tokens=record.measure_tokens, measure_usd=record.measure_cost_usd, kind="stop")
    try:
        job.append_curve_row(row)
    except (OSError, StoreError):
        pass  # the record stands without it


def record_for(spec: JobSpec, job: JobStore, finished: Finished, *, run_id: str, attempt: int,
               carried: dict[str, float] | None, timeout: float | None, memory_mb: int | None,
               interrupted: bool = False) -> JobResult:
    """The record of a job process that ended: the one it sent, or one salvaged from its files."""
    if finished.record is not None and finished.killed_reason is None:
        return JobResult.model_validate(finished.record)
    if finished.killed_reason == "timeout":
        status, error = Status.TIMEOUT, f"job_timeout: exceeded {timeout or 0:g}s (process group killed)"
    elif finished.killed_reason == "interrupted" or (interrupted and finished.record is None):
        # A job that died without a result after Ctrl-C went down with the interrupt, not on its own.
        status, error = Status.INTERRUPTED, "interrupted by the user (resume to run it again)"
    elif finished.exitcode is not None and finished.exitcode < 0 and memory_mb and finished.exitcode == -9:
        status, error = Status.OOM, f"killed (signal 9) with job_memory_mb={memory_mb}"
    else:
        status, error = Status.FAILED, finished.error or \
            f"worker lost: job process exited with code {finished.exitcode} without a result"
    return salvage_record(spec, job, run_id=run_id, status=status, error=error, wall_s=finished.wall_s,
                          attempt=attempt, carried=carried)
