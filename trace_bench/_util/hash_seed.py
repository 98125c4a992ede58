"""``run`` executes itself again with ``PYTHONHASHSEED=0`` so that its job template can be forked.

A job template forked from the driver (:mod:`trace_bench.execution.forked_template`) has the
driver's string-hash seed, and jobs need 0 (the spawned template's: ``opto`` builds prompts by
iterating sets).  The new program is the same command, in the same process, with the variable its
template and jobs always got.  Imports nothing beyond ``os`` and ``sys``: the interpreter that calls
it is thrown away (:mod:`trace_bench.cli.entry` calls it first thing).
"""

from __future__ import annotations

import os
import sys

#: ``0``: always spawn the job template (the standard forkserver), never fork it from the driver
FORK_SWITCH = "TRACE_BENCH_FORK_TEMPLATE"


def fix_hash_seed() -> None:
    """Execute this command again with ``PYTHONHASHSEED=0`` when it is unset; nothing where the
    template would not be forked anyway (no ``fork``, or ``TRACE_BENCH_FORK_TEMPLATE=0``)."""
    if ("PYTHONHASHSEED" in os.environ or os.environ.get(FORK_SWITCH, "1") == "0" or not sys.executable
            or not hasattr(os, "fork") or not sys.platform.startswith("linux")):
        return
    os.environ["PYTHONHASHSEED"] = "0"
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os.execv(sys.executable, [sys.executable, *sys.orig_argv[1:]])
