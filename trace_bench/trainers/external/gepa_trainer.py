"""GEPATrainer: the standalone ``gepa`` library's reflective evolution over the task's parameters.

A gepa *candidate* is ``{parameter name: text}`` for every trainable parameter (code, prompts and
literals alike).  :class:`ProblemAdapter` is the ``GEPAAdapter`` over our problem: it evaluates a
candidate through the harness (the task's agent and guide), keeps each example's input, output and
feedback as the trajectory, and turns them into gepa's reflective dataset.  gepa's own proposer
asks the reflection LM, a ``gepa.lm.LM`` pointed at the job's gateway, for new component texts.

Not to be confused with the opto-based ``GEPA-Base/UCB/Beam`` trainers, which re-implement the
published algorithm on Trace's optimizers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, cast

from pydantic import Field

from trace_bench.trainers.base import Trainer, TrainerParams
from trace_bench.trainers.context import given
from trace_bench.trainers.external.bridge import (
    GatewayLink,
    StepTracker,
    TextParameter,
    failure_score,
    gateway_model,
    state_from_texts,
    text_parameters,
    texts_of,
)
from trace_bench.trainers.external.program_view import program_view, system_message
from trace_bench.trainers.state import State

if TYPE_CHECKING:
    from gepa.core.adapter import EvaluationBatch, ProposalFn
    from gepa.core.result import GEPAResult
    from openai.types.chat import ChatCompletionMessageParam

    #: a batch's per-example trajectories (dicts) and outputs (texts)
    Batch = EvaluationBatch[dict[str, Any], str]


class GEPAParams(TrainerParams):
    max_metric_calls: int = Field(default=60, ge=1, description="gepa's budget: example evaluations")
    reflection_minibatch_size: int = Field(default=3, ge=1)
    candidate_selection_strategy: Literal["pareto", "current_best", "epsilon_greedy", "top_k_pareto"] = "pareto"
    module_selector: Literal["round_robin", "all"] = "round_robin"
    use_merge: bool = False
    skip_perfect_score: bool = True
    perfect_score: float = 1.0
    components: list[str] | None = Field(default=None, description="parameter names to evolve (default: all)")
    max_tokens: int | None = Field(default=None, ge=1)
    optimize_anything: bool = Field(default=True, description="on a discovery task, use gepa's optimize_anything "
                                    "(single-task search over the evolve block); false: gepa.optimize")


class ProblemAdapter:
    """gepa's ``GEPAAdapter`` protocol over a trace-bench problem (data instances are ``(x, info)``)."""

    propose_new_texts: ProposalFn | None = None  # gepa's default reflective proposer, with our reflection LM

    def __init__(self, trainer: GEPATrainer, parameters: list[TextParameter], base: State, link: GatewayLink,
                 tracker: StepTracker) -> None:
        self.ctx = trainer.ctx
        self.parameters = parameters
        self.base = base
        self.link = link
        self.tracker = tracker

    def evaluate(self, batch: list[tuple[Any, Any]], candidate: dict[str, str], capture_traces: bool = False) -> Batch:
        from gepa.core.adapter import EvaluationBatch

        self.link.check()
        try:
            state = state_from_texts(self.parameters, self.base, candidate)
        except ValueError as exc:
            reason = f"invalid candidate: {exc}"
            traces = [{"input": str(x), "output": "", "feedback": reason, "score": failure_score(self.ctx)}
                      for x, _ in batch]
            return EvaluationBatch(outputs=["" for _ in batch], scores=[failure_score(self.ctx)] * len(batch),
                                   trajectories=traces if capture_traces else None)
        rollouts = self.ctx.run_batch(state, [x for x, _ in batch], [info for _, info in batch])
        for rollout in rollouts:
            self.tracker.record(state, rollout.score)
        outputs = [str(r.output.data) for r in rollouts]
        traces = [{"input": str(r.input), "output": out, "feedback": r.feedback, "score": r.score}
                  for r, out in zip(rollouts, outputs, strict=True)]
        return EvaluationBatch(outputs=outputs, scores=[r.score for r in rollouts],
                               trajectories=traces if capture_traces else None)

    def make_reflective_dataset(self, candidate: dict[str, str], eval_batch: Batch,
                                components_to_update: list[str]) -> dict[str, list[dict[str, Any]]]:
        records = [{"Inputs": t["input"], "Generated Outputs": t["output"],
                    "Feedback": f"score {t['score']:g}. {t['feedback']}"} for t in eval_batch.trajectories or []]
        return {name: records for name in components_to_update}


