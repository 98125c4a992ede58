"""TextGradTrainer: the ``textgrad`` package's Textual Gradient Descent over the task's parameters.

Every trainable parameter becomes one ``tg.Variable`` (text; literals such as floats travel as
their ``repr``).  Each step runs the agent on a minibatch, builds a loss with textgrad's own
``FormattedLLMCall`` over the parameters, the agent's outputs and the guide's feedback, calls
``loss.backward`` (textual gradients per parameter) and ``TGD.step`` (rewrites).  The candidate is
kept when it scores at least as well on the validation split (``ensure_improvement``).

The engine is a small ``EngineLM`` that calls the job's gateway (no textgrad disk cache, no
``OPENAI_API_KEY`` written into the environment, no global backward engine), so every call is
metered, budgeted and stubbed like a built-in trainer's.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
import tempfile
from typing import Any

from pydantic import Field

from trace_bench.trainers.base import Trainer, TrainerParams
from trace_bench.trainers.context import given
from trace_bench.trainers.external.bridge import (
    GatewayLink,
    TextParameter,
    evaluate_texts,
    summarize_feedback,
    text_parameters,
    texts_of,
)

EVALUATION_PROMPT = (
    "You evaluate the trainable parameters of an agent. Given the task objective, the parameters, the "
    "agent's outputs and the feedback of the task's scorer, explain concisely what is wrong and how the "
    "parameters should change so the scorer's feedback is addressed."
)


class TextGradParams(TrainerParams):
    num_steps: int = Field(default=3, ge=0, description="TGD steps (one minibatch each)")
    batch_size: int = Field(default=1, ge=1)
    ensure_improvement: bool = Field(default=True, description="keep a step only if validation does not drop")
    improvement_threshold: float = 0.0
    gradient_memory: int = Field(default=0, ge=0, description="past gradients TGD shows per variable")
    constraints: list[str] = Field(default_factory=list, description="natural-language constraints for TGD")
    max_tokens: int = Field(default=2000, ge=1)
    temperature: float = Field(default=0.0, ge=0)


def import_textgrad() -> Any:
    """``import textgrad`` without its log.  At import it opens a JSON log of every call under
    ``./logs`` (or ``$TEXTGRAD_LOG_DIR``), about 3.6 MB per job, each record JSON-encoded inside the
    job's time.  The job records every call itself, so the log is made in a temporary directory
    and removed at once, and its records go nowhere (not to the job's own log either)."""
    if "textgrad" in sys.modules:
        return sys.modules["textgrad"]
    previous = os.environ.get("TEXTGRAD_LOG_DIR")
    log_dir = tempfile.mkdtemp(prefix="trace-bench-textgrad-")
    os.environ["TEXTGRAD_LOG_DIR"] = log_dir
    try:
        import textgrad
    finally:
        if previous is None:
            os.environ.pop("TEXTGRAD_LOG_DIR", None)
        else:
            os.environ["TEXTGRAD_LOG_DIR"] = previous
        logger = logging.getLogger("textgrad")
        for handler in list(logger.handlers):
            logger.removeHandler(handler)
            handler.close()
        logger.addHandler(logging.NullHandler())
        logger.propagate = False
        shutil.rmtree(log_dir, ignore_errors=True)
    return textgrad


def gateway_engine(link: GatewayLink, *, max_tokens: int, temperature: float) -> Any:
    """A textgrad ``EngineLM`` answering through the job's gateway (role: optimizer)."""
    import openai
    from textgrad.engine.base import EngineLM

    class GatewayEngine(EngineLM):
        model_string = "trace-bench-optimizer"

        def __init__(self) -> None:
            self.client = openai.OpenAI(base_url=link.base_url, api_key=link.api_key, max_retries=0)

        def generate(self, prompt: Any, system_prompt: str | None = None, **kwargs: Any) -> str:
            content = prompt if isinstance(prompt, str) else "\n".join(str(p) for p in prompt)
            response = self.client.chat.completions.create(
                model=self.model_string, max_tokens=max_tokens, temperature=temperature,
                messages=[{"role": "system", "content": system_prompt or self.system_prompt},
                          {"role": "user", "content": content}])
            return response.choices[0].message.content or ""

        def __call__(self, prompt: Any, **kwargs: Any) -> str:
            return self.generate(prompt, **kwargs)

    return GatewayEngine()


class TextGradTrainer(Trainer[TextGradParams]):
    Params = TextGradParams
    knob_aliases = {"ps_steps": "num_steps", "num_epochs": "num_steps"}
    uses_optimizer = False

    def train(self) -> None:
        params = self.params
        tg = import_textgrad()
        from textgrad.autograd import FormattedLLMCall

        ctx = self.ctx
        parameters = text_parameters(ctx)
        state = ctx.current_state()
        objective = str(ctx.optimizer_kwargs.get("objective") or "Maximize the task's score.")
        with GatewayLink(ctx) as link:
            engine = gateway_engine(link, max_tokens=params.max_tokens, temperature=params.temperature)
            variables = [tg.Variable(p.to_text(state[p.index]), requires_grad=True,
                                     role_description=f"{p.name}: {p.description or p.kind}") for p in parameters]
            optimizer = tg.TGD(parameters=variables, engine=engine, constraints=params.constraints or None,
                               gradient_memory=params.gradient_memory)
            fields = {f"p{i}": None for i in range(len(parameters))} | {"outputs": None, "feedback": None}
            layout = "\n".join(f"Parameter {p.name}:\n{{p{i}}}\n" for i, p in enumerate(parameters))
            loss_fn = FormattedLLMCall(
                engine, f"Objective: {_braces(objective)}\n\n{layout}\nAgent outputs:\n{{outputs}}\n\n"
                        "Feedback from the task's scorer:\n{feedback}", fields,
                system_prompt=tg.Variable(EVALUATION_PROMPT, requires_grad=False, role_description="evaluation prompt"))
            loader = ctx.loader(batch_size=params.batch_size)
            current_score: float | None = None
            for _ in range(params.num_steps):
                link.check()
                inputs, infos = loader.next_batch()
                rollouts = ctx.run_batch(state, inputs, infos)
                batch_outputs = "\n".join(f"[{i}] {str(r.output.data)[:500]}" for i, r in enumerate(rollouts))
                feedback = summarize_feedback([r.feedback for r in rollouts], limit=len(rollouts))
                with link.guard():
                    optimizer.zero_grad()
                    loss = loss_fn(inputs={**{f"p{i}": v for i, v in enumerate(variables)},
                                           "outputs": tg.Variable(batch_outputs, requires_grad=False,
                                                                  role_description="agent outputs"),
                                           "feedback": tg.Variable(feedback, requires_grad=False,
                                                                   role_description="scorer feedback")},
                                   response_role_description="evaluation of the parameters")
                    loss.backward(engine)
                    proposal_error = _step(optimizer)
                texts = {p.name: _unabridged(v, p.to_text(state[p.index])) for p, v in zip(parameters, variables,
                                                                                           strict=True)}
                accepted, score, error = self._decide(parameters, state, texts, current_score, proposal_error)
                if accepted is not None:
                    state, current_score = accepted, score
                for p, v in zip(parameters, variables, strict=True):
                    v.set_value(p.to_text(state[p.index]))
                ctx.report_step(state, current_score, accepted=accepted is not None,
                                **given(rejected=error))
            ctx.apply(state)

    def _decide(self, parameters: list[TextParameter], state: list[Any], texts: dict[str, str],
                current_score: float | None, proposal_error: str) -> tuple[list[Any] | None, float | None, str]:
        """(accepted state or None, its validation score, reason for a rejection)."""
        params = self.params
        ctx = self.ctx
        if proposal_error:
            return None, current_score, proposal_error
        if texts == texts_of(parameters, state):
            return None, current_score, "no change proposed"
        candidate, result, error = evaluate_texts(ctx, parameters, state, texts, ctx.validation_dataset)
        if candidate is None or result is None:
            return None, current_score, error
        if not params.ensure_improvement:
            return candidate, result.score, ""
        if current_score is None:
            current_score = ctx.evaluate(state, ctx.validation_dataset).score
        if result.score >= current_score + params.improvement_threshold:
            return candidate, result.score, ""
        return None, current_score, f"validation {result.score:g} < {current_score:g}"


def _step(optimizer: Any) -> str:
    """One TGD step; an answer without the update tags is a rejected proposal, not a crash."""
    try:
        optimizer.step()
    except IndexError as exc:
        return f"unparseable TGD answer: {str(exc)[:200]}"
    return ""


def _unabridged(variable: Any, previous: str) -> str:
    """TGD shows long values abridged (``a b (...) y z``); echoing that back is no proposal."""
    value = str(variable.value)
    shown = " ".join(previous.split(" ")[:10]) + " (...) " + " ".join(previous.split(" ")[-10:])
    return previous if value.strip() == shown.strip() else value


def _braces(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")
