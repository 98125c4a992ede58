"""Which isolation a process uses: bubblewrap, or the weak mode when the user allowed it.

The setting lives in the environment variable :data:`SETTING_ENV` so that processes a job
starts inherit it: ``strong`` (the default: bubblewrap or nothing), ``weak`` (bubblewrap when it
works, else the weak mode; set by ``sandbox: weak`` in a config or ``--allow-weak-sandbox``) or
``force-weak`` (never bubblewrap; for testing the fallback).  Refusing is the default because a
benchmark whose candidates can read the API key or rewrite their score measures nothing; the
weak mode, chosen by the config or by the variable, is recorded in env.json, in every job's
results (the ``sandbox`` column of results.csv), in summary.json and the report, and a run that
will use it warns on the console when it starts (:func:`weak_warning`).
"""

from __future__ import annotations

import os
import threading

from trace_bench._util.errors import TraceBenchError
from trace_bench.sandbox import policy, server

SETTING_ENV = "TRACE_BENCH_SANDBOX"
SETTINGS = ("strong", "weak", "force-weak")
INSTALL_HINT = ("install bubblewrap (apt-get install bubblewrap, or scripts/install-system-deps.sh), or accept "
                "weaker isolation with `sandbox: weak` in the config or `--allow-weak-sandbox`")
_USED: set[str] = set()
_USED_LOCK = threading.Lock()


class SandboxUnavailable(TraceBenchError, RuntimeError):
    """Candidate code cannot run: bubblewrap does not work here and the weak mode was not allowed.
    The job fails (``job_status``): this machine cannot run the task, the task is not broken and the
    candidate is not at fault."""

    job_status = "failed"


def setting() -> str:
    value = os.environ.get(SETTING_ENV, "").strip().lower() or "strong"
    if value not in SETTINGS:
        raise SandboxUnavailable(f"{SETTING_ENV}={value!r} is not one of {', '.join(SETTINGS)}")
    return value


def allow_weak(allowed: bool) -> None:
    """Let this process (and the processes it starts) fall back to the weak mode; the variable, when it
    already chose ``weak`` or ``force-weak``, keeps its choice (see :func:`sandbox_info`)."""
    if os.environ.get(SETTING_ENV, "").strip().lower() not in ("weak", "force-weak"):
        os.environ[SETTING_ENV] = "weak" if allowed else "strong"


def handle_for(packages: frozenset[str]) -> server.ZygoteHandle:
    """A started sandbox exposing ``packages``, busy until :func:`.server.release`;
    :class:`SandboxUnavailable` when none may run."""
    wanted = setting()
    if wanted == "force-weak":
        return server.get_zygote("weak", packages)
    try:
        return server.get_zygote("bwrap", packages)
    except server.ZygoteUnavailable as exc:
        if wanted != "weak":
            raise SandboxUnavailable(f"candidate code needs the sandbox, and bubblewrap does not work here ({exc}); "
                                     f"{INSTALL_HINT}") from exc
    return server.get_zygote("weak", packages)


def require(*modules: str) -> str:
    """The mode candidate code will run under (starting the sandbox now), or :class:`SandboxUnavailable`.

    ``modules``: the target modules the job will call, so that the sandbox started now shows them
    (one that shows less is replaced on the first call that needs more)."""
    handle = handle_for(policy.view_names(modules))
    server.release(handle)
    return handle.mode


def prepare(*modules: str) -> None:
    """Fail now, without starting anything, where candidate code could not run here (bubblewrap
    missing and the weak mode not allowed), and start the sandbox for ``modules`` in the background,
    so that the first call finds it warm.  A start that fails in the background fails that call."""
    names = prepare_lazily(*modules)

    def start() -> None:
        try:
            server.release(handle_for(names))
        except Exception:  # noqa: BLE001 - remembered by the server, or met again: the first call reports it
            pass

    threading.Thread(target=start, name="trace-bench-sandbox-warm-up", daemon=True).start()


def prepare_lazily(*modules: str) -> frozenset[str]:
    """:func:`prepare` without the start: the same refusal now, and the view for ``modules`` built
    here (the first call, which starts the sandbox, finds it built); returns the view's names.

    For code that may never need the sandbox (a trainable code node whose code no optimizer
    rewrites: most stub runs), so that such a job starts no sandbox at all; the first call then
    waits for the start (~0.1-0.3 s) instead of finding it warm."""
    wanted = setting()
    if wanted == "strong":
        missing = policy.quick_check()
        if missing:
            raise SandboxUnavailable(f"candidate code needs the sandbox, and bubblewrap does not work here "
                                     f"({missing}); {INSTALL_HINT}")

    names = policy.view_names(modules)
    if wanted != "force-weak":
        # The view's import closure parses source files with ``ast``: here, not in a thread.
        # CPython 3.11 keeps one AST recursion counter per interpreter, and the thread's parsing,
        # racing the job's own (opto's ``bundle``), failed with "SystemError: AST constructor
        # recursion depth mismatch" (seen in CI); either thread could get it.
        policy.own_files(names)
    return names


def availability() -> dict[str, str]:
    """What this machine gives, without raising: ``{"setting", "mode", "reason"}`` (mode "" = none)."""
    try:
        wanted = setting()
    except SandboxUnavailable as exc:
        return {"setting": os.environ.get(SETTING_ENV, ""), "mode": "", "reason": str(exc)}
    try:
        return {"setting": wanted, "mode": require(), "reason": ""}
    except (SandboxUnavailable, server.ZygoteUnavailable) as exc:
        return {"setting": wanted, "mode": "", "reason": str(exc)}


def sandbox_info(configured: str) -> dict[str, str]:
    """The run's sandbox setting for env.json (each job's results.json records the mode it really used).

    ``setting`` is what jobs get: ``weak`` when the config (``sandbox: weak``, ``--allow-weak-sandbox``)
    or the variable (``TRACE_BENCH_SANDBOX=weak`` or ``force-weak``) chose it; ``chosen_by`` says which;
    ``bubblewrap`` is ``unused`` when the variable forces the weak mode although it is available."""
    variable = os.environ.get(SETTING_ENV, "").strip().lower()
    missing = policy.quick_check()
    weak = configured == "weak" or variable in ("weak", "force-weak")
    chosen_by = "" if not weak else "config" if configured == "weak" else f"{SETTING_ENV}={variable}"
    bubblewrap = "unavailable" if missing else "unused" if variable == "force-weak" else "available"
    return {"setting": "weak" if weak else "strong", "chosen_by": chosen_by, "bubblewrap": bubblewrap,
            "reason": missing or ""}


def weak_warning(info: dict[str, str]) -> str:
    """The warning a run prints when its LLM-written code will run in the weak mode ("" when it will not)."""
    if info.get("setting") != "weak" or info.get("bubblewrap") == "available":
        return ""
    why = info.get("reason") or "forced"
    return (f"LLM-written code runs in the WEAK sandbox ({why}; chosen by {info.get('chosen_by') or 'the config'}): "
            "it is not isolated from this machine's files, and the run records it as weak.")


def record_use(mode: str) -> None:
    with _USED_LOCK:
        _USED.add(mode)


def used_modes() -> list[str]:
    """The modes this process's calls ran under so far (for a job's results)."""
    with _USED_LOCK:
        return sorted(_USED)
