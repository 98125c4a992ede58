"""The sandbox target for evaluators that use the ``openai`` client (a prompt folder's): the same
:func:`~.sandboxed.run_program`, from a module that imports ``openai`` at its top, so the sandbox's
zygote loads it once per job and every evaluation forks with it loaded (importing it costs about a
second, which every evaluation, a fresh process each, would otherwise pay again)."""

from __future__ import annotations

import contextlib

from trace_bench.tasks.discovery.sandboxed import run_program

with contextlib.suppress(ImportError):
    import openai  # noqa: F401 - loaded once in the zygote, see above

__all__ = ["run_program"]