class GEPATrainer(Trainer[GEPAParams]):
    Params = GEPAParams
    uses_optimizer = False

    def train(self) -> None:
        from gepa.api import optimize

        params = self.params
        ctx = self.ctx
        parameters = text_parameters(ctx)
        if params.optimize_anything and program_view(ctx.problem, parameters).native:
            self._optimize_anything(parameters)
            return
        if params.components:
            unknown = sorted(set(params.components) - {p.name for p in parameters})
            if unknown:
                raise ValueError(f"unknown components {unknown}; this task's parameters: "
                                 f"{', '.join(p.name for p in parameters)}")
            parameters = [p for p in parameters if p.name in params.components]
        base = ctx.current_state()
        tracker = StepTracker(ctx)
        train = [*zip(ctx.problem.train_dataset["inputs"], ctx.problem.train_dataset["infos"], strict=True)]
        val = ctx.validation_dataset
        valset = [*zip(val["inputs"], val["infos"], strict=True)]
        with GatewayLink(ctx) as link:
            adapter = ProblemAdapter(self, parameters, base, link, tracker)
            lm_kwargs: dict[str, Any] = {"api_base": link.base_url, "api_key": link.api_key, "num_retries": 0}
            if params.max_tokens:
                lm_kwargs["max_tokens"] = params.max_tokens
            with link.guard():
                result: GEPAResult[str, int] = optimize(
                    seed_candidate=texts_of(parameters, base), trainset=train, valset=valset, adapter=adapter,
                    reflection_lm=gateway_model("optimizer"), reflection_lm_kwargs=lm_kwargs,
                    candidate_selection_strategy=params.candidate_selection_strategy,
                    module_selector=params.module_selector, use_merge=params.use_merge,
                    reflection_minibatch_size=params.reflection_minibatch_size,
                    skip_perfect_score=params.skip_perfect_score, perfect_score=params.perfect_score,
                    max_metric_calls=params.max_metric_calls, seed=ctx.seed, display_progress_bar=False)
        tracker.finish()
        try:
            # the best candidate's whole mapping (best_candidate unwraps a str seed's; this seed is a mapping)
            state, note = state_from_texts(parameters, base, result.candidates[result.best_idx]), ""
        except ValueError as exc:
            state, note = base, f"best candidate invalid, kept the initial state: {exc}"
        ctx.report_step(state, None, final=True, candidates=len(result.candidates), **given(note=note))
        ctx.apply(state)

    def _optimize_anything(self, parameters: list[TextParameter]) -> None:
        """gepa's single-task search: the candidate is the evolve block, the evaluator the task's
        sandboxed evaluation (its feedback is the side information the reflection reads)."""
        from gepa.optimize_anything import EngineConfig, GEPAConfig, ReflectionConfig, optimize_anything

        params, ctx = self.params, self.ctx
        parameter = parameters[0]
        base = ctx.current_state()
        tracker = StepTracker(ctx)
        view = program_view(ctx.problem, parameters)
        with GatewayLink(ctx) as link:
            def evaluate(candidate: str) -> tuple[float, dict[str, Any]]:
                link.check()
                state = state_from_texts(parameters, base, {parameter.name: candidate})
                result = ctx.evaluate(state, ctx.validation_dataset)
                for rollout in result.rollouts:
                    tracker.record(state, rollout.score)
                return result.score, {"feedback": " | ".join(result.feedbacks)[:4000]}

            fixed = view.program.prefix.replace("```", "")[-1500:] if view.program.marked else ""
            background = (f"The component is the code between the EVOLVE-BLOCK markers of this program; the code "
                          f"before it is fixed:\n{fixed}") if fixed else None
            config = GEPAConfig(
                engine=EngineConfig(seed=ctx.seed, max_metric_calls=params.max_metric_calls, parallel=False,
                                    display_progress_bar=False, capture_stdio=False),
                reflection=ReflectionConfig(reflection_lm=GatewayChat(link, params.max_tokens),
                                            module_selector=params.module_selector,
                                            skip_perfect_score=False))
            with link.guard():
                result = optimize_anything(texts_of(parameters, base)[parameter.name], evaluator=evaluate,
                                           objective=(system_message(ctx.problem) or None), background=background,
                                           config=config)
        tracker.finish()
        best = result.best_candidate
        text = best if isinstance(best, str) else dict(best).get(parameter.name, "") if best else ""
        try:
            state, note = state_from_texts(parameters, base, {parameter.name: text}) if text else base, ""
        except ValueError as exc:
            state, note = base, f"best candidate invalid, kept the initial state: {exc}"
        ctx.report_step(state, None, final=True, candidates=len(result.candidates), **given(note=note))
        ctx.apply(state)


class GatewayChat:
    """gepa's ``LanguageModel`` (prompt -> text) as one chat completion at the job's gateway, with the
    ``openai`` client (gepa's default, a LiteLLM model string, costs seconds of import per job)."""

    def __init__(self, link: GatewayLink, max_tokens: int | None) -> None:
        import openai

        self.client = openai.OpenAI(base_url=link.base_url, api_key=link.api_key, max_retries=0)
        self.max_tokens = max_tokens

    def __call__(self, prompt: str | list[dict[str, Any]]) -> str:
        # gepa hands chat messages as plain dicts: openai's request types are TypedDicts of the same keys
        messages = cast("list[ChatCompletionMessageParam]",
                        prompt if isinstance(prompt, list) else [{"role": "user", "content": prompt}])
        extra: dict[str, Any] = {"max_tokens": self.max_tokens} if self.max_tokens else {}
        response = self.client.chat.completions.create(model="trace-bench-optimizer", messages=messages, **extra)
        return response.choices[0].message.content or ""
