"""ShinkaEvolve through its own current runner (``shinka.core.ShinkaEvolveRunner``, PyPI
``shinka-evolve`` 0.0.7): unavailable with the reason and the install command while no ``shinka``
with that API is installed (sources before its 2026-03-01 refactor lack it), and, with a stand-in
``shinka`` at the boundary (tests/trainers/fake_shinka), a stub run that goes through the gateway
within budget, its candidates scored by the task in the sandbox, one curve step per generation."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from tests.trainers.external_jobs import curve_rows, events, run_jobs
from trace_bench.cli.main import main
from trace_bench.registry import trainers as registry
from trace_bench.trainers.external.shinkaevolve_trainer import ShinkaEvolveParams

FAKE = Path(__file__).parent / "fake_shinka"
CIRCLES = "discovery:circle_packing_26"


def _forget_shinka() -> None:
    for name in [n for n in sys.modules if n == "shinka" or n.startswith("shinka.")]:
        del sys.modules[name]


@pytest.fixture
def fresh_registry() -> Iterator[None]:
    registry.all_trainers.cache_clear()
    yield
    registry.all_trainers.cache_clear()


@pytest.fixture
def no_shinka(monkeypatch: pytest.MonkeyPatch, fresh_registry: None) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "shinka" else real(name, *a))


@pytest.fixture
def fake_shinka(monkeypatch: pytest.MonkeyPatch, fresh_registry: None) -> Iterator[object]:
    _forget_shinka()
    monkeypatch.syspath_prepend(str(FAKE))
    import shinka.core.async_runner as runner

    runner.SENT.clear()
    yield runner
    _forget_shinka()


def test_without_shinka_it_is_listed_unavailable_with_the_reason(no_shinka: None, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from trace_bench.registry.trainer_catalog import list_trainer_rows

    [row] = [r for r in list_trainer_rows(include_unavailable=True) if r.id == "ShinkaEvolve"]
    assert not row.available
    for needed in ("shinka.core.EvolutionConfig", "shinka.core.ShinkaEvolveRunner",
                   "shinka.database.DatabaseConfig", "shinka.launch.LocalJobConfig",
                   "pip install shinka-evolve==0.0.7"):
        assert needed in (row.reason or ""), needed
    assert registry.all_trainers()["ShinkaEvolve"].reason == row.reason
    assert main(["list-trainers", "--all"]) == 0
    listed = capsys.readouterr().out
    assert "ShinkaEvolve" in listed and "shinka.core.ShinkaEvolveRunner" in listed
    config = tmp_path / "c.yaml"
    config.write_text(f"tasks: [{CIRCLES}]\ntrainers: [ShinkaEvolve]\n")
    assert main(["validate", "--config", str(config)]) == 2
    captured = capsys.readouterr()
    assert "trainer 'ShinkaEvolve' is unavailable: ShinkaEvolve (import name 'shinka') is not installed" in (
        captured.out + captured.err)
    assert main(["run", "--config", str(config), "--runs-dir", str(tmp_path / "runs")]) == 2
    captured = capsys.readouterr()
    assert "trainer 'ShinkaEvolve' is unavailable: ShinkaEvolve (import name 'shinka')" in captured.out + captured.err
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())  # refused before any run


def test_a_shinka_from_before_its_runner_refactor_is_unavailable_naming_what_is_missing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_registry: None) -> None:
    # SkyDiscover's backend imports shinka.core.runner, which ShinkaEvolve removed on 2026-03-01: the
    # trainer was unavailable against every release; it now drives the current runner, and an older
    # source tree (the layout below) is the one refused.
    from trace_bench.trainers.external.shinka_probe import unavailable_reason

    old = tmp_path / "shinka"
    (old / "core").mkdir(parents=True)
    (old / "database").mkdir()
    (old / "launch").mkdir()
    (old / "__init__.py").write_text("")
    (old / "core" / "__init__.py").write_text("from .runner import EvolutionRunner, EvolutionConfig\n"
                                              "from .async_runner import AsyncEvolutionRunner\n")
    (old / "database" / "__init__.py").write_text("from .dbase import DatabaseConfig\n")
    (old / "launch" / "__init__.py").write_text("from .scheduler import LocalJobConfig\n")
    _forget_shinka()
    monkeypatch.syspath_prepend(str(tmp_path))
    reason = unavailable_reason() or ""
    assert reason.startswith("the installed shinka lacks shinka.core.ShinkaEvolveRunner ("), reason
    assert "shinka.core.EvolutionConfig" not in reason.split("(")[0]  # re-exported: found
    assert registry.all_trainers()["ShinkaEvolve"].reason == reason
    assert "shinka" not in sys.modules  # read from the files, never imported
    _forget_shinka()


def test_knobs_are_validated_and_skydiscover_points_to_the_trainer() -> None:
    assert ShinkaEvolveParams(database={"num_islands": 3}).database == {"num_islands": 3}
    with pytest.raises(ValidationError, match="unknown database settings: db_path"):
        ShinkaEvolveParams(database={"db_path": "x"})
    with pytest.raises(ValidationError, match="one probability per patch type"):
        ShinkaEvolveParams(patch_types=["diff"], patch_type_probs=[0.5, 0.5])
    from trace_bench.trainers.external.skydiscover_trainer import SkyDiscoverParams

    with pytest.raises(ValidationError, match="use the trainer 'ShinkaEvolve'"):
        SkyDiscoverParams(search="shinkaevolve")  # type: ignore[arg-type]


def test_a_stub_run_goes_through_the_gateway_with_a_step_per_generation(
        fake_shinka: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert registry.all_trainers()["ShinkaEvolve"].available
    config = {"mode": "stub", "seeds": [1], "tasks": [CIRCLES], "budget": {"llm_calls": 20},
              "trainers": [{"id": "ShinkaEvolve", "params_variants": [{"iterations": 4}]}]}
    [(result, job)] = run_jobs(config, tmp_path, monkeypatch)
    assert result.status == "ok", (result.error, result.traceback)
    assert result.n_steps == 4 + 1  # one step per generation, then the final state
    assert len(curve_rows(job)) == 1 + (4 + 1) + 1  # initial, the steps, the final state at the total spend
    calls = [e for e in events(job) if e["type"] == "llm_call"]
    assert result.llm_calls == len(calls) == len(fake_shinka.SENT) and 4 <= len(calls) <= 20  # type: ignore[attr-defined]
    assert all(e["role"] == "optimizer" and not e.get("error") for e in calls)
    assert all(s["url"].startswith("http://127.0.0.1:") for s in fake_shinka.SENT)  # type: ignore[attr-defined]
    assert result.score_trust == "trusted" and result.sandbox  # scored by the task, the candidate sandboxed
    assert result.score_best > result.score_initial
    assert result.pct_of_best_known is not None and result.pct_of_best_known < 100
    assert "TRACE_BENCH_SHINKA_GATEWAY_KEY" not in __import__("os").environ


def test_a_budget_stop_cancels_the_run_with_its_curve(fake_shinka: object, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    config = {"mode": "stub", "seeds": [1], "tasks": [CIRCLES], "budget": {"llm_calls": 2},
              "trainers": [{"id": "ShinkaEvolve", "params_variants": [{"iterations": 20}]}]}
    [(result, job)] = run_jobs(config, tmp_path, monkeypatch)
    assert result.status == "budget_exhausted", (result.error, result.traceback)
    assert result.llm_calls == 2 and 1 <= result.n_steps < 20
    assert len(fake_shinka.SENT) == 3  # type: ignore[attr-defined]  # cancelled at the first refused call
    rows = curve_rows(job)
    assert int(rows[-1]["llm_calls"]) == 2


def test_the_evaluator_process_hands_the_program_over_as_text(tmp_path: Path) -> None:
    """What ShinkaEvolve starts as ``python evaluate.py`` never runs the candidate: a program that
    writes a file when imported reaches the job as text, and nothing is written."""
    from trace_bench.trainers.external.candidate_endpoint import CandidateEndpoint

    marker = tmp_path / "candidate_ran"
    program = tmp_path / "main.py"
    program.write_text(f"open({str(marker)!r}, 'w').write('x')\nVALUE = 1\n")
    received: list[str] = []

    def evaluate(code: str) -> dict[str, object]:
        received.append(code)
        return {"combined_score": 0.25, "public": {"n": 1}}

    with CandidateEndpoint(evaluate) as endpoint:
        evaluator = tmp_path / "evaluate.py"
        evaluator.write_text(endpoint.evaluator_source("bridge", 30) + "\nimport json, sys\n"
                             "print(json.dumps(evaluate(sys.argv[1])))\n")
        out = subprocess.run([sys.executable, str(evaluator), str(program)], capture_output=True, text=True,
                             check=True, cwd=tmp_path)
        wrong = subprocess.run([sys.executable, "-c", "import urllib.request as u; u.urlopen(u.Request("
                                f"{endpoint.url!r}, data=b'{{}}'))"], capture_output=True, text=True)
    assert out.stdout.strip() == '{"combined_score": 0.25, "public": {"n": 1}}'
    assert received == [program.read_text()] and not marker.exists()
    assert wrong.returncode != 0 and "401" in wrong.stderr  # no token, no evaluation


def test_real_mode_meters_exactly_what_the_provider_returned(fake_shinka: object, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Real mode against the loopback fake provider: ShinkaEvolve's calls reach the provider only
    through the gateway, and the job's calls and tokens are the provider's own counts."""
    from tests.trainers.external_jobs import run_real_against_fake_server

    result, _, stats = run_real_against_fake_server(
        CIRCLES, {"id": "ShinkaEvolve", "params_variants": [{"iterations": 2}]}, tmp_path, monkeypatch)
    assert result.n_steps == 2 + 1 and stats["requests"] == len(fake_shinka.SENT)  # type: ignore[attr-defined]


