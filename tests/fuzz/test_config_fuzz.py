"""Random YAML/JSON structures never crash the config path: a config or a ConfigError."""

from __future__ import annotations

from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import run_cli
from trace_bench._util.errors import ConfigError
from trace_bench.config.loader import parse_config, read_config_data
from trace_bench.matrix.expand import expand_matrix
from trace_bench.registry.tasks import TaskCatalog

KEYS = ["tasks", "trainers", "seeds", "seed", "mode", "llm", "budget", "max_workers", "n_concurrent", "runs_dir",
        "job_timeout", "resume", "eval_kwargs", "trainer_kwargs", "ps_steps", "id", "params_variants", "params",
        "model", "cache", "roles", "llm_calls", "tags", "executor", "optimizer", "zz"]
scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 50), st.floats(allow_nan=True),
                    st.sampled_from(["stub", "real", "PrioritySearch", "NoOpTrainer", "internal:numeric_param",
                                     "auto", "x:y", "", "OptoPrime", "gpt-4o"]),
                    st.text(max_size=8))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.sampled_from(KEYS), inner, max_size=4)),
                      max_leaves=12)
configs = st.dictionaries(st.sampled_from(KEYS), values, max_size=6)
CATALOG = TaskCatalog.create()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs)
def test_random_structures_give_config_or_config_error(data: dict) -> None:
    """Anything else than a ConfigError fails the test; a ConfigError must say what is wrong, and
    where: the file (the CLI adds it to matrix errors, which know only the key path)."""
    try:
        config = parse_config(data, file="fuzz.yaml")
    except ConfigError as exc:
        _assert_clear(exc)
        assert exc.file == "fuzz.yaml" and str(exc).startswith("fuzz.yaml: "), str(exc)
        return
    try:
        expand_matrix(config, CATALOG)
    except ConfigError as exc:
        _assert_clear(exc)
        assert str(exc.with_file("fuzz.yaml")).startswith("fuzz.yaml: "), str(exc)


def _assert_clear(exc: ConfigError) -> None:
    assert exc.reason.strip(), f"a config error without a reason: {exc!r}"
    assert "Traceback" not in str(exc) and "\n" not in exc.reason.strip(), str(exc)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200) | st.text(alphabet="[]{}&*!|>-: ,ab\n<<", max_size=300))
def test_random_text_files(tmp_path_factory, text: str) -> None:  # type: ignore[no-untyped-def]
    path = Path(tmp_path_factory.mktemp("fz")) / "c.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        parse_config(read_config_data(path), file=str(path))
    except ConfigError:
        pass


def test_cli_exit_code_2_on_garbage(tmp_path: Path) -> None:
    for text in ("{{{", "tasks: 5", "- 1\n- 2", "tasks: [internal:numeric_param]\ntrainers: [{}]",
                 yaml.safe_dump({"tasks": [{"id": None}]}), "\x00\x01"):
        path = tmp_path / "c.yaml"
        path.write_text(text)
        proc = run_cli("validate", "--config", str(path))
        assert proc.returncode == 2, (text, proc.stderr)
        assert "Traceback" not in proc.stderr and proc.stderr.startswith("trace-bench: error:")
