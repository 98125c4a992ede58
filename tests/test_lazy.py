"""Deferred heavy imports: placeholders load the real module on first use, stand-ins work."""

from __future__ import annotations

import subprocess
import sys


def test_stand_in_of_a_deferred_module_loads_the_real_one() -> None:
    code = (
        "import sys\n"
        "from trace_bench._lazy import defer, is_loaded\n"
        "defer('openai', 'black')\n"
        "import openai, black\n"
        "from black import format_str, FileMode\n"
        "assert not is_loaded('openai') and not is_loaded('black')\n"
        "client = openai.OpenAI(api_key='x', base_url='http://127.0.0.1:9/v1')\n"
        "assert type(client).__name__ == 'OpenAI' and is_loaded('openai')\n"
        "assert format_str('x=1', mode=FileMode()) == 'x = 1\\n' and is_loaded('black')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
