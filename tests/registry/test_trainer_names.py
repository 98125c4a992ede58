"""A name that is not a trainer says what it is: an optimizer goes under `optimizer:`, a family
lists its members."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli


@pytest.mark.parametrize(("name", "expected"), [
    ("OPRO", "OPRO is an optimizer, not a trainer: put `optimizer: OPRO` on a trainer entry such as "
             "MinibatchAlgorithm"),
    ("OptoPrime", "OptoPrime is an optimizer, not a trainer: put `optimizer: OptoPrime` on a trainer entry"),
    ("textgrad", "textgrad is an optimizer, not a trainer: put `optimizer: TextGrad` on a trainer entry such as "
                 "MinibatchAlgorithm (or TextGradTrainer, the textgrad library's own loop)"),
    ("GEPA", "'GEPA' names a family of trainers: GEPA-Base, GEPA-Beam, GEPA-UCB, GEPATrainer"),
    ("PrioritySerch", "unknown trainer 'PrioritySerch' (did you mean 'PrioritySearch'?)"),
])
def test_a_name_that_is_not_a_trainer_says_what_it_is(tmp_path: Path, name: str, expected: str) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(f"tasks: [internal:numeric_param]\ntrainers: [{name}]\n")
    proc = run_cli("validate", "--config", str(config))
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith(f"trace-bench: error: {config}: trainers[0].id: ")
    assert expected in line, line
