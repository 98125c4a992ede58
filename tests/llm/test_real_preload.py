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
from typing import Any

import pytest

from tests.conftest import only_run_dir, run_cli
from trace_bench.llm.fake_server import FakeLLMServer

PROBE = '''
import json, os, sys
from opto import trace
from trace_bench._util.lazy import is_loaded
from trace_bench.tasks.guide import Guide


def probe(name):
    loaded = {name: is_loaded(name) for name in ("openai", "litellm")}
    loaded["reasoning_gym"] = "reasoning_gym" in sys.modules
    loaded["dspy"] = "dspy" in sys.modules
    with open(os.path.join(os.environ["TRACE_BENCH_JOB_DIR"], name), "w") as handle:
        json.dump(loaded, handle)


class G(Guide):
    def get_feedback(self, query, response, reference=None, **kwargs):
        probe("after.json")  # the last one is written after the job's LLM calls
        return -abs(float(response) - 3.0), "increase"


def build_trace_problem(**eval_kwargs):
    probe("probe.json")
    return {"param": trace.node(0.0, name="x", trainable=True), "guide": G(),
            "train_dataset": {"inputs": [0], "infos": [3.0]}}
'''


def _run(tmp_path: Path, mode: str, url: str, trainer: str = "{id: MinibatchAlgorithm, num_steps: 1}",
         cache: str = "off", name: str | None = None, extra: str = "", tasks: str = "probe") -> dict[str, Any]:
    root = tmp_path / "tasks"
    root.mkdir(exist_ok=True)
    (root / "probe.py").write_text(PROBE)
    name = name or mode
    config = tmp_path / f"{name}.yaml"
    config.write_text(f"""
mode: {mode}
tasks: [{tasks}]
trainers: [{trainer}]
seeds: [1]
llm: {{base_url: "{url}", model: fake-model, api_key_env: PROBE_KEY, cache: "{cache}",
       cache_path: "{tmp_path / 'cache.sqlite'}"{extra}}}
""")
    runs = tmp_path / f"runs-{name}"
    proc = run_cli("run", "--config", str(config), "--root", str(root), "--runs-dir", str(runs), "--quiet",
                   env={"PROBE_KEY": "k"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    jobs = list((only_run_dir(runs) / "jobs").iterdir())
    for job in jobs:
        record = json.loads((job / "results.json").read_text())
        assert record["status"] == "ok", record["error"]
    (job,) = [job for job in jobs if (job / "probe.json").exists()]
    record = json.loads((job / "results.json").read_text())
    return {**json.loads((job / "probe.json").read_text()), "after": json.loads((job / "after.json").read_text()),
            "cost_usd": record["cost_usd"], "tokens": (record["prompt_tokens"], record["completion_tokens"])}


def _at_start(loaded: dict[str, Any]) -> dict[str, Any]:  # the provider libraries, at the job's start
    return {name: loaded[name] for name in ("openai", "litellm")}


@pytest.mark.parametrize("mode", ["stub", "real"])
def test_provider_libraries_are_loaded_in_a_real_job_and_never_in_a_stub_job(tmp_path: Path, mode: str) -> None:
    with FakeLLMServer() as server:
        loaded = _run(tmp_path, mode, server.url)
    expected = mode == "real"
    assert _at_start(loaded) == {"openai": expected, "litellm": expected}


def test_a_real_run_whose_calls_and_prices_need_no_litellm_never_loads_it(tmp_path: Path) -> None:
    """Every role on an OpenAI-compatible endpoint and every model priced in the config: its jobs
    start with ``openai`` loaded, never import LiteLLM (its template's costliest import), and still
    price each call."""
    with FakeLLMServer() as server:
        loaded = _run(tmp_path, "real", server.url, name="priced",
                      extra=", prices: {fake-model: {input_per_mtok: 1000000, output_per_mtok: 2000000}}")
    assert _at_start(loaded) == {"openai": True, "litellm": False}
    assert _at_start(loaded["after"]) == {"openai": True, "litellm": False}
    prompt, completion = loaded["tokens"]
    assert prompt > 0 and loaded["cost_usd"] == pytest.approx(prompt * 1.0 + completion * 2.0)


def test_a_run_naming_a_reasoning_gym_task_forks_its_jobs_with_the_library_loaded(tmp_path: Path) -> None:
    """Each reasoning_gym job imported it (1 s of CPU, inside its wall time); the run's template
    now does, once.  A run without such a task does not load it."""
    with FakeLLMServer() as server:
        loaded = _run(tmp_path, "stub", server.url, tasks="probe, reasoning_gym:word_sorting", name="gym")
        assert loaded["reasoning_gym"] is True and loaded["litellm"] is False
        assert _run(tmp_path, "stub", server.url, name="plain")["reasoning_gym"] is False


def test_a_replayed_job_starts_with_the_provider_libraries_loaded(tmp_path: Path) -> None:
    """Before: a replay's template was the lean one, and each replayed job imported LiteLLM to price
    its answers (2.4 s of CPU a job)."""
    with FakeLLMServer() as server:
        _run(tmp_path, "real", server.url, cache="read_write", name="record")
        url = server.url
    loaded = _run(tmp_path, "real", url, cache="replay", name="replay")  # the provider is gone
    assert _at_start(loaded) == {"openai": True, "litellm": True}


def test_an_external_trainers_stub_job_starts_with_the_provider_libraries_loaded(tmp_path: Path) -> None:
    """Before: each OpenEvolve, GEPA or SkyDiscover stub job imported them (0.8-1 s of its wall time)."""
    with FakeLLMServer() as server:
        loaded = _run(tmp_path, "stub", server.url, trainer="{id: GEPATrainer, max_metric_calls: 2}")
    assert _at_start(loaded) == {"openai": True, "litellm": True} and loaded["dspy"] is False


def test_a_dspy_job_starts_with_dspy_loaded(tmp_path: Path) -> None:
    """``import dspy`` took 0.45-0.70 s of each DSPy job before its first call; the template of a run
    that names DSPyTrainer (here by its alias) imports it once.  Other external trainers' jobs do
    not load it."""
    with FakeLLMServer() as server:
        loaded = _run(tmp_path, "stub", server.url, name="dspy",
                      trainer="{id: DSPy, dspy_optimizer: COPRO, breadth: 2, depth: 1}")
    assert loaded["dspy"] is True and _at_start(loaded) == {"openai": True, "litellm": True}


def test_the_cli_peeks_at_the_config_text_for_the_template_it_starts(tmp_path: Path) -> None:
    from tests.conftest import REPO
    from trace_bench.runner.warm import FULL, LEAN, OPENAI, peek_provider_stack

    config = tmp_path / "c.yaml"
    priced = "prices: {m: {input_per_mtok: 1, output_per_mtok: 2}}"
    cases = {"mode: stub\ntrainers: [PrioritySearch]\n": LEAN,
             "mode: real\ntrainers: [PrioritySearch]\n": FULL,
             "mode: real\nllm: {cache: replay}\ntrainers: [PrioritySearch]\n": FULL,  # it prices each answer
             "trainers:\n  - id: openevolve\n    iterations: 2\n": FULL,  # an alias, any case
             "trainers:\n  - {id: SkyDiscover, search: evox}\n": FULL,
             "trainers: [my_module:MyTrainer]\n": LEAN,
             f"mode: real\nllm: {{base_url: 'http://127.0.0.1:9/v1', model: m, {priced}}}\n": OPENAI,
             # a role on another endpoint without a price, or sent by LiteLLM, or an external trainer
             f"mode: real\nllm: {{base_url: 'http://127.0.0.1:9/v1', model: m, {priced},\n"
             "  roles: {agent: {model: other}}}\n": FULL,
             f"mode: real\nllm: {{model: m, {priced}}}\n": FULL,
             f"mode: real\ntrainers: [GEPATrainer]\nllm: {{base_url: 'http://127.0.0.1:9/v1', model: m, {priced}}}\n": FULL,
             "mode: real\nllm: [not, a, mapping]\n": FULL,
             "mode: real\nllm: {base_url: 'http://127.0.0.1:9/v1', model: m, prices: {m: 3}}\n": FULL}
    for text, expected in cases.items():
        config.write_text(text)
        assert peek_provider_stack(config) == expected, text
    assert peek_provider_stack(REPO / "configs" / "discovery_arena.yaml") == FULL
    assert peek_provider_stack(tmp_path / "missing.yaml") == peek_provider_stack(None) == LEAN
    assert peek_provider_stack(None, replay=True) == FULL, "run --replay: the recorded run is real"
    # run --replay peeks at the recorded run's config: its jobs price every answer as it did
    config.write_text(f"mode: real\nllm: {{base_url: 'http://127.0.0.1:9/v1', model: m, {priced}}}\n")
    assert peek_provider_stack(config, replay=True) == OPENAI
    config.write_text("mode: real\nllm: {base_url: 'http://127.0.0.1:9/v1', model: m}\n")
    assert peek_provider_stack(config, replay=True) == FULL
    assert peek_provider_stack(tmp_path / "missing.yaml", replay=True) == FULL


def test_the_driver_picks_the_template_the_cli_peeked(tmp_path: Path) -> None:
    """The driver's choice from the validated config (the template of a run the CLI did not start)
    agrees with the CLI's peek."""
    from tests.conftest import REPO
    from trace_bench.config.loader import load_config
    from trace_bench.runner.warm import OPENAI, peek_provider_stack, preload_for, provider_stack

    config = tmp_path / "c.yaml"
    config.write_text("mode: real\ntasks: [internal:numeric_param]\ntrainers: [PrioritySearch]\n"
                      "llm: {api_base: 'http://127.0.0.1:9/v1', model: openai/m,\n"
                      "      prices: {m: {input_per_mtok: 1, output_per_mtok: 2}}}\n")
    assert provider_stack(load_config(config)) == OPENAI
    assert "reasoning_gym" not in preload_for(load_config(config))
    assert "reasoning_gym" in preload_for(load_config(REPO / "configs" / "paper_optoprime_vs_textgrad.yaml"))
    assert peek_provider_stack(config) in (OPENAI, "full")  # ``api_base``: the peek may only load more
