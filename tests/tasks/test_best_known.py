"""The dated best-known registry (trace_bench/tasks/discovery/problems/best_known.json): every
construction it holds scores 100 % of its recorded value under our scorer, within the problem's stated
tolerance; every value names a source and a date; a rounded record is beaten only beyond its margin."""

from __future__ import annotations

import dataclasses
import json
import re
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from tests.tasks.test_discovery_problems import MODULES
from trace_bench.tasks.discovery.best_known import REGISTRY_FILE, RegistryError, parse_registry, registry
from trace_bench.tasks.discovery.catalog import BUILTIN
from trace_bench.tasks.discovery.problems import circle_packing
from trace_bench.tasks.discovery.problems.common import beats

DATE = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")


def test_every_built_in_problem_has_a_registry_entry_and_no_other() -> None:
    assert sorted(registry().problems) == sorted(BUILTIN)


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_alphaevolve_construction_scores_100_percent_of_its_recorded_value(name: str) -> None:
    """Fed to its scorer at the problem's tolerance, AlphaEvolve's construction reaches its recorded value
    (100 %, not above: nothing to re-check), which is the paper's printed figure to its last digit, and
    does not beat today's best known value."""
    problem = BUILTIN[name]
    record = problem.record.alphaevolve
    assert record.construction is not None, record.construction_note
    score = MODULES[problem.module].score
    settings = {**problem.score_settings(), "best_known": record.number, "margin": 0.0}
    result = score(np.asarray(record.construction), **settings)
    assert result["value"] == record.number and result["combined_score"] == 1.0
    assert "beats_best_known" not in result
    printed = Decimal(record.published)
    unit = Decimal(1).scaleb(printed.as_tuple().exponent)
    assert abs(Decimal(record.value) - printed) <= unit, "the recorded value is the paper's figure, in full"
    today = score(np.asarray(record.construction), **problem.score_settings())
    assert today["combined_score"] <= 1.0 + float(problem.record.best_known.margin) / problem.best_known


def test_every_value_names_a_source_and_a_date() -> None:
    for name, entry in registry().problems.items():
        for record in (entry.alphaevolve, entry.best_known, *entry.claims):
            assert record.source.strip() and record.url.startswith("https://"), (name, record)
            assert DATE.match(record.date), (name, record.date)
        assert entry.tolerance_means.strip()


def test_the_best_known_value_is_at_least_alphaevolve_s() -> None:
    for name, entry in registry().problems.items():
        best, slack, alpha = entry.best_known.fraction, entry.best_known.margin, entry.alphaevolve.fraction
        assert best + slack >= alpha if entry.direction == "max" else best - slack <= alpha, name


def test_a_rounded_record_is_beaten_only_beyond_half_a_unit_of_its_last_digit() -> None:
    """0.94136 stands for [0.941355, 0.941365): a bound of 0.941362 does not beat it, 0.941366 does."""
    data = json.loads(REGISTRY_FILE.read_text(encoding="utf-8"))
    entry = parse_registry(data).problems["second_autocorrelation"]
    rounded = dataclasses.replace(entry.best_known, value="0.94136", exact=False)
    assert rounded.margin == Fraction(5, 10**6)
    margin = float(rounded.margin)
    assert not beats(Fraction("0.941362"), 0.94136, "max", margin)
    assert beats(Fraction("0.941366"), 0.94136, "max", margin)
    assert not beats(Fraction("1.5028625"), 1.502862, "min", 5e-7) and beats(Fraction("1.5028614"), 1.502862, "min", 5e-7)
    honest = circle_packing.score([[0.25, 0.5, 0.25], [0.75, 0.5, 0.25]], 2, best_known=0.4999, margin=0.0005)
    assert honest["combined_score"] > 1.0 and honest["beats_best_known"] == 0.0


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d["problems"]["kissing_11"]["best_known"].pop("source"), "best_known.source"),
    (lambda d: d["problems"]["kissing_11"]["best_known"].update(date=""), "best_known.date"),
    (lambda d: d["problems"]["kissing_11"]["alphaevolve"].update(construction=None, construction_note=""),
     "no construction"),
    (lambda d: d["problems"]["kissing_11"].update(direction="up"), "direction"),
    (lambda d: d["problems"]["kissing_11"]["claims"].append({"value": "x", "source": "s", "url": "u", "date": "d"}),
     "decimal"),
    (lambda d: d["problems"]["kissing_11"]["best_known"].update(colour="red"), "unknown keys"),
])
def test_a_registry_that_breaks_its_schema_is_refused_naming_the_field(change: object, message: str) -> None:
    data = json.loads(REGISTRY_FILE.read_text(encoding="utf-8"))
    change(data)  # type: ignore[operator]
    with pytest.raises(RegistryError, match=message):
        parse_registry(data)


def test_list_tasks_shows_both_yardsticks(capsys: pytest.CaptureFixture[str]) -> None:
    from trace_bench.cli.main import main

    assert main(["list-tasks", "--bench", "discovery", "--format", "json"]) in (0, None)
    rows = {row["task_id"]: row for row in json.loads(capsys.readouterr().out)}
    kissing = rows["discovery:kissing_11"]
    assert kissing["best_known"].startswith(registry().problems["kissing_11"].best_known.value + " (")
    assert kissing["alphaevolve"] == "593 (2025-05-14)" and kissing["best_known_source"]


def test_the_system_message_names_the_value_to_beat_unless_show_target_is_false() -> None:
    from trace_bench.tasks.discovery.guide import DiscoveryGuide
    from trace_bench.tasks.discovery.task import from_builtin

    best = registry().problems["first_autocorrelation"].best_known.value
    shown = from_builtin("first_autocorrelation", {})
    hidden = from_builtin("first_autocorrelation", {"show_target": False})
    assert best in shown.system_message and "1.5053" in shown.system_message
    assert best not in hidden.system_message and "1.50" not in hidden.system_message
    metrics = {"value": 1.52}
    assert best in DiscoveryGuide(shown, 0.0)._feedback(0.98, metrics, [])
    assert "1.50" not in DiscoveryGuide(hidden, 0.0)._feedback(0.98, metrics, [])
    summary = MODULES["autocorrelation"].score([1.0] * 10, **hidden.settings)["artifacts"]["summary"]
    assert "1.50" not in summary, "the scorer's own text never names the value to beat"
    with pytest.raises(ValueError, match="show_target"):
        from_builtin("first_autocorrelation", {"show_target": "no"})
