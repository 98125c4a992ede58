"""Reading what one ``harbor run`` left behind, and deciding what it means.

Harbor (>= 0.6) writes ``<jobs-dir>/<job-name>/result.json`` (the job) and one trial directory per
trial, ``<task>__<id>/``, holding ``result.json`` (``verifier_result.rewards.reward``,
``exception_info``, ``agent_result`` token counts) and the agent's ATIF trajectory
(``agent/trajectory.json``).  :func:`judge` turns them into an :class:`Outcome`:

- a verifier reward exists -> a *task* outcome: score = reward (also when the agent hit its own
  timeout first: the verifier still judged the terminal);
- no reward, and the trial's exception is the agent's own (:data:`AGENT_FAILURES`) -> score 0;
- otherwise (exit != 0 without a trial result, another exception, unreadable JSON) -> ``infra``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

AGENT_FAILURES = ("AgentTimeoutError", "ContextLengthExceededError", "OutputLengthExceededError")
_REWARD_KEYS = ("reward", "score", "resolved", "success", "passed")


@dataclass
class Outcome:
    kind: str  # "task" or "infra"
    score: float
    feedback: str
    trial: dict[str, Any] = field(default_factory=dict)
    job: dict[str, Any] = field(default_factory=dict)
    trajectory: Any = None
    trial_dir: Path | None = None


def _load(path: Path) -> tuple[Any, str]:
    try:
        return json.loads(path.read_text(encoding="utf-8")), ""
    except (OSError, ValueError) as exc:
        return None, f"{path.name}: {type(exc).__name__}: {exc}"


def trial_dirs(job_dir: Path) -> list[Path]:
    if not job_dir.is_dir():
        return []
    return sorted(p for p in job_dir.iterdir() if p.is_dir() and (p / "result.json").is_file())


def reward_of(trial: dict[str, Any]) -> float | None:
    """The verifier's reward: ``verifier_result.rewards.reward`` (or the first numeric reward)."""
    verifier = trial.get("verifier_result") or {}
    rewards = verifier.get("rewards") if isinstance(verifier, dict) else None
    candidates: list[Any] = []
    if isinstance(rewards, dict):
        candidates += [rewards[k] for k in _REWARD_KEYS if k in rewards] + list(rewards.values())
    elif isinstance(verifier, dict):
        candidates += [verifier[k] for k in _REWARD_KEYS if k in verifier]
    for value in candidates:
        if isinstance(value, bool):
            return float(value)
        if isinstance(value, (int, float)):
            return float(value)
    return None


def trajectory_snippet(trajectory: Any, steps: int = 6, width: int = 280) -> str:
    """The last few ATIF steps (source, message, tool calls), for the optimizer's feedback."""
    if not isinstance(trajectory, dict):
        return ""
    items = trajectory.get("steps") or (trajectory.get("trajectory") or {}).get("steps") or []
    lines = []
    for step in items[-steps:]:
        if not isinstance(step, dict):
            continue
        text = str(step.get("message") or step.get("content") or "").strip().replace("\n", " ")[:width]
        tools = [str(c.get("function_name") or c.get("name") or "?") for c in step.get("tool_calls") or []
                 if isinstance(c, dict)][:3]
        lines.append(f"- [{step.get('source') or step.get('role') or 'step'}] {text}"
                     + (f" (tools: {', '.join(tools)})" if tools else ""))
    return (f"Last {len(lines)} of {len(items)} agent steps:\n" + "\n".join(lines)) if lines else ""


def judge(job_dir: Path, returncode: int, stderr: str) -> Outcome:
    """What a finished ``harbor run`` means (see module docstring)."""
    job, job_error = _load(job_dir / "result.json") if (job_dir / "result.json").exists() else ({}, "")
    trials = trial_dirs(job_dir)
    if not trials:
        why = f"harbor exited with code {returncode} without a trial result"
        detail = job_error or stderr.strip()[-600:] or "no output"
        return Outcome("infra", 0.0, f"{why}: {detail}", job=job or {})
    trial, trial_error = _load(trials[0] / "result.json")
    if not isinstance(trial, dict):
        return Outcome("infra", 0.0, f"unreadable trial result: {trial_error or 'not a JSON object'}", job=job or {},
                       trial_dir=trials[0])
    trajectory = None
    found = sorted(trials[0].rglob("trajectory.json"))
    if found:
        trajectory, _ = _load(found[0])
    reward = reward_of(trial)
    exception = trial.get("exception_info") or None
    kind_name = str((exception or {}).get("exception_type") or "") if isinstance(exception, dict) else ""
    message = str((exception or {}).get("exception_message") or "")[:400] if isinstance(exception, dict) else ""
    snippet = trajectory_snippet(trajectory)
    if reward is not None:
        verdict = "passed" if reward >= 1.0 else "failed" if reward <= 0.0 else "partially passed"
        note = f" (the agent stopped with {kind_name}: {message})" if kind_name else ""
        feedback = f"The task's tests {verdict}: reward {reward:g}{note}."
        return Outcome("task", reward, _join(feedback, snippet), trial, job or {}, trajectory, trials[0])
    if kind_name in AGENT_FAILURES:
        feedback = f"The agent failed before the tests ran: {kind_name}: {message}"
        return Outcome("task", 0.0, _join(feedback, snippet), trial, job or {}, trajectory, trials[0])
    if exception:
        return Outcome("infra", 0.0, f"trial failed with {kind_name or 'an exception'}: {message}", trial, job or {},
                       trajectory, trials[0])
    return Outcome("infra", 0.0, "the trial has neither a verifier reward nor an exception", trial, job or {},
                   trajectory, trials[0])


def _join(feedback: str, snippet: str) -> str:
    return f"{feedback}\n{snippet}"[:4000] if snippet else feedback
