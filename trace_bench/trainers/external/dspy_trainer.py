"""DSPyTrainer: DSPy's optimizers (MIPROv2, GEPA, COPRO, SIMBA, BootstrapFewShot) on a task.

Code parameters are left to code optimizers (OpenEvolve, gepa, TextGrad).  The optimizer is chosen with the knob ``dspy_optimizer`` (``optimizer`` is the harness's name for
an opto update rule, so it cannot be reused).  Budgets are DSPy's own: ``auto`` presets for
MIPROv2 and GEPA, or the explicit knobs (``num_trials``; ``max_metric_calls``/``max_full_evals``;
``breadth``/``depth``; ``max_steps``/``bsize``), and the job's LLM budget on top (a gateway budget
stop ends the trainer with ``BudgetExhausted``).  An answer DSPy cannot parse is a failed proposal,
not a failed job (:mod:`.dspy_adapter`); the final step says how many there were
(``unparsed_answers``).  What is optimized is described in
:mod:`.dspy_program`.  DSPy's LMs point at the gateway and are installed only with
``dspy.context`` (thread-local, restored on exit); ``dspy.settings.lm`` is never set.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from trace_bench._util.availability import missing_packages
from trace_bench.trainers.base import Trainer, TrainerParams
from trace_bench.trainers.context import given
from trace_bench.trainers.external import dspy_program as programs
from trace_bench.trainers.external.bridge import (
    GatewayLink,
    StepTracker,
    failure_score,
    gateway_model,
    state_from_texts,
    text_parameters,
)
from trace_bench.trainers.external.dspy_adapter import lenient_adapter

OPTIMIZERS = ("MIPROv2", "GEPA", "COPRO", "SIMBA", "BootstrapFewShot")
_ALIASES = {"mipro": "MIPROv2", "miprov2": "MIPROv2", "gepa": "GEPA", "copro": "COPRO", "simba": "SIMBA",
            "bootstrap": "BootstrapFewShot", "bootstrapfewshot": "BootstrapFewShot"}


class DSPyParams(TrainerParams):
    dspy_optimizer: Literal["MIPROv2", "GEPA", "COPRO", "SIMBA", "BootstrapFewShot"] = "MIPROv2"
    auto: Literal["light", "medium", "heavy"] | None = Field(
        default="light", description="MIPROv2/GEPA preset; ignored when an explicit budget knob is set")
    num_candidates: int = Field(default=6, ge=1, description="MIPROv2 instruction candidates; SIMBA samples")
    num_trials: int | None = Field(default=None, ge=1, description="MIPROv2 trials (clears auto)")
    max_bootstrapped_demos: int = Field(default=4, ge=0, description="native programs only")
    max_labeled_demos: int = Field(default=4, ge=0, description="native programs only")
    breadth: int = Field(default=10, ge=2, description="COPRO candidates per round")
    depth: int = Field(default=3, ge=1, description="COPRO rounds")
    max_steps: int = Field(default=8, ge=1, description="SIMBA steps")
    bsize: int = Field(default=32, ge=1, description="SIMBA minibatch (capped at the train size)")
    max_demos: int = Field(default=4, ge=0, description="SIMBA demos per predictor")
    max_metric_calls: int | None = Field(default=None, ge=1, description="GEPA budget (clears auto)")
    max_full_evals: int | None = Field(default=None, ge=1, description="GEPA budget (clears auto)")
    reflection_minibatch_size: int = Field(default=3, ge=1)
    init_temperature: float = Field(default=1.0, ge=0)
    max_tokens: int | None = Field(default=None, ge=1, description="per LM call")

    @field_validator("dspy_optimizer", mode="before")
    @classmethod
    def _canonical(cls, value: Any) -> Any:
        return _ALIASES.get(str(value).replace("-", "").replace("_", "").lower(), value)

    @model_validator(mode="after")
    def _optional_dependencies(self) -> DSPyParams:
        if self.dspy_optimizer == "MIPROv2" and missing_packages("optuna"):
            raise ValueError("dspy_optimizer MIPROv2 needs optuna: pip install optuna "
                             "(or choose GEPA, COPRO, SIMBA or BootstrapFewShot)")
        return self


class DSPyTrainer(Trainer[DSPyParams]):
    Params = DSPyParams
    knob_aliases = {"optimizer_name": "dspy_optimizer", "ps_steps": "max_steps"}
    uses_optimizer = False
    optimizes_only = ("text", "numeric")  # instructions and literals; code is left to code optimizers

    def train(self) -> None:
        import dspy

        params = self.params
        ctx = self.ctx
        parameters = text_parameters(ctx)
        base = ctx.current_state()
        native = ctx.problem.extras.get("dspy_program")
        if native is None:
            native = ctx.problem.metadata.get("dspy_program")
        tracker = StepTracker(ctx)
        with GatewayLink(ctx) as link:
            lm = dspy.LM(gateway_model("optimizer"), api_base=link.base_url, api_key=link.api_key, cache=False,
                         num_retries=0, max_tokens=params.max_tokens)
            train, val = ctx.problem.train_dataset, ctx.validation_dataset
            if native is None:
                if params.dspy_optimizer == "BootstrapFewShot":
                    raise ValueError("BootstrapFewShot only chooses demonstrations, which cannot change this task's "
                                     "parameters; give the task a dspy_program or choose MIPROv2, GEPA, COPRO or SIMBA")
                prompts = [p for p in parameters if p.kind != "code"]
                if not prompts:
                    raise ValueError("DSPyTrainer optimizes instructions: this task has only code parameters "
                                     "(use OpenEvolveTrainer, GEPATrainer or TextGradTrainer)")
                student = programs.parameter_program(ctx, prompts, base, _lookup(train, val), tracker, link.check)
                task_lm = lm
            else:
                student = programs.native_program(native, parameters, base)
                task_lm = dspy.LM(gateway_model("agent"), api_base=link.base_url, api_key=link.api_key, cache=False,
                                  num_retries=0, max_tokens=params.max_tokens)
            pool = [*zip(train["inputs"], train["infos"], strict=True)]
            trainset = self._examples(native, train, 0)
            if val is train:
                valset = trainset
            else:
                valset = self._examples(native, val, len(pool))
                pool += [*zip(val["inputs"], val["infos"], strict=True)]
            metric = programs.make_metric(ctx, pool.__getitem__, ctx.problem.extras.get("dspy_response"), tracker)
            unparsed: list[str] = []
            adapter = lenient_adapter(unparsed.append)
            with dspy.context(lm=task_lm, adapter=adapter), link.guard():
                compiled = self._compile(dspy, student, metric, lm, trainset, valset, native is not None)
            tracker.finish()
            if unparsed:  # failed proposals: scored as the candidates they became, counted here
                print(f"DSPyTrainer: {len(unparsed)} answer(s) DSPy could not parse were taken as they came "
                      f"(first: {unparsed[0][:80]!r})", flush=True)
            texts = compiled.texts() if native is None else programs.native_texts(compiled, compiled.pairs)
            try:
                state, note = state_from_texts(parameters, base, texts), ""
            except ValueError as exc:  # the library kept a candidate that is not a valid value
                state, note = base, f"final candidate invalid, kept the initial state: {exc}"
            if native is not None:  # the task's own program object keeps the chosen instructions
                programs.set_native_instructions(student, student.pairs, state)
            ctx.report_step(state, None, optimizer=params.dspy_optimizer, final=True, unparsed_answers=len(unparsed),
                            **given(note=note))
            ctx.apply(state)

    def _examples(self, native: Any, dataset: dict[str, list[Any]], offset: int) -> list[Any]:
        """Examples carry ``example_id`` (an index into the metric's pool of (input, info) pairs)."""
        if native is None:
            return [e.copy(**{programs.INDEX_FIELD: e[programs.INDEX_FIELD] + offset})
                    for e in programs.make_examples(dataset)]
        build = self.ctx.problem.extras.get("dspy_examples") or getattr(native, "to_examples", None)
        if build is None:
            raise ValueError("a dspy_program task must also give dspy_examples(inputs, infos) -> [dspy.Example] "
                             "(or a to_examples method on the program)")
        return [e.copy(**{programs.INDEX_FIELD: i + offset}) for i, e in enumerate(build(dataset["inputs"],
                                                                                        dataset["infos"]))]

    def _compile(self, dspy: Any, student: Any, metric: Any, lm: Any, trainset: list[Any], valset: list[Any],
                 native: bool) -> Any:
        params = self.params
        threads = params.num_threads
        demos = {"max_bootstrapped_demos": params.max_bootstrapped_demos if native else 0,
                 "max_labeled_demos": params.max_labeled_demos if native else 0}
        name = params.dspy_optimizer
        if name == "COPRO":
            optimizer = dspy.COPRO(metric=metric, prompt_model=lm, breadth=params.breadth, depth=params.depth,
                                   init_temperature=params.init_temperature)
            return optimizer.compile(student, trainset=trainset,
                                     eval_kwargs={"num_threads": threads, "display_progress": False})
        if name == "MIPROv2":
            auto = None if params.num_trials else params.auto
            optimizer = dspy.MIPROv2(metric=metric, prompt_model=lm, task_model=dspy.settings.lm, auto=auto,
                                     num_candidates=None if auto else params.num_candidates, num_threads=threads,
                                     seed=self.ctx.seed, init_temperature=params.init_temperature, **demos)
            return optimizer.compile(student, trainset=trainset, valset=valset, num_trials=params.num_trials,
                                     minibatch=len(valset) > 35)
        if name == "GEPA":
            explicit = params.max_metric_calls or params.max_full_evals
            optimizer = dspy.GEPA(metric=metric, reflection_lm=lm, auto=None if explicit else params.auto,
                                  max_metric_calls=params.max_metric_calls,
                                  max_full_evals=None if params.max_metric_calls else params.max_full_evals,
                                  reflection_minibatch_size=params.reflection_minibatch_size, num_threads=threads,
                                  failure_score=failure_score(self.ctx),
                                  seed=self.ctx.seed, use_merge=False)
            return optimizer.compile(student, trainset=trainset, valset=valset)
        if name == "SIMBA":
            optimizer = dspy.SIMBA(metric=metric, bsize=min(params.bsize, len(trainset)),
                                   num_candidates=params.num_candidates, max_steps=params.max_steps,
                                   max_demos=params.max_demos if native else 0, prompt_model=lm, num_threads=threads)
            return optimizer.compile(student, trainset=trainset, seed=self.ctx.seed)
        optimizer = dspy.BootstrapFewShot(metric=metric, **demos)
        return optimizer.compile(student, trainset=trainset)


def _lookup(*datasets: dict[str, list[Any]]) -> Any:
    """Find ``(input, info)`` from the rendered input a DSPy example carries."""
    table: dict[str, tuple[Any, Any]] = {}
    for dataset in datasets:
        for x, info in zip(dataset["inputs"], dataset["infos"], strict=True):
            table.setdefault(str(x), (x, info))

    def find(text: str) -> tuple[Any, Any]:
        if text not in table:
            raise KeyError(f"unknown task input {text[:80]!r}")
        return table[text]

    return find

