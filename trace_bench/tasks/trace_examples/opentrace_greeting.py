"""trace_examples:opentrace_greeting: OpenTrace's multilingual greeting agent.

Two trainable instruction nodes and three trainable code blocks (decide the language, pull the
name out of the query, write the greeting).  The scorer only checks that the greeting is in the
language the example asks for, so the agent is already correct at the start: the task checks that
a trainer keeps a working multi-parameter agent working (the original suite's OpenTrace example).
"""

from __future__ import annotations

from typing import Any

from opto import trace

from trace_bench.tasks.guide import Guide

GREETING_WORD = {"es": "Hola", "en": "Hello"}


class LanguageGuide(Guide):
    """1 when the reply greets in the example's language (``reference`` is ``es`` or ``en``)."""

    def get_feedback(self, query: Any, response: Any, reference: Any = None, **kwargs: Any) -> tuple[float, str]:
        text = str(getattr(response, "data", response))
        wanted = GREETING_WORD.get(str(reference), "Hello")
        if wanted in text:
            return 1.0, "Correct"
        return 0.0, f"Expected a greeting in language={reference} (starting with {wanted!r}), got {text!r}"


@trace.model
class OpenTraceGreetingAgent:
    """``agent(query)`` -> "<greeting>, <name>!" in the query's language."""

    def __init__(self) -> None:
        self.instruct1 = trace.node("Decide the language", trainable=True, name="instruct1")
        self.instruct2 = trace.node("Extract name if present", trainable=True, name="instruct2")

    def forward(self, user_query: str) -> Any:
        language = self.decide_lang(self.instruct1, user_query)
        name = self.extract_name(self.instruct2, user_query)
        return self.greet(language, name)

    @trace.bundle(trainable=True)
    def decide_lang(self, instruction: str, user_query: str) -> str:
        """Return 'es' for a Spanish query, else 'en'."""
        words = str(user_query).lower().replace(",", " ").split()
        return "es" if {"hola", "soy", "me", "llamo"} & set(words) else "en"

    @trace.bundle(trainable=True)
    def extract_name(self, instruction: str, user_query: str) -> str:
        """Return the name the user gives ('... soy X', '... I am X'), else the last word."""
        text = str(user_query).strip().rstrip(".!?")
        lowered = text.lower()
        for marker in ("soy ", "i am ", "me llamo "):
            at = lowered.rfind(marker)
            if at >= 0:
                return text[at + len(marker):].strip()
        words = text.split()
        return words[-1] if words else "Friend"

    @trace.bundle(trainable=True)
    def greet(self, language: str, user_name: str) -> str:
        """Greet the user by name in the given language."""
        word = "Hola" if str(language).lower() == "es" else "Hello"
        return f"{word}, {user_name}!"


def build_trace_problem(**eval_kwargs: Any) -> dict[str, Any]:
    return {
        "param": OpenTraceGreetingAgent(),
        "guide": LanguageGuide(),
        "train_dataset": {"inputs": ["Hola, soy Juan.", "Hello, I am Sam."], "infos": ["es", "en"]},
        "optimizer_kwargs": {"objective": "Produce a correctly localized greeting from the user query.",
                             "memory_size": 5},
        "metadata": {"benchmark": "trace_examples", "entry": "OpenTraceGreetingAgent",
                     "optimizes": "two instruction texts and three code blocks",
                     "scoring": "1 if the greeting is in the query's language"},
        "stub_candidates": [{"instruct1": "Decide the language of the query (es or en)"},
                            {"instruct2": "Extract the user's name from the query"}],
    }
