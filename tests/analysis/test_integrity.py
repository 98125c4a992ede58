"""The integrity audit end to end: a task whose seed prompt quotes test answers is flagged while its
clean twin is not, an optimizer that copies a test answer into its prompt is caught, validation is
reported apart, excerpts are masked, and results.csv, integrity.json, the table, report.html and the
UI agree; the selection-vs-test gap rule on hand-made runs."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

pytest.importorskip("scipy")

from tests.analysis.runs_kit import job, make_run  # noqa: E402
from tests.conftest import FIXTURES, only_run_dir, run_cli  # noqa: E402
from trace_bench.analysis import load_runs  # noqa: E402
from trace_bench.analysis.integrity import describe_row, integrity_table  # noqa: E402
from trace_bench.ui.integrity import NO_FLAG, integrity_markdown  # noqa: E402

TASK = (FIXTURES / "integrity" / "prompt_task.py").read_text(encoding="utf-8")
PS = "PrioritySearch"
CONFIG = """mode: stub
seeds: [1, 2]
max_workers: 2
tasks: [clean_prompt, leaky_prompt, cheat_prompt]
trainers:
  - {id: PrioritySearch, params_variants: [{ps_steps: 2, ps_candidates: 2, ps_proposals: 2}]}
  - NoOpTrainer
