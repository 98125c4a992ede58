"""The job template of a real run: the stub template plus the provider libraries.

Preloaded (after :mod:`trace_bench.runner.job.template`) only when the run is real, so stub runs keep
their lean template.  Everything imported here is frozen out of the collector's reach like the
rest of the template.
"""

from __future__ import annotations

import gc

import trace_bench.runner.job.template  # noqa: F401 - the template every job needs
from trace_bench._util.lazy import load
from trace_bench.llm.preload import preload_llm_stack

for _name in ("openai", "litellm"):  # the real modules in place of the deferred placeholders
    try:
        load(_name)
    except ImportError:  # pragma: no cover - core dependencies; a call that needs one says so
        pass
preload_llm_stack()
gc.collect()
gc.freeze()
