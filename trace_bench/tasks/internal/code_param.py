"""internal:code_param: rewrite a trainable Python function to match input/output examples."""

from __future__ import annotations

from typing import Any

from opto import trace

from trace_bench.tasks.guide import Guide


class ExampleGuide(Guide):
    def get_feedback(self, query: Any, response: Any, reference: Any = None, **kwargs: Any) -> tuple[float, str]:
        if response == reference:
            return 1.0, f"Correct: transform({query}) = {response}."
        return 0.0, f"transform({query}) returned {response!r}, expected {reference!r}."


@trace.model
class CodeAgent:
    @trace.bundle(trainable=True)
    def transform(self, x: int) -> int:
        """Map an integer to the expected output."""
        return x

    def forward(self, x: Any) -> Any:
        return self.transform(x)


def build_trace_problem(**eval_kwargs: Any) -> dict[str, Any]:
    inputs = [0, 1, 2, 5, 10]
    infos = [2 * x + 1 for x in inputs]
    return {
        "param": CodeAgent(),
        "guide": ExampleGuide(),
        "train_dataset": {"inputs": inputs[:3], "infos": infos[:3]},
        "validate_dataset": {"inputs": inputs, "infos": infos},
        # held out: x = 0 is here too, as in validation, so no modulus the stub tries solves the test
        # split either (with 3, 7 and 100 only, `2 * x + 1 if x % 6 else x` scored 1.0 on it)
        "test_dataset": {"inputs": [0, 3, 7, 100], "infos": [1, 7, 15, 201]},
        "optimizer_kwargs": {"objective": "Change the code so transform(x) returns the expected output.",
                             "memory_size": 5},
        "metadata": {"benchmark": "internal", "optimizes": "python code", "scoring": "exact match rate"},
        "score_range": [0.0, 1.0],
        # partly right programs (0, 1, 2 and 3 of 5 validation examples); changing the modulus of the
        # last two gets them to 4 of 5 in a few steps, so search and keeping the best matter, but no
        # change of a literal fixes x = 0 (x % k is 0 there): the stub never reaches the optimum
        "stub_candidates": [
            "def transform(self, x):\n    return 2 * x\n",
            "def transform(self, x):\n    return x + 1\n",
            "def transform(self, x):\n    return 2 * x + 1 if x % 5 else 2 * x\n",
            "def transform(self, x):\n    return 2 * x + 1 if x % 10 else x\n",
        ],
    }
