"""Real mode pays no library import per job, a replay from the cache included (its jobs price every
answer); nor does an external trainer in stub mode (its library calls the job's gateway through the
provider clients); other stub runs never load them.

A task of a user directory reports, from inside its job and before any LLM call, whether
``openai`` and ``litellm`` are loaded for real (not the deferred placeholders): such a run's jobs
are forked from a template that imported them once, a plain stub run's from the lean template.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import only_run_dir, run_cli
from trace_bench.llm.fake_server import FakeLLMServer

PROBE = '''
import json, os
from opto import trace
from trace_bench._util.lazy import is_loaded
from trace_bench.tasks.guide import Guide


class G(Guide):
    def get_feedback(self, query, response, reference=None, **kwargs):
        return -abs(float(response) - 3.0), "increase"


def build_trace_problem(**eval_kwargs):
    loaded = {name: is_loaded(name) for name in ("openai", "litellm")}
    with open(os.path.join(os.environ["TRACE_BENCH_JOB_DIR"], "probe.json"), "w") as handle:
        json.dump(loaded, handle)
    return {"param": trace.node(0.0, name="x", trainable=True), "guide": G(),
            "train_dataset": {"inputs": [0], "infos": [3.0]}}
'''


def _run(tmp_path: Path, mode: str, url: str, trainer: str = "{id: MinibatchAlgorithm, num_steps: 1}",
         cache: str = "off", name: str | None = None) -> dict[str, bool]:
    root = tmp_path / "tasks"
    root.mkdir(exist_ok=True)
    (root / "probe.py").write_text(PROBE)
    name = name or mode
    config = tmp_path / f"{name}.yaml"
    config.write_text(f"""
mode: {mode}
tasks: [probe]
trainers: [{trainer}]
seeds: [1]
llm: {{base_url: "{url}", model: fake-model, api_key_env: PROBE_KEY, cache: "{cache}",
       cache_path: "{tmp_path / 'cache.sqlite'}"}}
""")
    runs = tmp_path / f"runs-{name}"
    proc = run_cli("run", "--config", str(config), "--root", str(root), "--runs-dir", str(runs), "--quiet",
                   env={"PROBE_KEY": "k"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (job,) = (only_run_dir(runs) / "jobs").iterdir()
    record = json.loads((job / "results.json").read_text())
    assert record["status"] == "ok", record["error"]
    return json.loads((job / "probe.json").read_text())


@pytest.mark.parametrize("mode", ["stub", "real"])
def test_provider_libraries_are_loaded_in_a_real_job_and_never_in_a_stub_job(tmp_path: Path, mode: str) -> None:
    with FakeLLMServer() as server:
        loaded = _run(tmp_path, mode, server.url)
    expected = mode == "real"
    assert loaded == {"openai": expected, "litellm": expected}


def test_a_replayed_job_starts_with_the_provider_libraries_loaded(tmp_path: Path) -> None:
    """Before: a replay's template was the lean one, and each replayed job imported LiteLLM to price
    its answers (2.4 s of CPU a job)."""
    with FakeLLMServer() as server:
        _run(tmp_path, "real", server.url, cache="read_write", name="record")
        url = server.url
    loaded = _run(tmp_path, "real", url, cache="replay", name="replay")  # the provider is gone
    assert loaded == {"openai": True, "litellm": True}


def test_an_external_trainers_stub_job_starts_with_the_provider_libraries_loaded(tmp_path: Path) -> None:
    """Before: each OpenEvolve, GEPA or SkyDiscover stub job imported them (0.8-1 s of its wall time)."""
    with FakeLLMServer() as server:
        loaded = _run(tmp_path, "stub", server.url, trainer="{id: GEPATrainer, max_metric_calls: 2}")
    assert loaded == {"openai": True, "litellm": True}


def test_the_cli_peeks_at_the_config_text_for_the_template_it_starts(tmp_path: Path) -> None:
    from tests.conftest import REPO
    from trace_bench.runner.warm import peek_provider_stack

    config = tmp_path / "c.yaml"
    cases = {"mode: stub\ntrainers: [PrioritySearch]\n": False,
             "mode: real\ntrainers: [PrioritySearch]\n": True,
             "mode: real\nllm: {cache: replay}\ntrainers: [PrioritySearch]\n": True,  # it prices each answer
             "trainers:\n  - id: openevolve\n    iterations: 2\n": True,  # an alias, any case
             "trainers:\n  - {id: SkyDiscover, search: evox}\n": True,
             "trainers: [my_module:MyTrainer]\n": False}
    for text, expected in cases.items():
        config.write_text(text)
        assert peek_provider_stack(config) is expected, text
    assert peek_provider_stack(REPO / "configs" / "discovery_arena.yaml")
    assert not peek_provider_stack(tmp_path / "missing.yaml") and not peek_provider_stack(None)
    assert peek_provider_stack(None, replay=True), "run --replay: the recorded run is real"

