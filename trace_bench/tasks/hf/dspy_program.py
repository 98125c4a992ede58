"""The DSPy form of an hf task (eval_kwargs ``framework: dspy``), for DSPyTrainer.

The Trace agent stays the problem's ``param``, so the harness measures every state the same way
whichever trainer runs.  Next to it the problem offers a native DSPy program: one ``dspy.Predict``
named ``instruction`` whose signature instructions are the task's trainable instruction text.
DSPyTrainer binds the predictor to that parameter by name, lets DSPy's optimizers rewrite it, and
writes the result back into the Trace agent.  This module imports ``dspy``; it is imported only
when the dspy framework is asked for.
"""

from __future__ import annotations

from typing import Any

import dspy

_QUESTION = "the question; multiple-choice options, when any, are listed in it as (X) text"
_CONTEXT = "passages or a document the answer is drawn from"
_ANSWER = "the final answer only: a short span, a number, or an option as (X)"


def signature(instruction: str, *, with_context: bool) -> Any:
    fields: dict[str, Any] = {}
    if with_context:
        fields["context"] = dspy.InputField(desc=_CONTEXT)
    fields["question"] = dspy.InputField(desc=_QUESTION)
    fields["answer"] = dspy.OutputField(desc=_ANSWER)
    return dspy.Signature(fields, instruction)


class QAProgram(dspy.Module):
    """``program(question=..., [context=...])`` -> ``Prediction(answer=...)``; scored by the hf guide."""

    def __init__(self, instruction: str, *, with_context: bool) -> None:
        super().__init__()
        self.with_context = with_context
        self.instruction = dspy.Predict(signature(instruction, with_context=with_context))

    def forward(self, question: str, context: str = "") -> Any:
        if self.with_context:
            return self.instruction(question=question, context=context)
        return self.instruction(question=question)

    def to_examples(self, inputs: list[dict[str, str]], infos: list[Any]) -> list[Any]:
        """DSPy examples of the task inputs; gold answers stay with the guide (the metric uses it)."""
        names = ("context", "question") if self.with_context else ("question",)
        return [dspy.Example(**{name: x[name] for name in names}).with_inputs(*names) for x in inputs]


def build_program(instruction: str, *, with_context: bool) -> QAProgram:
    return QAProgram(instruction, with_context=with_context)
