"""Start the local executor's job template as early as possible.

The template imports ``opto`` and the trainer stack (about a second) in its own process; starting
it is asynchronous and cheap, so ``run`` starts it before reading its config and the imports of
both processes overlap.  Nothing of a run happens in it until a job is submitted, after the run's
directory exists.
"""

from __future__ import annotations

#: What the local executor's job template imports once (see trace_bench/runner/template.py).
PRELOAD = ("trace_bench.runner.template",)


def start_job_template() -> None:
    from trace_bench.execution.local import warm_up

    warm_up(PRELOAD)
