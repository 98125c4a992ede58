"""trace_examples:* tasks: the Trace tutorial agents (greeting, single node), in two forms each:
the ``*_stub`` ones of the original suite's stub smoke runs and the ``opentrace_*`` ones that
follow OpenTrace's own examples (more parameters, code blocks included)."""

from __future__ import annotations

from trace_bench.tasks.spec import TaskSpec

SUITE = "trace_examples"


def discover() -> list[TaskSpec]:
    return [
        TaskSpec(id="trace_examples:greeting_stub", suite=SUITE, module="trace_bench.tasks.trace_examples.greeting_stub",
                 description="Greeting agent: trainable greeting text and compose code.",
                 parameter_kinds=("text", "code"), scoring="exact match", tags=("sandbox",)),
        TaskSpec(id="trace_examples:train_single_node_stub", suite=SUITE,
                 module="trace_bench.tasks.trace_examples.train_single_node_stub",
                 description="A single trainable integer guessed towards 3.", parameter_kinds=("numeric",),
                 scoring="-|guess - 3|"),
        TaskSpec(id="trace_examples:opentrace_greeting", suite=SUITE,
                 module="trace_bench.tasks.trace_examples.opentrace_greeting",
                 description="OpenTrace greeting agent: two instruction texts and three code blocks (es/en).",
                 parameter_kinds=("text", "code"), scoring="greeting in the query's language (0/1)",
                 tags=("sandbox",)),
        TaskSpec(id="trace_examples:opentrace_train_single_node", suite=SUITE,
                 module="trace_bench.tasks.trace_examples.opentrace_train_single_node",
                 description="OpenTrace single node: an integer (and its emit code) towards a hidden 3.",
                 parameter_kinds=("numeric", "code"), scoring="-|value - target|", tags=("sandbox",)),
    ]
