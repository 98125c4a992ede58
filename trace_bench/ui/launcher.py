"""Start, stop and resume ``trace-bench run`` as background processes for the UI.

A run launched from the browser is an ordinary CLI run in its own session (process group): the
UI never runs a benchmark inside a request, a UI restart leaves the run going, and Stop uses the
driver's own signal contract.  SIGTERM makes the driver kill its running jobs, record them as
``interrupted`` and write its tables; the whole process group then gets SIGTERM (and SIGKILL
after a grace period) so nothing is left behind.  The run stays resumable with ``--resume``.

The UI knows a launched run's directory from the start: a new run's config is saved with an
explicit ``run_id`` (the one the runner would pick), and a resumed run names its directory.
:meth:`Launch.resolve_run_dir` returns it once the store sees a run there (the driver writes the
config snapshot right after it locks the run), never by parsing the driver's output.

An API key typed in the browser goes to the child's environment only, under the variable the
config names in ``llm.api_key_env``; it is registered with the masking layer so that the
driver's log, when shown, cannot echo it.  The launcher keeps it in memory for that run (never
on disk), so Resume after Stop sends it again without asking; a resume that needs a key the server
does not hold (the server restarted since) asks for one.

Key policy: the server's own keys (its environment) may only travel to the provider endpoint
configured when the server started (``OPENAI_API_BASE`` and friends, else the providers' default
endpoints) or to this machine.  A config naming any other ``base_url`` is started only with a key
typed for that launch, and its child then gets an environment without the server's secrets.
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from trace_bench._util.errors import TraceBenchError
from trace_bench._util.masking import register_secret, secret_name
from trace_bench.store.models import StoreError
from trace_bench.store.run_store import RunStore
from trace_bench.ui.readers import tail_lines

DEFAULT_KEY_ENV = "OPENAI_API_KEY"


class LaunchError(TraceBenchError, ValueError):
    """The run could not be started; the message says what to fix."""


@dataclass
class Launch:
    launch_id: str
    command: list[str]
    log_path: Path
    process: subprocess.Popen[bytes]
    runs_dir: Path
    run_dir: Path
    started: float = field(default_factory=time.time)
    stop_requested: bool = False
    config_path: Path | None = None

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    @property
    def returncode(self) -> int | None:
        return self.process.poll()

    def resolve_run_dir(self) -> Path | None:
        """The run directory, once the driver has created it (None before, or if it never does)."""
        return self.run_dir if RunStore.is_run(self.run_dir) else None


def prepare_config(text: str, mode: str | None, tasks_root: str | None = None) -> tuple[str, str]:
    """Validate the editor's YAML as ``trace-bench run`` would before its first job (schema, then the
    matrix: known tasks, trainers and knob values), apply the mode override and fix the run's id (the
    config's own ``run_id``, else a new one); return (yaml text, api key env name).  A config error is
    a one-line ``LaunchError`` naming the config "the editor", never a server path."""
    from trace_bench._util.errors import ConfigError
    from trace_bench.config.loader import parse_config, parse_yaml_text
    from trace_bench.runner.run import plan_run_id
    from trace_bench.runner.validation import validate_config

    try:
        data = parse_yaml_text(text) if text and text.strip() else None
    except ConfigError as exc:
        raise LaunchError(f"the config is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise LaunchError("the config is empty or not a mapping: pick a config or paste YAML with tasks and trainers")
    if mode in ("stub", "real"):
        data["mode"] = mode
    try:
        config = parse_config(data)
        if config.tasks and config.trainers:
            validate_config(config, root=tasks_root)
    except ConfigError as exc:
        raise LaunchError(f"invalid config: {_one_line(str(exc.with_file('the editor')))}") from None
    if not config.tasks or not config.trainers:
        raise LaunchError("the config lists no tasks or no trainers")
    data["run_id"] = plan_run_id(config)  # run-local: the config hash (and so every job id) does not change
    return yaml.safe_dump(data, sort_keys=False), config.llm.api_key_env or DEFAULT_KEY_ENV


def _one_line(message: str) -> str:
    return " ".join(message.split())


def start_failure(launch: Launch) -> str:
    """Why a launch ended before creating its run: the driver's error line, one line, with the
    launch's own config path (a server path) replaced by "the editor"."""
    lines = [line for line in tail_lines(launch.log_path, 40).splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("trace-bench: error:")]
    line = (errors or lines or [f"the run did not start (exit code {launch.returncode})"])[-1]
    if launch.config_path is not None:
        line = line.replace(str(launch.config_path), "the editor")
    return _one_line(line.removeprefix("trace-bench: error:").strip())


def _endpoint(url: str) -> str:
    return url.strip().rstrip("/").lower()


