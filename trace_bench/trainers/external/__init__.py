"""Adapters for optimizer libraries that bring their own loop and their own LLM client.

DSPy, TextGrad, OpenEvolve and gepa each run their own algorithm; trace-bench hands them the
task (through its guide, so scores are the task's own) and points their LLM clients at the job's
loopback gateway (:mod:`trace_bench.llm.gateway`), so their calls are metered, budgeted and
stubbed exactly like built-in trainers'.  Shared plumbing lives in :mod:`.bridge`.
"""