@pytest.mark.parametrize("reply_format", ["diff", "full"])
def test_stub_answers_shinka_prompts_with_an_applicable_change(reply_format: str) -> None:
    import random
    import re

    from trace_bench.llm.stub_shinka import answer, is_shinka

    program = "import numpy as np\n# EVOLVE-BLOCK-START\ndef f():\n    return 0.5\n# EVOLVE-BLOCK-END\n"
    ask = ("<DIFF> with exact SEARCH/REPLACE blocks" if reply_format == "diff"
           else "<CODE> with the whole program in a fenced block")
    prompt = f"Reply with <NAME>, <DESCRIPTION> and {ask}.\n# Current program\n\n```python\n{program}```\n\ncombined_score: 0.5"
    assert is_shinka(prompt)
    reply = answer(prompt, random.Random(0), lambda current, name, rng: current.replace("0.5", "0.75"))
    assert "<NAME>" in reply and "<DESCRIPTION>" in reply
    if reply_format == "diff":
        [(search, replace)] = re.findall(r"<<<<<<< SEARCH\n(.*?)\n=======\n(.*?)\n>>>>>>> REPLACE", reply, re.S)
        changed = program.replace(search, replace, 1)
    else:
        changed = re.search(r"<CODE>\n```python\n(.*?)\n```\n</CODE>", reply, re.S).group(1) + "\n"  # type: ignore[union-attr]
    assert changed == program.replace("0.5", "0.75")


def test_a_trainer_looked_up_before_its_library_is_installed_is_available_after(
        monkeypatch: pytest.MonkeyPatch, fresh_registry: None) -> None:
    """A long-lived process (the UI, a test worker) that looked ShinkaEvolve up without shinka sees
    it available once shinka is importable, as a fresh registry would."""
    from trace_bench.registry.trainers import resolve_trainer

    _forget_shinka()
    assert resolve_trainer("ShinkaEvolve").reason, "shinka is not installed in this environment"
    monkeypatch.syspath_prepend(str(FAKE))
    try:
        assert resolve_trainer("ShinkaEvolve").reason is None
    finally:
        _forget_shinka()
