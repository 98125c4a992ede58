"""trace_examples:greeting_stub: the Trace greeting agent (a trainable greeting and compose code)."""

from __future__ import annotations

from typing import Any

from opto import trace

from trace_bench.tasks.guide import Guide


class ExactMatchGuide(Guide):
    def get_feedback(self, query: Any, response: Any, reference: Any = None, **kwargs: Any) -> tuple[float, str]:
        if response == reference:
            return 1.0, "Correct"
        return 0.0, f"Expected: {reference!r}, got {response!r}"


@trace.model
class GreetingAgent:
    def __init__(self, greeting: str = "Hi") -> None:
        self.greeting = trace.node(greeting, name="greeting", trainable=True, description="The greeting word.")

    def forward(self, user_query: str) -> Any:
        name = user_query.split()[-1].strip("!.?")
        return self.compose(self.greeting, name)

    @trace.bundle(trainable=True)
    def compose(self, greeting: str, name: str) -> str:
        """Combine the greeting and the user's name."""
        return f"{greeting}, {name}!"


_PARTLY_RIGHT_COMPOSE = (
    "def compose(self, greeting, name):\n"
    "    if name.startswith(\"S\"):\n"
    "        return f\"Hello, {name}!\"\n"
    "    return f\"{greeting}, {name}!\"\n"
)


def build_trace_problem(**eval_kwargs: Any) -> dict[str, Any]:
    return {
        "param": GreetingAgent(eval_kwargs.get("initial_greeting", "Hi")),
        "guide": ExactMatchGuide(),
        "train_dataset": {"inputs": ["Hello I am Sam", "Hello I am Ana"], "infos": ["Hello, Sam!", "Hello, Ana!"]},
        "optimizer_kwargs": {"objective": "Generate a correct greeting using the name from the query.",
                             "memory_size": 5},
        "metadata": {"benchmark": "trace_examples", "optimizes": "greeting text and compose code",
                     "scoring": "exact match"},
        "score_range": [0.0, 1.0],
        # wrong greetings, and a compose that greets only some names right (1 of the 2 examples)
        "stub_candidates": [{"greeting": "Hey"}, {"greeting": "Hello there"}, _PARTLY_RIGHT_COMPOSE],
    }
