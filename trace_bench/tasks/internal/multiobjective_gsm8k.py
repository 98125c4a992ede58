"""internal:multiobjective_gsm8k: a math-solving system prompt judged on errors and tokens spent.

The trainable parameter is the system prompt of a one-call solver.  Three objectives, all
minimized: ``error`` (0 when the final number matches, else 1), ``tokens_in`` and ``tokens_out``
(the solver call's prompt and completion tokens, as the job's metered client counted them).  The
agent remembers the usage of its last call per thread; the guide reads it right after the call
that produced the response (both run in the same thread, see ``trainers.evaluate``).

Rows: ``eval_kwargs.data_files`` (GSM8K rows, as for ``hf:gsm8k``), else the hub's ``openai/gsm8k``
when it can be read (online, or cached offline), else ten built-in problems
(:mod:`.gsm8k_examples`); ``metadata.data_source`` says which.  Eval kwargs: ``n_train`` (10),
``seed`` (42), ``objective_mode`` (``weighted``/``pareto``), ``max_tokens`` (512).
"""

from __future__ import annotations

import random
import re
import threading
from typing import Any

from opto import trace

from trace_bench.llm.current import get_llm
from trace_bench.tasks.guide import Guide
from trace_bench.tasks.objectives import ObjectiveConfig

INITIAL_PROMPT = ("You are a math problem solver. Solve the problem step by step. "
                  "End your answer with #### followed by the final numeric answer.")
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:/\d+)?")
_LAST_CALL = threading.local()


def final_number(text: Any) -> str | None:
    """The number after ``####`` when present, else the last number of the text; commas dropped,
    and "18.0" written "18"."""
    text = "" if text is None else str(text)
    marker = text.rfind("####")
    found = _NUMBER.findall(text[marker:]) if marker >= 0 else []
    found = found[:1] if found else _NUMBER.findall(text)[-1:]
    if not found:
        return None
    number = found[0].replace(",", "")
    if re.fullmatch(r"-?\d+\.0+", number):
        number = number.split(".")[0]
    return number


def last_usage() -> tuple[int, int]:
    """(prompt tokens, completion tokens) of this thread's last solver call."""
    return getattr(_LAST_CALL, "usage", (0, 0))


@trace.model
class PromptedSolver:
    """``solver(question)`` -> the LLM's worked solution under the trainable system prompt."""

    def __init__(self, system_prompt: str = INITIAL_PROMPT, max_tokens: int = 512) -> None:
        self.system_prompt = trace.node(system_prompt, trainable=True, name="system_prompt",
                                        description="System prompt of the math solver.")
        self.max_tokens = max_tokens

    def forward(self, question: Any) -> Any:
        return self.solve(self.system_prompt, question)

    @trace.bundle(catch_execution_error=False)
    def solve(self, system_prompt: str, question: str) -> str:
        """Ask the LLM to solve the question under the system prompt."""
        reply = get_llm("agent")(messages=[{"role": "system", "content": str(system_prompt)},
                                           {"role": "user", "content": str(question)}],
                                 max_tokens=self.max_tokens)
        usage = getattr(reply, "usage", None)
        _LAST_CALL.usage = (int(getattr(usage, "prompt_tokens", 0) or 0),
                            int(getattr(usage, "completion_tokens", 0) or 0))
        return str(reply.choices[0].message.content or "")


class TokenAwareMathGuide(Guide):
    """Correctness of the final number, plus the tokens of the call that produced the reply."""

    def _error(self, response: Any, reference: Any) -> tuple[float, str | None, str | None]:
        predicted, gold = final_number(response), final_number(reference)
        wrong = predicted is None or gold is None or predicted != gold
        return float(wrong), predicted, gold

    def get_feedback(self, query: Any, response: Any, reference: Any = None, **kwargs: Any) -> tuple[float, str]:
        error, predicted, gold = self._error(response, reference)
        tokens_in, tokens_out = last_usage()
        return -error, f"expected={gold} predicted={predicted} tokens_in={tokens_in} tokens_out={tokens_out}"

    def get_score_dict(self, query: Any, response: Any, reference: Any = None, **kwargs: Any) -> dict[str, float]:
        error, _, _ = self._error(response, reference)
        tokens_in, tokens_out = last_usage()
        return {"error": error, "tokens_in": float(tokens_in), "tokens_out": float(tokens_out)}


def load_rows(n_train: int, seed: int, eval_kwargs: dict[str, Any]) -> tuple[list[dict[str, str]], str]:
    from trace_bench.availability import missing_packages
    from trace_bench.tasks.hf.catalog import DATASETS, cache_reason

    entry = DATASETS["gsm8k"]
    data_files = eval_kwargs.get("data_files")
    rows: list[dict[str, str]] | None = None
    source = ""
    if data_files or (not missing_packages("datasets") and cache_reason(entry) is None):
        from trace_bench.tasks.hf.loading import DataUnavailable, load_split

        try:
            split = load_split(entry, "train", task="internal:multiobjective_gsm8k", data_files=data_files,
                               cache_dir=eval_kwargs.get("cache_dir"))
            rows = [{"question": str(r["question"]), "answer": str(r["answer"])} for r in split]
            source = "local files" if data_files else f"huggingface hub ({entry.dataset_id})"
        except DataUnavailable:
            if data_files:
                raise
    if rows is None:
        from trace_bench.tasks.internal.gsm8k_examples import EXAMPLES

        rows, source = [dict(r) for r in EXAMPLES], "built-in problems (not GSM8K items)"
    order = list(range(len(rows)))
    random.Random(f"mo-gsm8k|{seed}").shuffle(order)
    return [rows[i] for i in order[:n_train]], source


def build_trace_problem(**eval_kwargs: Any) -> dict[str, Any]:
    if eval_kwargs.get("model"):
        raise ValueError("eval_kwargs.model is not used here: the solver calls the job's agent model; "
                         "set llm.roles.agent.model (or llm.model) in the config instead")
    n_train, seed = int(eval_kwargs.get("n_train", 10)), int(eval_kwargs.get("seed", 42))
    mode = str(eval_kwargs.get("objective_mode", "weighted"))
    rows, source = load_rows(n_train, seed, eval_kwargs)
    return {
        "param": PromptedSolver(max_tokens=int(eval_kwargs.get("max_tokens", 512))),
        "guide": TokenAwareMathGuide(),
        "train_dataset": {"inputs": [r["question"] for r in rows], "infos": [r["answer"] for r in rows]},
        "optimizer_kwargs": {"objective": "Improve the system prompt to solve math word problems accurately "
                                          "and concisely. End with #### <number>.", "memory_size": 10},
        "objective_config": ObjectiveConfig(mode=mode, weights={"error": 1.0, "tokens_in": 1e-3, "tokens_out": 1e-3},
                                            minimize=frozenset({"error", "tokens_in", "tokens_out"}), seed=seed),
        "metadata": {"benchmark": "multiobjective", "entry": "gsm8k", "objective_mode": mode, "n_train": len(rows),
                     "data_source": source, "objectives": ["error", "tokens_in", "tokens_out"],
                     "optimizes": "the solver's system prompt (text)",
                     "scoring": "error (0/1), prompt and completion tokens; all minimized", "failure_score": -1.0},
        "stub_candidates": [{"system_prompt": "Solve step by step, briefly. Finish with '#### <number>'."},
                            {"system_prompt": "Give only the final line '#### <number>'."}],
        # what the stub agent may know, as well as its system prompt lets it (trace_bench.llm.stub_agent)
        "stub_answers": {r["question"]: final_number(r["answer"]) or "" for r in rows},
    }
