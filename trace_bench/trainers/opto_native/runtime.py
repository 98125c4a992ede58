"""Running an ``opto`` trainer inside a job: the pieces it needs in ``opto``'s own types.

- the agent: a ``trace.Module`` (a bare parameter is wrapped, as ``opto.trainer.train`` does);
- the optimizer: opto's class for the requested name (``opto:`` prefix optional), built on the
  job's metered client, so every call is metered, cached and budgeted like ours; without a name,
  opto's own default (``OPROv2`` for a bare parameter, else ``OptoPrimeV2``, when installed);
- the guide: the task's guide behind ``opto.trainer.guide.Guide`` (opto checks the type);
- the logger: a ``BaseLogger`` that turns each finished iteration (opto logs
  ``Algo/Average train score`` once per iteration) into ``report_step``, so curves, events and the
  best state come from the harness's own measurement of the live parameters, and the wall-time
  budget is checked between iterations.
opto's own test evaluation is switched off (``test_frequency=None``): the harness measures.
"""

from __future__ import annotations

import inspect
from typing import Any

from trace_bench.trainers.opto_native.discovery import NativeSignature, NativeTrainer

STEP_MARKER = "train score"  # opto's SearchTemplate logs "Algo/Average train score" per iteration


def as_module(param: Any) -> Any:
    from opto import trace
    from opto.trace.nodes import ParameterNode

    if not isinstance(param, ParameterNode):
        return param

    @trace.model
    class SingleParameter:
        def __init__(self, node: Any) -> None:
            self.param = node

        def forward(self, x: Any) -> Any:
            return self.param

    return SingleParameter(param)


def optimizer_name(requested: str | None, bare_parameter: bool) -> str:
    import opto.optimizers as optimizers

    if requested:
        name = requested.removeprefix("opto:")
        if hasattr(optimizers, name):
            return name
        from trace_bench.trainers.optimizers import canonical_optimizer

        return canonical_optimizer(name).removeprefix("opto:")
    default = "OPROv2" if bare_parameter else "OptoPrimeV2"
    return default if hasattr(optimizers, default) else "OptoPrime"


def build_optimizer(ctx: Any, agent: Any, name: str) -> Any:
    import opto.optimizers as optimizers

    cls = getattr(optimizers, name)
    options = {k: v for k, v in ctx.optimizer_kwargs.items() if k != "llm"}
    accepted = inspect.signature(cls.__init__).parameters
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values()):
        options = {k: v for k, v in options.items() if k in accepted}
    return cls(agent.parameters(), llm=ctx.session.client("optimizer"), **options)


def opto_guide(guide: Any, ctx: Any) -> Any:
    """The task's guide as an opto ``Guide``; every feedback opto asks for counts as one of the
    trainer's evaluations (``n_evals``, and ``budget.evaluations``), as our own trainers' rollouts do."""
    from opto.trainer.guide import Guide

    def count() -> None:
        ctx.evaluator.charge()

    class TaskGuide(Guide):
        """Scores through the job's evaluator, so opto's trainers follow the harness's rule on
        rejected outputs and broken guides (``trace_bench.trainers.evaluate``)."""

        def get_feedback(self, query: Any, response: Any, reference: Any = None, **kwargs: Any) -> Any:
            count()
            rollout = ctx.evaluator.score_response(query, response, reference)
            return rollout.score, rollout.feedback

        def get_score_dict(self, query: Any, response: Any, reference: Any = None, **kwargs: Any) -> Any:
            return dict(ctx.evaluator.score_response(query, response, reference, want_score_dict=True).score_dict)

    return TaskGuide()


def step_logger(ctx: Any, echo: bool) -> Any:
    from opto.trainer.loggers import BaseLogger

    class StepLogger(BaseLogger):
        def __init__(self) -> None:
            super().__init__(log_dir=".")
            self.steps: set[Any] = set()

        def log(self, name: str, data: Any, step: Any, **kwargs: Any) -> None:
            if echo:
                print(f"[opto {step}] {name}: {data}", flush=True)
            if STEP_MARKER in str(name).lower() and step not in self.steps:
                self.steps.add(step)
                ctx.check_budget()
                ctx.report_step(ctx.current_state(), opto_step=step, opto_train_score=_number(data))

    return StepLogger()


def _number(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def objective_for(native_accepts: frozenset[str], objective: Any) -> dict[str, Any]:
    """opto's own ObjectiveConfig built from the task's, when the trainer takes one."""
    if objective is None or "objective_config" not in native_accepts:
        return {}
    from dataclasses import fields

    try:
        from opto.trainer.objectives import ObjectiveConfig
    except ImportError:
        return {}
    names = {f.name for f in fields(ObjectiveConfig)}
    values = {k: getattr(objective, k) for k in names if hasattr(objective, k)}
    if values.get("tie_break") == "closest_to_ideal":  # ours; opto knows weighted, lexicographic, random_seeded
        values["tie_break"] = "weighted"
    return {"objective_config": ObjectiveConfig(**values)}


def construct(cls: Any, agent: Any, optimizer: Any, logger: Any, init_kwargs: dict[str, Any]) -> Any:
    """``cls(agent, optimizer, logger=...)`` as ``opto.trainer.train`` does, but by keyword when the
    class (or a base it forwards ``**kwargs`` to) names them: POLCA's ``__init__`` starts with its
    own knobs, so positional arguments would land in ``epsilon`` and ``use_summarizer``."""
    parameters = inspect.signature(cls.__init__).parameters
    first = [name for name, p in parameters.items() if name != "self"
             and p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)][:2]
    if first == ["agent", "optimizer"] or "agent" not in parameters and any(
            p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return cls(agent=agent, optimizer=optimizer, logger=logger, **init_kwargs)
    return cls(agent, optimizer, logger=logger, **init_kwargs)


def run_native(ctx: Any, native: NativeTrainer, found: NativeSignature, params: Any) -> None:
    import importlib

    cls = getattr(importlib.import_module("opto.trainer.algorithms"), native.name)
    problem = ctx.problem
    agent = as_module(problem.param)
    name = optimizer_name(getattr(ctx, "optimizer_requested", None), agent is not problem.param)
    optimizer = build_optimizer(ctx, agent, name)
    values = {k: v for k, v in params.model_dump().items() if v is not None}
    echo = bool(values.get("verbose", False))
    init_kwargs = {k: v for k, v in values.items() if k in found.init_knobs}
    train_kwargs = {k: v for k, v in values.items() if k in found.train_knobs}
    if "num_threads" in found.init_knobs and "num_threads" not in found.train_knobs:
        init_kwargs["num_threads"] = params.num_threads
    algorithm = construct(cls, agent, optimizer, step_logger(ctx, echo), init_kwargs)
    kwargs: dict[str, Any] = {"guide": opto_guide(problem.guide, ctx), "train_dataset": problem.train_dataset, **train_kwargs}
    if problem.validate_dataset and "validate_dataset" in found.accepts:
        kwargs["validate_dataset"] = problem.validate_dataset
    for key, value in (("test_frequency", None), ("log_frequency", 1)):
        if key in found.accepts:
            kwargs[key] = value
    kwargs.update(objective_for(found.accepts, ctx.objective))
    if echo:
        print(f"opto trainer {native.name} with optimizer {name}: {sorted(train_kwargs)}", flush=True)
    algorithm.train(**kwargs)
    if ctx.steps_reported == 0:  # a trainer that never logs per iteration still gets one curve point
        ctx.report_step(ctx.current_state())
