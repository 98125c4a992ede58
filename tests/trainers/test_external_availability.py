"""External trainers without their library: listed unavailable with the install hint; validate exits 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from trace_bench.cli.main import main
from trace_bench.registry import trainers as registry
from trace_bench.trainers.external.dspy_trainer import DSPyTrainer
from trace_bench.trainers.external.gepa_trainer import GEPATrainer
from trace_bench.trainers.external.openevolve_trainer import OpenEvolveTrainer
from trace_bench.trainers.external.skydiscover_trainer import SkyDiscoverTrainer
from trace_bench.trainers.external.textgrad_trainer import TextGradTrainer

CASES = [(DSPyTrainer, "dspy"), (TextGradTrainer, "textgrad"), (OpenEvolveTrainer, "openevolve"), (GEPATrainer, "gepa"),
         (SkyDiscoverTrainer, "skydiscover")]


@pytest.fixture
def fresh_registry() -> object:
    registry.all_trainers.cache_clear()
    yield
    registry.all_trainers.cache_clear()


@pytest.mark.parametrize(("cls", "extra"), CASES)
def test_missing_library_is_unavailable_with_hint(cls: type, extra: str, fresh_registry: object, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    assert cls.extra == extra and cls.source == "external" and cls.requires
    monkeypatch.setattr(cls, "requires", ("trace_bench_no_such_module_" + extra,))
    info = registry.all_trainers()[cls.id]
    assert not info.available and info.reason == f"install trace-bench[{extra}]"
    assert cls.id not in [t.id for t in registry.list_trainers()]
    assert cls.id in [t.id for t in registry.list_trainers(include_unavailable=True)]
    config = tmp_path / "c.yaml"
    config.write_text(f"tasks: [internal:numeric_param]\ntrainers: [{cls.id}]\n")
    assert main(["validate", "--config", str(config)]) == 2
    captured = capsys.readouterr()
    assert f"trainer '{cls.id}' is unavailable: install trace-bench[{extra}]" in captured.out + captured.err


def test_installed_libraries_make_them_available(fresh_registry: object) -> None:
    for cls, _ in CASES:
        assert registry.all_trainers()[cls.id].available, cls.id
