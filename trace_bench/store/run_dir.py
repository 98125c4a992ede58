"""The run directory layout (the original Trace-Bench tree, kept exactly) and its meta files."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from dataclasses import dataclass
from importlib.metadata import distributions
from pathlib import Path
from typing import Any

from trace_bench.store.atomic import write_json
from trace_bench.store.events import utc_now
from trace_bench.store.masking import mask_secrets, secret_name

_ENV_PREFIXES = ("TRACE_", "OPENAI_", "OPENROUTER_", "ANTHROPIC_", "AZURE_", "GEMINI_", "HF_", "HUGGINGFACE_",
                 "LITELLM_", "HARBOR_", "DAYTONA_", "MLFLOW_", "RAY_", "CUDA_")
_ENV_NAMES = ("PYTHONPATH", "PYTHONHASHSEED", "OMP_NUM_THREADS")


@dataclass(frozen=True)
class JobPaths:
    root: Path

    @property
    def meta(self) -> Path:
        return self.root / "job_meta.json"

    @property
    def results(self) -> Path:
        return self.root / "results.json"

    @property
    def events(self) -> Path:
        return self.root / "events.jsonl"

    @property
    def stdout(self) -> Path:
        return self.root / "stdout.log"

    @property
    def artifacts(self) -> Path:
        return self.root / "artifacts"

    @property
    def curve(self) -> Path:
        return self.artifacts / "curve.csv"

    @property
    def state_history(self) -> Path:
        return self.artifacts / "state_history.jsonl"

    @property
    def ledger(self) -> Path:
        """Budget spent by earlier attempts of this job (survives resume)."""
        return self.root / "attempts.json"

    def state_file(self, kind: str) -> Path:
        return self.artifacts / f"{kind}_state.yaml"


@dataclass(frozen=True)
class RunPaths:
    root: Path

    @property
    def meta(self) -> Path:
        return self.root / "meta"

    @property
    def snapshot(self) -> Path:
        return self.meta / "config.snapshot.yaml"

    @property
    def manifest(self) -> Path:
        return self.meta / "manifest.json"

    @property
    def env(self) -> Path:
        return self.meta / "env.json"

    @property
    def git(self) -> Path:
        return self.meta / "git.json"

    @property
    def files_index(self) -> Path:
        return self.meta / "files_index.json"

    @property
    def results_csv(self) -> Path:
        return self.root / "results.csv"

    @property
    def summary(self) -> Path:
        return self.root / "summary.json"

    @property
    def leaderboard(self) -> Path:
        return self.root / "leaderboard.csv"

    @property
    def events(self) -> Path:
        return self.root / "events.jsonl"

    @property
    def jobs(self) -> Path:
        return self.root / "jobs"

    @property
    def llm_cache(self) -> Path:
        """The run's record of LLM exchanges when ``llm.cache`` is on and no ``cache_path`` is given."""
        return self.root / "llm_cache.sqlite"

    def job(self, job_id: str) -> JobPaths:
        return JobPaths(self.jobs / job_id)


def environment_info() -> dict[str, Any]:
    """Python, platform, packages and the relevant environment (secret values masked)."""
    env: dict[str, str] = {}
    for name, value in sorted(os.environ.items()):
        if name.startswith(_ENV_PREFIXES) or name in _ENV_NAMES:
            env[name] = "***" if secret_name(name) else mask_secrets(value)
    packages = {}
    for dist in distributions():
        name = dist.metadata.get("Name")
        if name:
            packages[name] = dist.version
    return {
        "captured_at": utc_now(),
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "env": env,
        "packages": dict(sorted(packages.items(), key=lambda kv: kv[0].lower())),
    }


def git_info(start: Path | None = None) -> dict[str, Any]:
    cwd = start or Path.cwd()

    def git(*args: str) -> str | None:
        try:
            out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=5, check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        return out.stdout.strip() if out.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if commit is None:
        return {"is_repo": False}
    status = git("status", "--porcelain") or ""
    return {"is_repo": True, "commit": commit, "branch": git("rev-parse", "--abbrev-ref", "HEAD"),
            "dirty": bool(status.strip()), "repo_root": git("rev-parse", "--show-toplevel")}


def write_files_index(paths: RunPaths) -> None:
    """Every file of the run with its size, so a reader knows what exists without listing dirs."""
    files = []
    for path in sorted(paths.root.rglob("*")):
        if path.is_file() and not path.name.startswith("."):
            try:
                size = path.stat().st_size
            except OSError:
                continue
            files.append({"path": str(path.relative_to(paths.root)), "bytes": size})
    write_json(paths.files_index, {"schema_version": 1, "run_dir": str(paths.root), "generated_at": utc_now(),
                                   "files": files})
