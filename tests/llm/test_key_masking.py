"""The API key never reaches the run directory, whatever the name of the variable that holds it.

A provider (or a proxy) that echoes the request's key into its answer puts it in the trainer's
state, and from there into state_history.jsonl, results and logs.  Masking by variable *name* only
catches names that look secret; the variable ``llm.api_key_env`` names is a secret by definition.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import only_run_dir, run_cli
from trace_bench.llm.fake_server import FakeLLMServer

#: no known key shape (``sk-...``) and held by a variable whose name does not look secret
KEY = "plainsecretvalue999xyz"
#: a short key, as a local server's may be
SHORT_KEY = "k3Yz9Q"

#: OptoPrime's answer format, proposing new code for code_param's trainable function
ANSWER = json.dumps({"reasoning": "double and add one", "answer": "",
                     "suggestion": {"__code1": "def transform(self, x):\n    return 2 * x + 1"}})


def _config(path: Path, url: str, variable: str) -> Path:
    path.write_text(f"""
mode: real
tasks: [internal:code_param]
trainers:
  - id: PrioritySearch
    ps_steps: 1
    ps_batches: 1
seeds: [1]
max_workers: 1
llm: {{base_url: "{url}", model: fake-model, api_key_env: {variable}, max_retries: 1,
      prices: {{fake-model: {{input_per_mtok: 0.5, output_per_mtok: 1.5}}}}}}
""", encoding="utf-8")
    return path


@pytest.mark.parametrize("key", [KEY, SHORT_KEY], ids=["long", "short"])
def test_a_key_echoed_by_the_provider_is_masked_everywhere_in_the_run(tmp_path: Path, key: str) -> None:
    """A key under 8 characters was left unmasked."""
    with FakeLLMServer(api_key=key, script=[ANSWER], echo_key=True) as server:
        config = _config(tmp_path / "c.yaml", server.url, "QA_LLM_CRED")
        proc = run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "r"),
                       env={"QA_LLM_CRED": key})
        stats = server.stats()
    assert proc.returncode == 0, proc.stderr
    assert stats["ok"] > 0
    run = only_run_dir(tmp_path / "r")
    history = "".join(p.read_text(encoding="utf-8") for p in run.glob("jobs/*/artifacts/state_history.jsonl"))
    assert "# seen: key=***" in history, "the echoed key reached the trainer's state (masked)"
    leaked = [str(p.relative_to(run)) for p in run.rglob("*")
              if p.is_file() and re.search(rf"(?<![\w-]){re.escape(key)}(?![\w-])",
                                           p.read_text(encoding="utf-8", errors="replace"))]
    assert leaked == []
    assert key not in proc.stdout + proc.stderr


def test_the_key_a_role_sends_without_a_named_variable_is_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """With no ``api_key_env``, a run sends ``OPENAI_API_KEY``'s value: a short one is masked too
    (the environment's values are masked by name only from 8 characters)."""
    from trace_bench._util.masking import MASK, mask_secrets
    from trace_bench.llm.credentials import register_keys

    monkeypatch.setenv("OPENAI_API_KEY", "w4Rp7")
    register_keys({"base_url": "http://127.0.0.1:9/v1", "model": "m"})
    assert mask_secrets("invalid key w4Rp7.") == f"invalid key {MASK}."