def trusted_endpoint() -> str | None:
    """The provider endpoint configured in this process's environment (None: the providers' defaults)."""
    from trace_bench.llm.providers import resolve_base_url

    configured = resolve_base_url(None, None)
    return _endpoint(configured) if configured else None


def foreign_endpoints(llm: dict[str, Any], trusted: str | None) -> list[str]:
    """The config's ``base_url``s that are neither the server's endpoint nor on this machine."""
    from trace_bench.llm.credentials import is_loopback_url

    urls = [llm.get("base_url"), *((role or {}).get("base_url") for role in (llm.get("roles") or {}).values())]
    return sorted({u for u in urls if u and not is_loopback_url(u) and _endpoint(u) != trusted})


def _llm_of(data: dict[str, Any] | str) -> dict[str, Any]:
    """The ``llm`` block of a config (its YAML text or its data) that calls providers (empty in
    stub mode or replay: no call leaves)."""
    from trace_bench.config.loader import parse_config, parse_yaml_text

    config = parse_config(parse_yaml_text(data) if isinstance(data, str) else data)
    if config.mode == "stub" or config.llm.cache == "replay":
        return {}
    return config.llm.model_dump(mode="json")


def snapshot_key_env(run_dir: Path) -> str:
    try:
        data = RunStore(run_dir).read_snapshot() or {}
    except StoreError:
        return DEFAULT_KEY_ENV
    llm = data.get("llm")
    return str((llm if isinstance(llm, dict) else {}).get("api_key_env") or DEFAULT_KEY_ENV)


