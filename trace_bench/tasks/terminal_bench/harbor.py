"""Running ``harbor run`` for one evaluation of a prompt template.

Settings come from ``eval_kwargs`` (the seeds' contract) and the environment; secrets are read
only from the environment and never written to disk: ``command.txt`` holds the argv (no env),
``outcome.json`` names the extra env variables but not their values, and Harbor's stdout/stderr
are stored with secret values masked.

- ``harbor_dataset`` (default ``terminal-bench@2.0``) or ``harbor_task_path`` (a local task dir);
- ``harbor_env``: ``docker``, ``daytona``, ...; default ``daytona`` when ``DAYTONA_API_KEY`` is set,
  else ``docker``;
- ``harbor_model`` (else env ``HARBOR_MODEL``; required in real mode unless routed through the
  gateway);
- ``harbor_route``: ``direct`` (default: Harbor's LiteLLM calls the model with the keys in the
  environment, as in the original) or ``gateway`` (Harbor's agent calls the job's loopback gateway,
  so its calls are metered, budgeted and cached like every other call of the job);
- ``harbor_cli_timeout_seconds`` (default 1800), ``harbor_agent_kwargs`` (dict, passed as
  ``--agent-kwarg k=v``), ``harbor_extra_env`` (dict merged into Harbor's environment).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trace_bench._util.processes import communicate_or_kill
from trace_bench.tasks.terminal_bench.errors import InfraError

AGENT_IMPORT_PATH = "trace_bench.tasks.terminal_bench.agent:TraceBenchTerminus2"
DEFAULT_DATASET = "terminal-bench@2.0"


@dataclass
class HarborSettings:
    slug: str
    dataset: str = DEFAULT_DATASET
    task_path: str | None = None
    env: str = "docker"
    model: str | None = None
    route: str = "direct"
    timeout_s: float = 1800.0
    agent_kwargs: dict[str, Any] = field(default_factory=dict)
    extra_env: dict[str, str] = field(default_factory=dict, repr=False)

    @classmethod
    def from_eval_kwargs(cls, slug: str, kwargs: dict[str, Any]) -> HarborSettings:
        route = str(kwargs.get("harbor_route") or "direct")
        if route not in ("direct", "gateway"):
            raise ValueError(f"harbor_route must be 'direct' or 'gateway', got {route!r}")
        env = kwargs.get("harbor_env") or ("daytona" if os.environ.get("DAYTONA_API_KEY") else "docker")
        return cls(slug=slug, dataset=str(kwargs.get("harbor_dataset") or DEFAULT_DATASET),
                   task_path=kwargs.get("harbor_task_path"), env=str(env),
                   model=kwargs.get("harbor_model") or os.environ.get("HARBOR_MODEL"), route=route,
                   timeout_s=float(kwargs.get("harbor_cli_timeout_seconds") or 1800.0),
                   agent_kwargs=dict(kwargs.get("harbor_agent_kwargs") or {}),
                   extra_env={str(k): str(v) for k, v in (kwargs.get("harbor_extra_env") or {}).items()})


def build_command(settings: HarborSettings, *, job_name: str, jobs_dir: Path, template_file: Path,
                  model: str) -> list[str]:
    """The ``harbor run`` argv for one evaluation (one task, one trial)."""
    argv = [shutil.which("harbor") or "harbor", "run", "--job-name", job_name, "--jobs-dir", str(jobs_dir)]
    if settings.task_path:
        argv += ["--path", str(settings.task_path)]
    else:
        argv += ["--dataset", settings.dataset, "--task-name", settings.slug, "--n-tasks", "1"]
    argv += ["--agent-import-path", AGENT_IMPORT_PATH, "--model", model,
             "--agent-kwarg", f"prompt_template_path={template_file}"]
    for key, value in settings.agent_kwargs.items():
        argv += ["--agent-kwarg", f"{key}={value}"]
    return argv + ["--env", settings.env, "--n-concurrent", "1", "--quiet"]


@dataclass
class HarborRun:
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool = False


def run_harbor(argv: list[str], env: dict[str, str], timeout_s: float) -> HarborRun:
    """Run Harbor in its own session; on timeout its whole process group is killed."""
    if shutil.which(argv[0]) is None and not Path(argv[0]).exists():
        raise InfraError("harbor not found: install trace-bench[terminal-bench] (Python >= 3.12) "
                         "or put the harbor CLI on PATH")
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                start_new_session=True)
    except OSError as exc:
        raise InfraError(f"cannot start harbor: {exc}") from exc
    out, err, timed_out = communicate_or_kill(proc, timeout_s)
    if timed_out:
        return HarborRun(124, out, err, timed_out=True)
    return HarborRun(proc.returncode, out, err)
