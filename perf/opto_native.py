"""Cost of finding opto's own trainers (OpenTrace 0.2.x): static discovery vs importing opto.trainer.

Usage: ``python perf/opto_native.py [OPENTRACE_CHECKOUT]``.  With a checkout, its ``opto`` is put
first on the path (as an editable install would); without one, the installed ``opto`` is used (on
trace-opt 0.1.3.8 there is no ``opto.trainer``, so discovery finds nothing and costs a lookup).
Figures: what ``list-trainers`` pays (exports read, trainer classes made), what a config that uses a
native trainer pays once (its knobs, read from the class and its bases), and, for comparison, a
fresh process importing ``opto.trainer.algorithms`` (what import-based discovery would cost).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time

from _util import python, report

CODE = """
import statistics, sys, time
from trace_bench.registry import trainers as registry
from trace_bench.trainers.opto_native import adapter, discovery
import trace_bench.trainers.opto_search.priority_search  # loaded by listing anyway (knob aliases)
listing, knobs = [], []
for _ in range(15):
    discovery.clear_caches()
    adapter._params_model.cache_clear()
    start = time.perf_counter()
    found = registry._opto_native({})
    middle = time.perf_counter()
    for info in found.values():
        info.cls.Params
    listing.append(middle - start)
    knobs.append(time.perf_counter() - middle)
print(len(found), statistics.median(listing), statistics.median(knobs), "opto.trainer" in sys.modules)
"""


def main() -> None:
    env = dict(os.environ)
    if len(sys.argv) > 1:
        env["PYTHONPATH"] = os.pathsep.join([sys.argv[1], env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    out = subprocess.run([python(), "-c", CODE], env=env, capture_output=True, text=True, check=True).stdout.split()
    count, listing, knobs, imported = int(out[0]), float(out[1]), float(out[2]), out[3] == "True"
    report(f"native trainers found ({'opto imported!' if imported else 'opto not imported'})", count, "")
    report("list-trainers: discovery + classes, median of 15", listing * 1e3, "ms")
    report("knobs of every native trainer, median of 15", knobs * 1e3, "ms")
    times = []
    for _ in range(3):
        start = time.perf_counter()
        done = subprocess.run([python(), "-c", "import opto.trainer.algorithms"], env=env, capture_output=True)
        times.append(time.perf_counter() - start)
    if done.returncode == 0:
        report("fresh process importing opto.trainer.algorithms", statistics.median(times), "s")
    else:
        print("opto.trainer.algorithms is not importable here (trace-opt 0.1.3.8)")


if __name__ == "__main__":
    main()
