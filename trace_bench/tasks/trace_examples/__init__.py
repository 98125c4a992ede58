"""trace_examples:* tasks: the Trace tutorial agents (greeting, single node)."""

from __future__ import annotations

from trace_bench.tasks.spec import TaskSpec

SUITE = "trace_examples"


def discover() -> list[TaskSpec]:
    return [
        TaskSpec(id="trace_examples:greeting_stub", suite=SUITE, module="trace_bench.tasks.trace_examples.greeting_stub",
                 description="Greeting agent: trainable greeting text and compose code.",
                 parameter_kinds=("text", "code"), scoring="exact match"),
        TaskSpec(id="trace_examples:train_single_node_stub", suite=SUITE,
                 module="trace_bench.tasks.trace_examples.train_single_node_stub",
                 description="A single trainable integer guessed towards 3.", parameter_kinds=("numeric",),
                 scoring="-|guess - 3|"),
    ]