"""
FULL_ANSWER = "the silver wend below the chalk cliffs"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("integrity")
    tasks = root / "tasks"
    tasks.mkdir()
    (tasks / "clean_prompt.py").write_text(TASK)
    (tasks / "leaky_prompt.py").write_text(TASK.replace("SEED_LEAKS = False", "SEED_LEAKS = True"))
    (tasks / "cheat_prompt.py").write_text(TASK.replace("CHEAT = False", "CHEAT = True"))
    (root / "c.yaml").write_text(CONFIG)
    run_cli("run", "--config", str(root / "c.yaml"), "--root", str(tasks), "--runs-dir", str(root / "runs"),
            "--quiet", check=True)
    return only_run_dir(root / "runs")


def _rows(run: Path) -> list[dict[str, str]]:
    with open(run / "results.csv", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _by_arm(run: Path) -> dict[tuple[str, str], list[dict[str, str]]]:
    arms: dict[tuple[str, str], list[dict[str, str]]] = {}
    for row in _rows(run):
        arms.setdefault((row["task"].split(":")[-1], row["trainer"]), []).append(row)
    return arms


def test_a_seed_prompt_quoting_test_answers_is_flagged_and_its_clean_twin_is_not(run: Path) -> None:
    arms = _by_arm(run)
    for trainer in (PS, "NoOpTrainer"):
        leaky, clean = arms[("leaky_prompt", trainer)], arms[("clean_prompt", trainer)]
        assert [int(r["leaked_test_items"]) for r in leaky] == [3, 3], "two answers and one question of three"
        assert [int(r["leaked_validation_items"]) for r in leaky] == [1, 1], "validation is counted apart"
        assert [(r["leaked_test_items"], r["leaked_validation_items"]) for r in clean] == [("0", "0")] * 2
    for row in arms[("leaky_prompt", "NoOpTrainer")]:
        report = json.loads((run / "jobs" / row["job_id"] / "artifacts" / "integrity.json").read_text())
        assert report["leaked"] == {"test": [0, 1, 2], "validation": [0]} and report["searched"]["test"] == 3
        kinds = {(f["item"], f["kind"]) for f in report["findings"] if f["split"] == "test"}
        assert kinds == {(0, "answer"), (1, "answer"), (2, "input")}
        assert all(f["in_initial"] for f in report["findings"]), "the task's seed prompt leaks: not the optimizer"
        assert FULL_ANSWER not in json.dumps(report).lower(), "excerpts are masked"


def test_an_optimizer_that_copies_a_test_answer_into_its_prompt_is_caught(run: Path) -> None:
    arms = _by_arm(run)
    cheat = arms[("cheat_prompt", PS)]
    assert [int(r["leaked_test_items"]) for r in cheat] == [1, 1] and all(float(r["score_best"]) == 1 for r in cheat)
    assert [int(r["leaked_test_items"]) for r in arms[("cheat_prompt", "NoOpTrainer")]] == [0, 0]
    report = json.loads((run / "jobs" / cheat[0]["job_id"] / "artifacts" / "integrity.json").read_text())
    test_findings = [f for f in report["findings"] if f["split"] == "test"]
    assert test_findings and not any(f["in_initial"] for f in test_findings), "the optimization put it there"
    assert {f["state"] for f in test_findings} == {"best", "final"}


def test_table_report_and_ui_flag_the_same_arms(run: Path) -> None:
    expected = {("leaky_prompt", PS), ("leaky_prompt", "NoOpTrainer"), ("cheat_prompt", PS)}
    table = list(csv.DictReader(run_cli("table", str(run), "--format", "csv", check=True).stdout.splitlines()))
    flagged = {(r["task"].split(":")[-1], r["trainer"]) for r in table if "leak" in r["integrity"].split(", ")}
    assert flagged == expected
    markdown = run_cli("table", str(run), check=True).stdout
    cells = [line.strip("| ").split(" | ") for line in markdown.splitlines() if line.startswith("| llm4ad")]
    marked = {(task.split(":")[-1], arm.removesuffix(" †").split(" [")[0]) for task, _rank, arm, *_ in cells
              if arm.endswith(" †")}
    assert marked == expected
    assert "† integrity audit" in markdown and "clean_prompt:" not in markdown

    run_cli("report", str(run), check=True)
    html = (run / "report.html").read_text().replace("<wbr>", "")  # break points after commas and colons
    section = html[html.index('<section id="integrity">'):html.index('<section id="cost">')]
    assert "3 arm(s) flagged" in section and "the silver wend … (+4 words)" in section
    assert FULL_ANSWER not in html.lower() and "task (initial state)" in section and "optimization" in section
    flagged_rows = re.findall(r'<tr class="loss"><td>llm4ad:(\w+)</td><td>(\w+)</td>', section)
    assert set(flagged_rows) == expected

    ui = integrity_markdown(run)
    assert ui.count("\n- ⚠") == 3 and "clean" not in ui and "leaky\\_prompt" in ui


def test_gap_rule_on_hand_made_runs(tmp_path: Path) -> None:
    """An arm is flagged when the verdict's paired test, seed by seed against the mean gap of the task's
    other arms, finds its gap above theirs (Holm over the task's arms); one seed decides nothing."""
    jobs = []
    for seed, (overfit, honest, other) in enumerate([(0.9, 0.1, 0.0), (0.8, 0.0, 0.1), (0.85, 0.05, 0.05)], 1):
        jobs += [job("s:t", "Overfit", seed, 1.0, score_test_best=1.0 - overfit),
                 job("s:t", "Honest", seed, 0.6, score_test_best=0.6 - honest),
                 job("s:t", "Other", seed, 0.5, score_test_best=0.5 - other)]
    jobs += [job("s:u", "Lonely", 1, 1.0, score_test_best=0.0), job("s:u", "Peer", 1, 0.5, score_test_best=0.5)]
    table = integrity_table(load_runs(make_run(tmp_path, "r", jobs)).jobs).set_index(["task", "trainer"])
    assert table.loc[("s:t", "Overfit"), "flags"] == "gap"
    assert table.loc[("s:t", "Overfit"), "others_gap_mean"] == pytest.approx(0.05)
    assert table.loc[("s:t", "Honest"), "flags"] == "" and table.loc[("s:t", "Other"), "flags"] == ""
    assert table.loc[("s:u", "Lonely"), "flags"] == "", "one seed: no interval, no verdict"
    assert table.loc[("s:t", "Overfit"), "audited"] == 0, "a run without the audit's columns is not audited"


def test_a_gap_without_variance_between_seeds_alone_never_flags(tmp_path: Path) -> None:
    """The demo's case: split sizes make a deterministic arm's gap a fixed 0.1 on every seed, its peers'
    a fixed 0.  Identical differences are no evidence beyond noise with three seeds (sign-flip p 0.25);
    with eight seeds they are (2/2^8, Holm over 3 arms: 0.023)."""
    def run(name: str, seeds: int) -> Path:
        jobs = [job("s:t", arm, seed, 0.6, score_test_best=0.6 - gap)
                for arm, gap in (("Minibatch", 0.1), ("Basic", 0.0), ("NoOp", 0.0)) for seed in range(1, seeds + 1)]
        return make_run(tmp_path, name, jobs)

    three = integrity_table(load_runs(run("three", 3)).jobs).set_index("trainer")
    assert three.loc["Minibatch", "flags"] == "" and bool(three.loc["Minibatch", "gap_no_variance"])
    assert three.loc["Minibatch", "gap_p"] == pytest.approx(0.75)
    eight = integrity_table(load_runs(run("eight", 8)).jobs).set_index("trainer")
    assert eight.loc["Minibatch", "flags"] == "gap" and eight.loc["Minibatch", "gap_p"] == pytest.approx(3 * 2 / 256)
    assert "no variance between seeds" in describe_row(eight.loc["Minibatch"])


def test_a_gap_equal_to_its_peers_up_to_float_noise_is_not_flagged(tmp_path: Path) -> None:
    """Every seed of every arm has the same gap, 0.05, written as score − score_test_best: the floats
    differ in their last bits and one arm's spread is 0, so noise alone used to exceed its half-width."""
    jobs = [job("s:t", arm, seed, test + 0.05, score_test_best=test)
            for arm, tests in {"A": (0.2, 0.3, 0.4), "B": (0.5, 0.6, 0.7), "C": (0.8, 0.8, 0.8)}.items()
            for seed, test in enumerate(tests, 1)]
    table = integrity_table(load_runs(make_run(tmp_path, "r", jobs)).jobs).set_index("trainer")
    assert list(table["flags"]) == ["", "", ""], table[["gap_mean", "gap_ci_half", "others_gap_mean"]]


def test_an_unflagged_run_says_so(tmp_path: Path) -> None:
    run = make_run(tmp_path, "r", [job("s:t", "A", 1, 0.5), job("s:t", "B", 1, 0.4)])
    assert integrity_markdown(run) == NO_FLAG
    assert "† integrity" not in run_cli("table", str(run), check=True).stdout


def test_a_test_score_above_the_selection_score_is_never_a_gap_flag(tmp_path: Path) -> None:
    """Seen on a stub run of internal:code_param: both arms score 0.667 on test; PrioritySearch's
    selection score is 0.6 on every seed (gap -0.067, sd 0, so a half-width of 0) and
    BasicSearchAlgorithm's gap averages -0.133: PrioritySearch was flagged (†) for a gap 'above' its
    peer's, though a test score above the selection score is no trace of an evaluator being gamed."""
    jobs = []
    for seed, basic_best in enumerate([0.6, 0.4, 0.6], 1):
        jobs += [job("s:t", "Steady", seed, 0.6, score_test_best=2 / 3),
                 job("s:t", "Basic", seed, basic_best, score_test_best=2 / 3)]
    table = integrity_table(load_runs(make_run(tmp_path, "r", jobs)).jobs).set_index(["task", "trainer"])
    assert table.loc[("s:t", "Steady"), "gap_mean"] == pytest.approx(0.6 - 2 / 3)
    assert table.loc[("s:t", "Steady"), "flags"] == "" and table.loc[("s:t", "Basic"), "flags"] == ""
