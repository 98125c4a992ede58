"""internal:* tasks: small, fast problems that exercise every part of the harness."""

from __future__ import annotations

from trace_bench.tasks.spec import TaskSpec

SUITE = "internal"
_M = "trace_bench.tasks.internal"

_TASKS = (
    ("numeric_param", "numeric_param", "Move one trainable float to a target.", ("numeric", "code"), "-|output - 3|"),
    ("code_param", "code_param", "Rewrite a trainable function to match examples.", ("code",), "exact-match rate"),
    ("multi_param", "multi_param", "Two trainable floats whose sum must reach 3.", ("numeric",), "-|a + b - 3|"),
    ("non_trainable", "non_trainable", "No trainable parameters: expected to fail.", (), "n/a"),
    ("multiobjective_convex", "multiobjective_convex", "Six-Hump-Camel point with an L2 penalty (2 objectives).",
     ("text",), "weighted -(f + penalty)"),
    ("multiobjective_bbeh", "multiobjective_bbeh", "PAL program for boolean expressions: accuracy and CPU time.",
     ("code",), "weighted accuracy - 0.3 x CPU seconds (sandboxed)"),
    ("multiobjective_gsm8k", "multiobjective_gsm8k", "Math solver system prompt: error, input and output tokens.",
     ("text",), "weighted -(error + 1e-3 x tokens)"),
)


# Tasks that run LLM-written code: a trainable function (a code node) or a program run by the guide.
_SANDBOXED = {"numeric_param", "code_param", "multiobjective_bbeh"}


def discover() -> list[TaskSpec]:
    return [
        TaskSpec(id=f"{SUITE}:{name}", suite=SUITE, description=desc, module=f"{_M}.{module}",
                 parameter_kinds=kinds, scoring=scoring, tags=("sandbox",) if name in _SANDBOXED else ())
        for name, module, desc, kinds, scoring in _TASKS
    ]
