"""Deferred heavy imports: placeholders load the real module on first use, stand-ins work."""

from __future__ import annotations

import subprocess
import sys


def test_stand_in_of_a_deferred_module_loads_the_real_one() -> None:
    code = (
        "import sys\n"
        "from trace_bench._util.lazy import defer, is_loaded\n"
        "defer('openai', 'black')\n"
        "import openai, black\n"
        "from black import format_str, FileMode\n"
        "assert not is_loaded('openai') and not is_loaded('black')\n"
        "client = openai.OpenAI(api_key='x', base_url='http://127.0.0.1:9/v1')\n"
        "assert type(client).__name__ == 'OpenAI' and is_loaded('openai')\n"
        "assert format_str('x=1', mode=FileMode()) == 'x = 1\\n' and is_loaded('black')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr


def test_optoprime_keeps_suggestions_black_cannot_format() -> None:
    """A Lean proof contains ``def`` but is not Python: the suggestion must not be dropped."""
    code = (
        "from trace_bench._util.runtime import configure_environment\n"
        "configure_environment()\n"
        "import json\n"
        "from opto import trace\n"
        "from opto.optimizers import OptoPrime\n"
        "from trace_bench.llm.types import ChatResponse, Usage\n"
        "lean = 'def add (a b : Nat) : Nat := a + b\\ntheorem t : add 1 1 = 2 := by rfl'\n"
        "x = trace.node('def f := sorry', name='proof', trainable=True)\n"
        "class LLM:\n"
        "    def __call__(self, *a, **k):\n"
        "        return ChatResponse.from_texts([json.dumps({'suggestion': {x.py_name: lean}})], Usage(), 'm')\n"
        "opt = OptoPrime([x], llm=LLM())\n"
        "opt.zero_feedback(); opt.backward(x, 'prove it')\n"
        "update = opt.propose()\n"
        "assert list(update.values()) == [lean], update\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