class Launcher:
    """The runs started by one UI server (shared by all browser sessions of that server)."""

    def __init__(self, runs_dir: str | Path, tasks_root: str | None = None, python: str | None = None) -> None:
        self.runs_dir = Path(runs_dir).resolve()
        self.tasks_root = tasks_root
        self.python = python or sys.executable
        self.launches: dict[str, Launch] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self.trusted_endpoint = trusted_endpoint()  # fixed at server start: later env changes do not widen it
        self._typed_keys: dict[Path, str] = {}  # run dir -> the key typed for it (memory only, never written)

    @property
    def work_dir(self) -> Path:
        return self.runs_dir / ".ui"

    def start(self, config_text: str, *, mode: str | None = None, max_workers: int | None = None,
              job_timeout: float | None = None, api_key: str | None = None) -> Launch:
        text, key_env = prepare_config(config_text, mode, self.tasks_root)
        foreign = self._key_policy(_llm_of(text), api_key)
        launch_id = self._new_id()
        self.work_dir.mkdir(parents=True, exist_ok=True)
        config_path = self.work_dir / f"{launch_id}.yaml"
        config_path.write_text(text, encoding="utf-8")
        args = ["run", "--config", str(config_path), "--runs-dir", str(self.runs_dir)]
        run_id = str(yaml.safe_load(text)["run_id"])
        launch = self._spawn(launch_id, args, max_workers, job_timeout, api_key, key_env,
                             run_dir=self.runs_dir / run_id, isolate=bool(foreign))
        launch.config_path = config_path
        self._remember_key(launch.run_dir, api_key)
        return launch

    def _remember_key(self, run_dir: Path, api_key: str | None) -> None:
        if api_key and api_key.strip():
            with self._lock:
                self._typed_keys[run_dir.resolve()] = api_key.strip()

    def typed_key(self, run_dir: str | Path) -> str | None:
        """The key typed for this run in this server's life, if any (for Resume)."""
        with self._lock:
            return self._typed_keys.get(Path(run_dir).resolve())

    def resume(self, run_dir: str | Path, *, max_workers: int | None = None, job_timeout: float | None = None,
               api_key: str | None = None) -> Launch:
        run_dir = Path(run_dir).resolve()
        if not RunStore(run_dir).snapshot_path.exists():
            raise LaunchError(f"{run_dir.name} has no meta/config.snapshot.yaml; it cannot be resumed")
        active = self.for_run(run_dir)
        if active is not None:
            raise LaunchError(f"{run_dir.name} is already running (launch {active.launch_id})")
        try:
            llm = _llm_of(RunStore(run_dir).read_snapshot() or {})
        except (OSError, ValueError, StoreError) as exc:
            raise LaunchError(f"{run_dir.name}: its config snapshot cannot be read: {exc}") from None
        api_key = api_key if api_key and api_key.strip() else self.typed_key(run_dir)
        foreign = self._key_policy(llm, api_key)
        if llm and not api_key:
            _need_key(run_dir, llm)
        args = ["run", "--resume", str(run_dir), "--runs-dir", str(run_dir.parent)]
        launch = self._spawn(self._new_id(), args, max_workers, job_timeout, api_key, snapshot_key_env(run_dir),
                             run_dir=run_dir, isolate=bool(foreign))
        self._remember_key(run_dir, api_key)
        return launch

    def _key_policy(self, llm: dict[str, Any], api_key: str | None) -> list[str]:
        """The config's foreign endpoints; LaunchError when there are some and no key was typed."""
        foreign = foreign_endpoints(llm, self.trusted_endpoint)
        if foreign and not (api_key and api_key.strip()):
            allowed = self.trusted_endpoint or "the providers' default endpoints"
            raise LaunchError(f"this config sends LLM requests to {', '.join(foreign)}; the server's API keys only go "
                              f"to {allowed} or to this machine. Type the API key for that endpoint to start it.")
        return foreign

    def _new_id(self) -> str:
        with self._lock:
            return f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-{next(self._ids)}"

    def _spawn(self, launch_id: str, args: list[str], max_workers: int | None, job_timeout: float | None,
               api_key: str | None, key_env: str, run_dir: Path, isolate: bool = False) -> Launch:
        if self.tasks_root:
            args += ["--root", str(self.tasks_root)]
        if max_workers:
            args += ["--max-workers", str(int(max_workers))]
        if job_timeout:
            args += ["--job-timeout", str(float(job_timeout))]
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        if isolate:  # a foreign endpoint: none of the server's secrets, only the key typed for this launch
            env = {name: value for name, value in env.items() if not secret_name(name)}
        if api_key and api_key.strip():
            register_secret(api_key.strip())
            env[key_env] = api_key.strip()
        self.work_dir.mkdir(parents=True, exist_ok=True)
        log_path = self.work_dir / f"{launch_id}.log"
        command = [self.python, "-m", "trace_bench", *args]
        with open(log_path, "wb") as log:
            process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                       env=env, start_new_session=True)
        launch = Launch(launch_id, command, log_path, process, self.runs_dir, run_dir=run_dir)
        with self._lock:
            self.launches[launch_id] = launch
        return launch

    def get(self, launch_id: str | None) -> Launch | None:
        return self.launches.get(launch_id) if launch_id else None

    def running_dirs(self) -> set[Path]:
        """Run directories that a live launch of this server is writing."""
        return {launch.run_dir.resolve() for launch in list(self.launches.values()) if launch.alive}

    def latest(self) -> Launch | None:
        return list(self.launches.values())[-1] if self.launches else None

    def for_run(self, run_dir: str | Path | None, alive_only: bool = True) -> Launch | None:
        """The newest launch writing ``run_dir`` (only a live one unless ``alive_only`` is false)."""
        if not run_dir:
            return None
        target = Path(run_dir).resolve()
        for launch in reversed(list(self.launches.values())):
            resolved = launch.resolve_run_dir()
            if resolved is not None and resolved.resolve() == target and (launch.alive or not alive_only):
                return launch
        return None

    def stop(self, launch: Launch, grace_s: float = 20.0) -> None:
        """Cancel a run: SIGTERM to the driver, then to its whole process group; returns at once."""
        launch.stop_requested = True
        if not launch.alive:
            return
        try:
            os.kill(launch.process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        threading.Thread(target=_reap_group, args=(launch.process, grace_s), daemon=True,
                         name=f"stop-{launch.launch_id}").start()

    def describe(self, launch: Launch | None) -> str:
        if launch is None:
            return ""
        code = launch.returncode
        if code is None:
            return "stopping…" if launch.stop_requested else "running"
        if launch.stop_requested:
            return f"stopped (exit {code}); resumable with Resume"
        return "finished" if code == 0 else f"ended with exit code {code}"


def _need_key(run_dir: Path, llm: dict[str, Any]) -> None:
    """LaunchError asking for the key when the run's provider needs one that neither the server's
    environment nor this server's memory holds (it was typed before a restart)."""
    from trace_bench.llm.credentials import missing_credentials

    missing = missing_credentials(llm)
    if missing:
        raise LaunchError(f"{run_dir.name} needs an API key this server does not hold ({'; '.join(missing)}): "
                          "type it to resume (a key typed at Start is kept only while the server runs)")


def _reap_group(process: subprocess.Popen[Any], grace_s: float) -> None:
    """Let the driver record its interrupted jobs, then make sure its whole group is gone."""
    try:
        process.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        pass
    for sig, wait_s in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 0.0)):
        if not _group_signal(process.pid, sig):
            break
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline and (process.poll() is None or _group_signal(process.pid, 0)):
            time.sleep(0.1)
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def _group_signal(pgid: int, sig: int) -> bool:
    """Send ``sig`` to a process group; False when the group no longer exists."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True
