"""The hf suite's agent: one trainable instruction in front of one LLM call.

The instruction is the only parameter, so what an optimizer learns is a prompt that generalizes
across questions.  The frame around it (context, question, the request for a final ``Answer:``
line) is fixed: the guide relies on that line, and keeping it out of the parameter means a
candidate instruction cannot break scoring by dropping it.  The LLM is reached at call time through
the job's metered client, so stub mode, budgets and token accounting apply.
"""

from __future__ import annotations

from typing import Any

from opto import trace

from trace_bench.llm.current import get_llm

INITIAL_INSTRUCTIONS = {
    "hfqa": "Answer the question using the context.",
    "alias": "Answer the question using the context.",
    "bbeh": "Answer the question.",
    "gsm8k": "Solve the math word problem.",
    "mcqa": "Choose the correct option.",
    "yesno": "Answer the question with Yes or No.",
}

STUB_INSTRUCTIONS = {
    "hfqa": ("Find the paragraphs that mention the entities in the question, connect the facts across them "
             "step by step, and give the shortest span that answers the question.",
             "Answer with a short phrase copied from the context; do not explain."),
    "alias": ("Identify the facts needed from the context, reason over them step by step, and give only the "
              "final short answer (an entity, number or date) copied from the context.",
              "Give the answer as a short span from the context, without extra words."),
    "bbeh": ("Read the problem carefully, work through it step by step, check the result, and give the final "
             "answer in exactly the format the question asks for (an option as (X)).",
             "Think step by step; then state only the final answer."),
    "gsm8k": ("Solve the problem step by step, writing each intermediate quantity; end with the final number "
              "only, without units.",
              "Compute carefully and give only the final numeric answer."),
    "mcqa": ("Consider each option against the question and the context, eliminate wrong ones, and answer "
             "with the letter of the best option in the form (X).",
             "Pick the single best option and answer as (X)."),
    "yesno": ("Break the question into the facts it implicitly needs, check each, then answer Yes or No.",
              "Answer only Yes or No."),
}

_FRAME = "Reply with your reasoning if needed, then a final line of the form 'Answer: <your answer>'."


@trace.model
class QAAgent:
    """``forward({"question", "context"})`` -> the LLM's reply text (the guide extracts the answer)."""

    def __init__(self, instruction: str, max_tokens: int = 1024) -> None:
        self.instruction = trace.node(instruction, trainable=True, name="instruction",
                                      description="Instructions the agent follows for every question.")
        self.max_tokens = max_tokens

    def forward(self, task: Any) -> Any:
        return self.answer(self.instruction, task)

    @trace.bundle(catch_execution_error=False)
    def answer(self, instruction: str, task: dict[str, str]) -> str:
        """Ask the LLM the question under the current instruction and return its reply."""
        parts = []
        if task.get("context"):
            parts.append(f"Context:\n{task['context']}")
        parts.append(f"Question: {task['question']}")
        parts.append(_FRAME)
        reply = get_llm("agent")(
            messages=[{"role": "system", "content": str(instruction)},
                      {"role": "user", "content": "\n\n".join(parts)}],
            max_tokens=self.max_tokens,
        )
        return str(reply.choices[0].message.content or "")
