"""A resumed job's measurement calls of earlier attempts are paid for (issue 41's promise after a resume).

The harness's measurement calls (test-split scoring, ...) reach the provider like the trainer's: a
re-run carries them from the old attempt's spend journal (``measure`` lines) into ``attempts.json``
and the record's ``measure_*`` columns, apart from the budget's ``carried`` train spend.  Each
journal ``sent`` line is a request the provider received, so the requests of both attempts equal
``llm_calls + measure_llm_calls`` of the final record.  In process, on the job's files: the driver's
own steps (``prepare_attempt``, then the record of a job that did not report).
"""

from __future__ import annotations

import json
from pathlib import Path

from trace_bench.matrix.expand import JobSpec
from trace_bench.runner.plan import PlannedJob, prepare_attempt
from trace_bench.runner.salvage import salvage_record
from trace_bench.store.job_store import JobStore
from trace_bench.store.models import Attempts
from trace_bench.store.run_store import RunStore


def _sent_lines(job: JobStore) -> int:
    lines = [json.loads(line) for line in job.spend_path.read_text(encoding="utf-8").splitlines()]
    return sum(line["event"] == "sent" for line in lines)


def _journal(job: JobStore, settled: dict[str, int], cut_off: dict[str, int]) -> int:
    """Calls per phase that came back (``settled``) and that a kill cut off in flight; the requests sent."""
    journal = job.open_spend_journal(durable=False)
    for phase, count in settled.items():
        for _ in range(count):
            call = journal.sent(10, phase=phase, completion_cap=5, usd_if_cut=0.5)
            journal.settled(call, llm_calls=1, tokens=13, usd=0.25)
    for phase, count in cut_off.items():
        for _ in range(count):
            journal.sent(10, phase=phase, completion_cap=5, usd_if_cut=0.5)
    journal.close()
    return _sent_lines(job)


def test_a_resumed_jobs_measure_columns_include_its_failed_attempts_measurement_calls(tmp_path: Path) -> None:
    run = RunStore.create(tmp_path, "r")
    job = run.job("j1")
    spec = JobSpec(job_id="j1", index=0, task="s:t", suite="s", eval_kwargs={}, trainer="T", params={},
                   params_label="default", trainer_kwargs={}, optimizer=None, optimizer_kwargs={}, seed=1,
                   mode="stub")
    planned = PlannedJob(spec, job, None, True)
    prepare_attempt(planned, fresh=False)
    job.make_dirs()
    # the first attempt: 6 train calls, 2 measurement calls (one cut off by the failure)
    first = _journal(job, {"train": 6, "measure": 1}, {"measure": 1})
    prepare_attempt(planned, fresh=False)  # the resume
    ledger = job.read_attempts()
    assert ledger is not None and ledger.attempts == 2
    assert ledger.carried.llm_calls == 6 and ledger.carried_measure.llm_calls == 2
    assert ledger.carried_measure.tokens == 13 + 10 + 5 and ledger.carried_measure.usd == 0.75
    # the second attempt is killed with one call of each phase in flight
    job.make_dirs()
    second = _journal(job, {}, {"train": 1, "measure": 1})
    record = salvage_record(spec, job, run_id="r", status="timeout", error="killed", wall_s=1.0,
                            attempt=planned.attempt, carried=planned.carried, carried_measure=planned.carried_measure)
    # every request the provider received is in the record: the budget's part and the measurement's
    assert (record.llm_calls or 0) + (record.measure_llm_calls or 0) == first + second == 10
    assert (record.llm_calls, record.carried_llm_calls, record.measure_llm_calls) == (7, 6, 3)
    assert record.measure_tokens == 28 + 15 and record.measure_cost_usd == 1.25
    # budgets count train spend only: the carried measurement calls are not in it
    assert record.budget_spent is not None and record.budget_spent.llm_calls == 7


def test_an_attempts_file_of_version_2_reads_with_no_measurement_calls_carried() -> None:
    ledger = Attempts.load({"schema_version": 2, "attempts": 2, "carried": {"llm_calls": 4, "tokens": 40, "usd": 0.1}})
    assert ledger.schema_version == 3 and ledger.carried.llm_calls == 4
    assert ledger.carried_measure == {"llm_calls": 0, "tokens": 0, "usd": 0.0}
