"""The job template of a real run whose calls and prices need no LiteLLM (see
:func:`trace_bench.llm.providers.calls_without_litellm`): the stub template plus ``openai``.

LiteLLM's import is most of a full real template's cost (1.6 of its 3 s of CPU on a 2-core machine);
such a run's jobs never load it, and each still starts with the OpenAI client warm.
"""

from __future__ import annotations

import gc

import trace_bench.runner.job.template  # noqa: F401 - the template every job needs
from trace_bench._util.lazy import load
from trace_bench.llm.preload import preload_llm_stack

try:
    load("openai")  # the real module in place of the deferred placeholder
except ImportError:  # pragma: no cover - a core dependency; a call that needs it says so
    pass
preload_llm_stack(litellm=False)
gc.collect()
gc.freeze()
