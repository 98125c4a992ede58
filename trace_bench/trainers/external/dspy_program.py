"""The DSPy programs DSPyTrainer optimizes, and the metric that scores them with the task's guide.

Two shapes (see ``docs/external.md``):

- **Parameter program** (any task): one predictor per trainable parameter whose *instruction is
  the parameter's value*.  Its ``forward`` applies the instructions as a state, runs the task's
  own agent and guide through the harness, and records a DSPy trace entry per predictor, so DSPy's
  instruction proposers (COPRO, MIPROv2, SIMBA rules, GEPA reflection) see real inputs, outputs and
  feedback.  Demonstrations cannot change a Trace agent, so they are not used in this shape.
- **Native program**: the problem offers ``dspy_program`` (a ``dspy.Module``); its predictors'
  instructions are bound to trainable ``str`` parameters of the same name (or the only one), its
  LM calls go through the gateway as the *agent* role, and the guide scores its predictions.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from trace_bench.trainers.context import TrainerContext
from trace_bench.trainers.external.bridge import StepTracker, TextParameter, failure_score, state_from_texts
from trace_bench.trainers.state import State

INPUT_FIELD = "task_input"
OUTPUT_FIELD = "agent_output"
INDEX_FIELD = "example_id"


def make_examples(dataset: dict[str, list[Any]]) -> list[Any]:
    import dspy

    examples = []
    for index, x in enumerate(dataset["inputs"]):
        examples.append(dspy.Example(**{INPUT_FIELD: str(x), INDEX_FIELD: index}).with_inputs(INPUT_FIELD))
    return examples


def parameter_program(ctx: TrainerContext, parameters: list[TextParameter], base: State,
                      dataset_of: Callable[[Any], tuple[Any, Any]], tracker: StepTracker,
                      check: Callable[[], None]) -> Any:
    """A ``dspy.Module`` with one instruction-carrying predictor per parameter (see module doc)."""
    import dspy

    lock = threading.Lock()

    class ParameterPredictor(dspy.Predict):
        """A predictor whose instruction is a task parameter's value; it never calls an LM itself."""

        def record(self, text: str, output: str) -> Any:
            return self._forward_postprocess([{OUTPUT_FIELD: output}], self.signature, **{INPUT_FIELD: text})

    class ParameterProgram(dspy.Module):
        def __init__(self) -> None:
            super().__init__()
            self.names: list[tuple[str, str]] = []
            for parameter in parameters:
                signature = dspy.Signature(
                    {INPUT_FIELD: dspy.InputField(desc="the task input given to the agent"),
                     OUTPUT_FIELD: dspy.OutputField(desc="what the agent produced with this instruction")},
                    parameter.to_text(base[parameter.index]))
                attribute = f"param_{parameter.name}"
                setattr(self, attribute, ParameterPredictor(signature))
                self.names.append((attribute, parameter.name))

        def texts(self) -> dict[str, str]:
            return {name: getattr(self, attribute).signature.instructions for attribute, name in self.names}

        def forward(self, **kwargs: Any) -> Any:
            check()
            text = str(kwargs.get(INPUT_FIELD, ""))
            x, info = dataset_of(text)
            try:
                state = state_from_texts(parameters, base, self.texts())
            except ValueError as exc:
                score, feedback, output = failure_score(ctx), f"invalid parameter value: {exc}", ""
            else:
                with lock:
                    rollout = ctx.run_batch(state, [x], [info])[0]
                score, feedback, output = rollout.score, rollout.feedback, str(rollout.output.data)
                tracker.record(state, score)
            prediction = None
            for attribute, _ in self.names:
                prediction = getattr(self, attribute).record(text, output)
            prediction = prediction if prediction is not None else dspy.Prediction(**{OUTPUT_FIELD: output})
            prediction._trace_bench_score = (score, feedback)  # underscore: kept off DSPy's fields
            return prediction

    return ParameterProgram()


def native_program(program: Any, parameters: list[TextParameter], base: State) -> Any:
    """The task's own program, wrapped so each prediction knows the state (instructions) behind it."""
    import dspy

    class NativeProgram(dspy.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = program
            self.pairs = bind_native(self, parameters)

        def forward(self, **kwargs: Any) -> Any:
            prediction = self.inner(**kwargs)
            try:
                prediction._trace_bench_state = state_from_texts(parameters, base, native_texts(self, self.pairs))
            except ValueError:
                pass
            return prediction

    return NativeProgram()


def make_metric(ctx: TrainerContext, dataset_of_index: Callable[[int], tuple[Any, Any]],
                response_of: Callable[[Any], Any] | None, tracker: StepTracker) -> Callable[..., Any]:
    """A DSPy metric (5-argument form, as GEPA requires) scoring with the task's guide.

    Parameter programs carry their rollout's score on the prediction; native predictions are
    scored here with ``guide(x, response_of(prediction), info)``.
    """
    import dspy

    def metric(gold: Any, pred: Any, trace: Any = None, pred_name: str | None = None, pred_trace: Any = None) -> Any:
        carried = getattr(pred, "_trace_bench_score", None)
        if carried is not None:
            score, feedback = carried
        else:
            x, info = dataset_of_index(int(gold[INDEX_FIELD]))
            try:
                response = (response_of or first_output)(pred)
            except Exception as exc:  # a broken prediction is the candidate's: a low score with a reason
                score, feedback = failure_score(ctx), f"{type(exc).__name__}: {exc}"
            else:
                # the rollouts' rule: a rejected output scores the failure score, a broken guide ends the job
                ctx.evaluator.charge()  # one of the trainer's evaluations (budget.evaluations)
                rollout = ctx.evaluator.score_response(x, response, info)
                score, feedback = rollout.score, rollout.feedback
            state = getattr(pred, "_trace_bench_state", None)
            if state is not None:
                tracker.record(state, score)
        if pred_name is None and trace is None:
            return score
        return dspy.Prediction(score=score, feedback=feedback)

    return metric


def first_output(prediction: Any) -> Any:
    """The answer of a native prediction: ``answer`` when present, else its first field."""
    if "answer" in prediction:
        return prediction["answer"]
    keys = list(prediction.keys())
    return prediction[keys[0]] if keys else ""


def bind_native(program: Any, parameters: list[TextParameter]) -> list[tuple[str, TextParameter]]:
    """Pair a native program's predictors with trainable str parameters (same name, else the only one)."""
    predictors = [name for name, _ in program.named_predictors()]
    text_params = [p for p in parameters if p.kind == "str"]
    by_name = {p.name: p for p in text_params}
    pairs = [(name, by_name[name.split(".")[-1]]) for name in predictors if name.split(".")[-1] in by_name]
    if not pairs and len(predictors) == 1 and len(text_params) == 1:
        pairs = [(predictors[0], text_params[0])]
    if not pairs:
        raise ValueError("dspy_program: name a trainable str parameter after each predictor "
                         f"(predictors: {', '.join(predictors) or 'none'}; str parameters: "
                         f"{', '.join(by_name) or 'none'})")
    return pairs


def native_texts(program: Any, pairs: list[tuple[str, TextParameter]]) -> dict[str, str]:
    predictors = dict(program.named_predictors())
    return {parameter.name: predictors[name].signature.instructions for name, parameter in pairs}


def set_native_instructions(program: Any, pairs: list[tuple[str, TextParameter]], state: State) -> None:
    predictors = dict(program.named_predictors())
    for name, parameter in pairs:
        predictor = predictors[name]
        predictor.signature = predictor.signature.with_instructions(str(state[parameter.index]))
