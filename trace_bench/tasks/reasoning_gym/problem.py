"""Building one reasoning_gym problem: seeded items -> disjoint splits -> agent and verifier guide.

The agent is a trainable instruction in front of one LLM call.  The problem text already states
its output format (reasoning-gym writes it into every question); the fixed frame only asks for the
final ``Answer:`` line the guide looks for, so no candidate instruction can make an answer
unfindable by dropping it.  The LLM is reached at call time through the job's metered client.

Eval kwargs (all optional): ``seed`` (0), ``num_train`` (8), ``num_validate`` (8), ``num_test``
(16), ``dataset_config`` (generator options merged over the task's defaults, e.g.
``{"difficulty": ...}``), ``initial_instructions``, ``max_tokens``.

reasoning-gym derives item ``i`` from ``seed + i``, so neighbouring seeds would share most items;
the generator seed is therefore a hash of (task, seed).  Items are taken in index order and a
question already taken is skipped, so the three splits never share a question.
"""

from __future__ import annotations

import hashlib
from typing import Any

from opto import trace

from trace_bench.llm.current import get_llm
from trace_bench.tasks.reasoning_gym.catalog import TASKS

INITIAL_INSTRUCTION = "Solve the problem."

STUB_INSTRUCTIONS = (
    "Restate what is asked, solve the problem step by step, verify the result against every condition, "
    "and give the final answer in exactly the format the problem requests.",
    "Work carefully and check each step; the final answer must follow the requested format exactly.",
    "Think step by step. Keep the final answer short and in the requested format.",
)

_FRAME = {
    False: "Reason as needed, then end with a final line 'Answer: <final answer>'.",
    True: "Reason as needed, then write 'Answer:' on its own line and the final answer below it.",
}


@trace.model
class ReasoningAgent:
    """``forward(question)`` -> the LLM's reply text (the guide extracts the final answer)."""

    def __init__(self, instruction: str = INITIAL_INSTRUCTION, *, multiline: bool = False,
                 max_tokens: int = 2048) -> None:
        self.instruction = trace.node(instruction, trainable=True, name="instruction",
                                      description="Instructions the agent follows for every problem.")
        self.multiline = multiline
        self.max_tokens = max_tokens

    def forward(self, question: Any) -> Any:
        return self.solve(self.instruction, question)

    @trace.bundle(catch_execution_error=False)
    def solve(self, instruction: str, question: str) -> str:
        """Ask the LLM to solve the problem under the current instruction; return its reply."""
        reply = get_llm("agent")(
            messages=[{"role": "system", "content": str(instruction)},
                      {"role": "user", "content": f"{question}\n\n{_FRAME[self.multiline]}"}],
            max_tokens=self.max_tokens,
        )
        return str(reply.choices[0].message.content or "")


DEFAULT_SIZES = {"train": 8, "validate": 8, "test": 16}
_OBJECTIVE = (
    "Improve the instruction (#Variables: instruction) that an LLM agent follows to solve {what} problems. "
    "Each reply is scored by reasoning-gym's exact verifier on the final answer (the text after 'Answer:'). "
    "Write instructions that generalize across problems, guided by the feedback on individual examples."
)


def generator_seed(name: str, seed: int) -> int:
    digest = hashlib.sha256(f"trace-bench|reasoning_gym|{name}|{seed}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def _size(eval_kwargs: dict[str, Any], part: str) -> int:
    value = eval_kwargs.get(f"num_{part}", DEFAULT_SIZES[part])
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"eval_kwargs.num_{part} must be a non-negative integer, got {value!r}")
    return value


def make_splits(dataset: Any, sizes: dict[str, int]) -> dict[str, list[dict[str, Any]]]:
    """Consecutive unique items per split; raises when the generator cannot supply enough."""
    wanted = sum(sizes.values())
    seen: set[str] = set()
    items: list[dict[str, Any]] = []
    for index in range(len(dataset)):
        entry = dataset[index]
        if entry["question"] in seen:
            continue
        seen.add(entry["question"])
        items.append(entry)
        if len(items) == wanted:
            break
    if len(items) < wanted:
        raise ValueError(f"the generator produced only {len(items)} distinct items, {wanted} were asked for")
    splits, start = {}, 0
    for part in ("train", "validate", "test"):
        splits[part] = items[start:start + sizes[part]]
        start += sizes[part]
    return splits


def _dataset(entries: list[dict[str, Any]]) -> dict[str, list[Any]]:
    return {"inputs": [entry["question"] for entry in entries], "infos": entries}


def build_trace_problem(task_id: str = "reasoning_gym:word_sorting", **eval_kwargs: Any) -> dict[str, Any]:
    import reasoning_gym

    from trace_bench.tasks.reasoning_gym.guide import VerifierGuide

    name = task_id.split(":", 1)[-1]
    task = TASKS.get(name)
    if task is None:
        raise ValueError(f"unknown reasoning_gym task '{name}' (known: {', '.join(TASKS)})")
    seed = int(eval_kwargs.get("seed", 0))
    sizes = {part: _size(eval_kwargs, part) for part in DEFAULT_SIZES}
    if sizes["train"] == 0:
        raise ValueError("eval_kwargs.num_train must be at least 1")
    config = {**task.config, **dict(eval_kwargs.get("dataset_config") or {})}
    rg_seed = generator_seed(name, seed)
    pool = 2 * sum(sizes.values()) + 8  # room to skip repeated questions
    dataset = reasoning_gym.create_dataset(name, seed=rg_seed, size=pool, **config)
    splits = make_splits(dataset, sizes)
    agent = ReasoningAgent(str(eval_kwargs.get("initial_instructions") or INITIAL_INSTRUCTION),
                           multiline=task.multiline, max_tokens=int(eval_kwargs.get("max_tokens", 2048)))
    problem: dict[str, Any] = {
        "param": agent,
        "guide": VerifierGuide(dataset, multiline=task.multiline),
        "train_dataset": _dataset(splits["train"]),
        "optimizer_kwargs": {"objective": _OBJECTIVE.format(what=task.description), "memory_size": 10},
        "metadata": {
            "benchmark": "reasoning_gym", "task": f"reasoning_gym:{name}", "dataset": name,
            "dataset_config": config, "seed": seed, "generator_seed": rg_seed,
            "sizes": {part: len(items) for part, items in splits.items()},
            "optimizes": "the agent's instruction text (trainable node 'instruction')",
            "scoring": "reasoning-gym score_answer on the extracted final answer (1.0 = correct; some "
                       "verifiers give small partial credit for a well-formed wrong answer)",
            "failure_score": 0.0,
        },
        "score_range": [0.0, 1.0],
        "stub_candidates": [{"instruction": text} for text in STUB_INSTRUCTIONS],
    }
    if splits["validate"]:
        problem["validate_dataset"] = _dataset(splits["validate"])
    if splits["test"]:
        problem["test_dataset"] = _dataset(splits["test"])
    # what the stub agent may know, as well as its instruction lets it (trace_bench.llm.stub_agent)
    problem["stub_answers"] = {str(e["question"]): str(e["answer"]) for part in splits.values() for e in part}
    return problem
