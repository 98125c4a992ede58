"""terminal_bench:<slug>: optimize a Terminus-2-style prompt template on one Terminal-Bench task.

The trainable parameter is the agent's prompt template (``prompt_template``), a text with the
placeholders ``{instruction}`` and ``{terminal_state}`` (literal braces doubled).  In real mode
every evaluation runs ``harbor run`` (:mod:`.harbor`) with the candidate written to a file of its
own, ``<job>/artifacts/terminal_bench/eval-NNNN/prompt_template.txt``, next to ``command.txt``,
``stdout.txt``, ``stderr.txt``, Harbor's ``harbor_jobs/`` tree, copies of ``job_result.json``,
``trial_result.json`` and ``trajectory.json``, and ``outcome.json``.  The score is the verifier's
reward; infrastructure failures raise :class:`~.errors.InfraError` (:mod:`.results` says which is
which).  Stub mode never invokes Harbor: it only checks that the template is usable (score 1/0,
feedback marked ``STUB``), which is what stub runs can honestly verify.

The guide learns its job from the harness: ``set_trace_bench_context(...)`` (called by the job
body) or the env variables ``TRACE_BENCH_MODE``, ``TRACE_BENCH_JOB_DIR`` and ``TRACE_BENCH_JOB_ID``.
"""

from __future__ import annotations

import json
import os
import shlex
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from trace_bench.tasks.guide import Guide
from trace_bench.tasks.terminal_bench.errors import InfraError
from trace_bench.tasks.terminal_bench.harbor import HarborSettings, build_command, run_harbor
from trace_bench.tasks.terminal_bench.results import Outcome, judge

DEFAULT_TEMPLATE = """You operate a Linux terminal to complete a task for a user. You see the screen, you send keystrokes.

Task:
{instruction}

Current terminal screen:
{terminal_state}

Work in small, verifiable steps: inspect before you change anything, read error messages, and check
that the result really satisfies the task before you declare it complete.

Answer with one JSON object and nothing else:
{{"analysis": "what the screen shows and what is still missing",
  "plan": "the next steps",
  "commands": [{{"keystrokes": "ls -la\\n", "duration": 0.5}}],
  "task_complete": false}}
"""


def template_problem(template: str) -> str:
    """Why a template cannot be used by the agent ('' when it can)."""
    missing = [p for p in ("{instruction}", "{terminal_state}") if p not in template]
    if missing:
        return f"it lacks the placeholder(s) {', '.join(missing)}"
    try:
        template.format(instruction="x", terminal_state="y")
    except (KeyError, IndexError, ValueError) as exc:
        return f"it does not format ({type(exc).__name__}: {exc}); double literal braces as {{{{ }}}}"
    return ""


def current_mode(context: dict[str, Any], hint: Any = None) -> str:
    return str(context.get("mode") or os.environ.get("TRACE_BENCH_MODE") or hint or "real")


