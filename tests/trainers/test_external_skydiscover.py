"""SkyDiscover: its searches run through the gateway on discovery tasks (stub mode), one curve step per
iteration, budget stops, validated knobs, and EvoX's LLM-written search strategies kept in the sandbox."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from pydantic import ValidationError

from tests.trainers.external_jobs import curve_rows, events, run_jobs
from trace_bench.trainers.external.skydiscover_trainer import DATABASE_KNOBS, SEARCHES, SkyDiscoverParams

pytest.importorskip("skydiscover")


def test_database_knobs_are_validated_by_name() -> None:
    assert SkyDiscoverParams(search="beam_search", database={"beam_width": 3}).database == {"beam_width": 3}
    with pytest.raises(ValidationError, match="unknown database settings for search 'topk': beam_width"):
        SkyDiscoverParams(search="topk", database={"beam_width": 3})
    with pytest.raises(ValidationError, match="db_path set by the harness"):
        SkyDiscoverParams(search="adaevolve", database={"db_path": "/tmp/x"})
    with pytest.raises(ValidationError):
        SkyDiscoverParams(search="shinkaevolve")  # type: ignore[arg-type]


def test_static_knob_table_matches_the_installed_library() -> None:
    from skydiscover import config as sky

    classes = {"adaevolve": sky.AdaEvolveDatabaseConfig, "evox": sky.EvoxDatabaseConfig, "topk": sky.DatabaseConfig,
               "beam_search": sky.BeamSearchDatabaseConfig, "best_of_n": sky.BestOfNDatabaseConfig}
    owned = {"db_path", "log_prompts", "random_seed", "database_file_path", "evaluation_file", "config_path"}
    for search in SEARCHES:
        library = {f.name for f in dataclasses.fields(classes[search]) if not f.name.startswith("_")} - owned
        assert set(DATABASE_KNOBS[search]) == library, search


@pytest.mark.parametrize("search", SEARCHES)
def test_each_search_improves_circle_packing_with_a_step_per_iteration(search: str, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # the stub's proposals follow from the prompt's text; seed 3 is one where all five searches find a
    # better packing within 4 iterations since the scorer's summary stopped naming the target (seed 1 did before)
    config = {"mode": "stub", "seeds": [3], "tasks": ["discovery:circle_packing_26"],
              "trainers": [{"id": "SkyDiscover", "params_variants": [{"search": search, "iterations": 4}]}]}
    [(result, job)] = run_jobs(config, tmp_path, monkeypatch)
    assert result.status == "ok", (result.error, result.traceback)
    assert result.n_steps == 4 + 1  # one step per iteration, then the final state
    assert len(curve_rows(job)) == 1 + (4 + 1) + 1  # initial, the steps, the final state at the total spend
    calls = [e for e in events(job) if e["type"] == "llm_call"]
    assert result.llm_calls == len(calls) > 0 and all(e["role"] == "optimizer" for e in calls)
    assert result.score_best > result.score_initial
    assert result.pct_of_best_known is not None and result.pct_of_best_known < 100


def test_a_budget_stop_ends_the_search_with_its_curve(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = {"mode": "stub", "seeds": [1], "tasks": ["discovery:circle_packing_26"], "budget": {"llm_calls": 2},
              "trainers": [{"id": "SkyDiscover", "params_variants": [{"search": "topk", "iterations": 20}]}]}
    [(result, job)] = run_jobs(config, tmp_path, monkeypatch)
    assert result.status == "budget_exhausted", (result.error, result.traceback)
    assert result.llm_calls == 2 and result.n_steps < 20
    rows = curve_rows(job)
    assert len(rows) >= 2 and int(rows[-1]["llm_calls"]) == 2


def _initial_strategy() -> str:
    from skydiscover.config import EvoxDatabaseConfig

    return Path(EvoxDatabaseConfig().database_file_path).read_text(encoding="utf-8")


def _database(code: str) -> object:
    from skydiscover.config import EvoxDatabaseConfig
    from skydiscover.search.base_database import Program, ProgramDatabase

    from trace_bench.trainers.external.skydiscover_evox import sandboxed_strategy_database

    database = sandboxed_strategy_database(ProgramDatabase, Program)("evox", EvoxDatabaseConfig(random_seed=1), code)
    for index in range(4):
        database.add(Program(id=f"p{index}", solution=f"x = {index}", metrics={"combined_score": index / 4}),
                     iteration=index)
    return database


def test_an_evox_strategy_samples_in_the_sandbox_by_program_id() -> None:
    database = _database(_initial_strategy())
    parents, inspirations = database.sample(num_inspirations=2)
    [parent] = parents.values()
    assert parent is database.programs[parent.id]  # the job's own (trusted) program object
    assert all(p is database.programs[p.id] for group in inspirations.values() for p in group)
    assert database.get_best_program().id == "p3"


def test_a_hostile_evox_strategy_touches_nothing_in_the_job(tmp_path: Path) -> None:
    target = tmp_path / "strategy_was_here"
    code = _initial_strategy().replace(
        "candidates = list(self.programs.values())",
        f"open({str(target)!r}, 'w').write('x')\n        candidates = list(self.programs.values())")
    assert code != _initial_strategy()
    database = _database(code)
    with pytest.raises(RuntimeError, match="sandbox"):
        database.sample(num_inspirations=2)
    assert not target.exists()


def test_an_evox_strategy_cannot_invent_programs() -> None:
    code = _initial_strategy().replace('parent_dict = {"": parent}', 'parent_dict = {"": EvolvedProgram(id="forged", '
                                                                     'solution="", metrics={"combined_score": 9.0})}')
    database = _database(code)
    with pytest.raises(RuntimeError, match="unknown program 'forged'"):
        database.sample(num_inspirations=1)


def test_stub_answers_skydiscover_prompts_with_an_applicable_diff() -> None:
    import random

    from skydiscover.utils.code_utils import apply_diff

    from trace_bench.llm.stub_skydiscover import answer, is_skydiscover

    program = "import numpy as np\n# EVOLVE-BLOCK-START\ndef f():\n    return 0.5\n# EVOLVE-BLOCK-END\n"
    prompt = (f"# Current Program Information\n- Main Metrics: score 0.5\n\n# Current Program\n\n## Program Information\n"
              f"combined_score: 0.5\n\n```python\n{program}```\n\n# Task\nImprove its COMBINED_SCORE.\n"
              "You MUST use the exact SEARCH/REPLACE diff format shown below")
    assert is_skydiscover(prompt)
    reply = answer(prompt, random.Random(0), lambda current, name, rng: current.replace("0.5", "0.75"))
    assert apply_diff(program, reply) == program.replace("0.5", "0.75")


def test_any_task_runs_with_its_parameters_as_labelled_blocks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = {"mode": "stub", "seeds": [1], "tasks": ["internal:code_param"],
              "trainers": [{"id": "SkyDiscover", "params_variants": [{"search": "best_of_n", "iterations": 3}]}]}
    [(result, job)] = run_jobs(config, tmp_path, monkeypatch)
    assert result.status == "ok", (result.error, result.traceback)
    assert result.n_steps == 3 + 1 and result.llm_calls > 0
    assert result.score_trust == "" and result.pct_of_best_known is None  # not a discovery task


def _parents_chosen(ordered: bool) -> set[tuple[str, ...]]:
    """The parents beam search picks in three samples of one database, for twenty sets of random ids
    (the library's ids are uuid4): one seed, the same programs added in the same order each time."""
    import random
    import uuid

    from skydiscover.config import BeamSearchDatabaseConfig
    from skydiscover.search.base_database import Program
    from skydiscover.search.beam_search.database import BeamSearchDatabase

    from trace_bench.trainers.external.skydiscover_order import insertion_ordered

    seen = set()
    for _ in range(20):
        database = BeamSearchDatabase("beam_search", BeamSearchDatabaseConfig(random_seed=1, beam_width=4))
        database = insertion_ordered(database) if ordered else database
        for name, score in (("grid", 0.82), ("broken", 0.0), ("rows", 0.9), ("broken too", 0.0), ("descent", 0.95)):
            database.add(Program(id=str(uuid.uuid4()), solution=f"def f():\n    return {name!r}\n",
                                 metrics={"combined_score": score}))
        random.seed(1)
        seen.add(tuple(database.sample(num_inspirations=2)[0][""].solution for _ in range(3)))
    return seen


def test_beam_search_picks_the_same_parents_for_one_seed_whatever_the_ids() -> None:
    # QA F8: the beam is a set of uuid4 ids walked in hash order, so one seed chose different parents
    # run to run (and, now and then, four failed candidates in a row on circle packing).
    assert len(_parents_chosen(ordered=True)) == 1