class TerminalBenchGuide(Guide):
    """Scores a prompt template by running Harbor on the task (see module docstring)."""

    def __init__(self, slug: str, eval_kwargs: dict[str, Any]) -> None:
        self.settings = HarborSettings.from_eval_kwargs(slug, eval_kwargs)
        self.mode_hint = eval_kwargs.get("mode")
        self.context: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._gateway: Any = None

    def set_trace_bench_context(self, **context: Any) -> None:
        self.context.update(context)

    def artifacts_root(self) -> Path:
        if self.context.get("artifacts_dir"):
            return Path(self.context["artifacts_dir"]) / "terminal_bench"
        job_dir = self.context.get("job_dir") or os.environ.get("TRACE_BENCH_JOB_DIR")
        if job_dir:
            return Path(job_dir) / "artifacts" / "terminal_bench"
        return Path(tempfile.mkdtemp(prefix="trace-bench-terminal-bench-"))

    def get_feedback(self, query: Any, response: Any, reference: Any = None, **kwargs: Any) -> tuple[float, str]:
        template = str(response)
        problem = template_problem(template)
        if current_mode(self.context, self.mode_hint) == "stub":
            verdict = f"the template is unusable: {problem}" if problem else "the template is well-formed"
            return (0.0 if problem else 1.0), f"STUB: harbor not invoked; template check only: {verdict}."
        if problem:
            return 0.0, f"The template is unusable, so the agent could not run: {problem}."
        outcome = self._evaluate(template)
        if outcome.kind == "infra":
            raise InfraError(f"terminal_bench:{self.settings.slug}: {outcome.feedback}")
        return outcome.score, outcome.feedback

    def _next_eval_dir(self) -> tuple[int, Path]:
        root = self.artifacts_root()
        root.mkdir(parents=True, exist_ok=True)
        with self._lock:
            number = 1
            while True:
                candidate = root / f"eval-{number:04d}"
                try:
                    candidate.mkdir()
                    return number, candidate
                except FileExistsError:
                    number += 1

    def _model_and_env(self) -> tuple[str, dict[str, str]]:
        from trace_bench._util.masking import register_secret

        env = {**os.environ, **self.settings.extra_env}
        for value in self.settings.extra_env.values():
            register_secret(value)
        if self.settings.route == "gateway":
            if self._gateway is None:
                from trace_bench.llm.gateway import start_gateway

                try:
                    self._gateway = start_gateway()
                except RuntimeError as exc:
                    raise InfraError(f"harbor_route gateway needs a running job: {exc}") from exc
            return "openai/trace-bench-agent", {**env, **self._gateway.client_env()}
        if not self.settings.model:
            raise InfraError("harbor_model is required in real mode: set eval_kwargs.harbor_model or HARBOR_MODEL")
        return str(self.settings.model), env

    def _evaluate(self, template: str) -> Outcome:
        from trace_bench._util.masking import mask_secrets

        number, eval_dir = self._next_eval_dir()
        template_file = eval_dir / "prompt_template.txt"
        template_file.write_text(template, encoding="utf-8")
        job_id = self.context.get("job_id") or os.environ.get("TRACE_BENCH_JOB_ID") or "job"
        job_name = f"tracebench-{job_id}-eval{number:04d}"
        jobs_dir = eval_dir / "harbor_jobs"
        model, env = self._model_and_env()
        argv = build_command(self.settings, job_name=job_name, jobs_dir=jobs_dir, template_file=template_file,
                             model=model)
        (eval_dir / "command.txt").write_text(shlex.join(argv) + "\n", encoding="utf-8")
        started = time.monotonic()
        run = run_harbor(argv, env, self.settings.timeout_s)
        (eval_dir / "stdout.txt").write_text(mask_secrets(run.stdout), encoding="utf-8")
        (eval_dir / "stderr.txt").write_text(mask_secrets(run.stderr), encoding="utf-8")
        if run.timed_out:
            outcome = Outcome("infra", 0.0, f"harbor run exceeded harbor_cli_timeout_seconds={self.settings.timeout_s:g}")
        else:
            outcome = judge(jobs_dir / job_name, run.returncode, mask_secrets(run.stderr))
        for name, data in (("job_result.json", outcome.job), ("trial_result.json", outcome.trial),
                           ("trajectory.json", outcome.trajectory)):
            if data:
                (eval_dir / name).write_text(json.dumps(data, indent=2, default=str), encoding="utf-8")
        record = {"kind": outcome.kind, "score": outcome.score, "feedback": outcome.feedback,
                  "returncode": run.returncode, "timed_out": run.timed_out, "job_name": job_name,
                  "wall_seconds": round(time.monotonic() - started, 3), "route": self.settings.route,
                  "model": model, "extra_env_names": sorted(self.settings.extra_env),
                  "agent_usage": (outcome.trial or {}).get("agent_result") or {},
                  "trial_dir": str(outcome.trial_dir) if outcome.trial_dir else None}
        (eval_dir / "outcome.json").write_text(mask_secrets(json.dumps(record, indent=2, default=str)), encoding="utf-8")
        return outcome


def build_trace_problem(task: str = "regex-log", **eval_kwargs: Any) -> dict[str, Any]:
    from opto import trace

    settings = HarborSettings.from_eval_kwargs(task, eval_kwargs)
    if current_mode({}, eval_kwargs.get("mode")) == "real" and settings.route == "direct" and not settings.model:
        raise ValueError("harbor_model is required in real mode: set eval_kwargs.harbor_model or HARBOR_MODEL")
    if settings.task_path and not Path(settings.task_path).exists():
        raise ValueError(f"harbor_task_path {settings.task_path} does not exist")
    initial = str(eval_kwargs.get("initial_template") or DEFAULT_TEMPLATE)
    template = trace.node(initial, name="prompt_template", trainable=True,
                          description="The Terminus-2 agent's prompt template; must keep {instruction} and "
                                      "{terminal_state} and double literal braces.")
    careful = initial.replace("Work in small, verifiable steps:", "Work in small, verifiable steps; run the "
                              "task's own checks if it names any:")
    return {
        "param": template,
        "guide": TerminalBenchGuide(task, eval_kwargs),
        "train_dataset": {"inputs": [task], "infos": [None]},
        "optimizer_kwargs": {"objective": f"Optimize the Terminus-2 prompt template so the agent solves the "
                                          f"Terminal-Bench task '{task}' (score = the task's test reward).",
                             "memory_size": 5},
        "metadata": {"benchmark": "terminal_bench", "task": task, "dataset": settings.dataset, "env": settings.env,
                     "route": settings.route, "optimizes": "the agent's prompt template (trainable 'prompt_template')",
                     "scoring": "Harbor verifier reward (infrastructure failures end the job as infra_error)"},
        "stub_candidates": [{"prompt_template": careful},
                            {"prompt_template": initial.replace("{terminal_state}", "(screen omitted)")}],
    }

