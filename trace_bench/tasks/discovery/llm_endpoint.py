"""The LLM endpoint an evaluator sees in the sandbox (sandbox side; the job side is :mod:`.llm_link`).

The sandbox has no network, only its own loopback.  An evaluator that calls an LLM (a prompt
folder's) gets an OpenAI-compatible URL on that loopback: :func:`open_endpoint` listens on
``127.0.0.1``, and hands every connection it accepts, as a file descriptor, to the job over the
call's channel (a Unix socket); the job relays the bytes to the run's metered gateway.  No byte is
interpreted here, and nothing else leaves the sandbox.

:func:`point_configs` rewrites the evaluator's own config files the way it would read its endpoint
(OpenEvolve's prompt evaluators read ``llm.api_base`` from their ``config.yaml``), and
:func:`environment` sets the variables OpenAI-compatible clients read (``OPENAI_API_KEY``,
``OPENAI_BASE_URL``, ``OPENAI_API_BASE``).
"""

from __future__ import annotations

import os
import socket
import threading
from typing import Any

MODEL_KEYS = ("models", "evaluator_models", "guide_models")


def open_endpoint(channel_fd: int) -> str:
    """Listen on the sandbox's loopback; each accepted connection goes to the job (see the module doc)."""
    channel = socket.socket(fileno=channel_fd)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(32)
    port = listener.getsockname()[1]

    def serve() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            try:
                socket.send_fds(channel, [b"c"], [connection.fileno()])
            except OSError:
                connection.close()
                return
            connection.close()

    threading.Thread(target=serve, name="llm-endpoint", daemon=True).start()
    return f"http://127.0.0.1:{port}/v1"


def environment(base_url: str, key: str) -> None:
    os.environ.update({"OPENAI_API_KEY": key, "OPENAI_BASE_URL": base_url, "OPENAI_API_BASE": base_url})


def _point(section: Any, base_url: str, key: str) -> None:
    if not isinstance(section, dict):
        return
    section["api_base"] = base_url
    if section.get("api_key") is not None:
        section["api_key"] = key
    for name in MODEL_KEYS:
        for model in section.get(name) or []:
            if isinstance(model, dict):
                model["api_base"] = base_url
                if model.get("api_key") is not None:
                    model["api_key"] = key


def point_configs(paths: list[str], base_url: str, key: str) -> None:
    """Rewrite ``llm.api_base`` (and the models' ``api_base``) of each YAML file at ``paths``."""
    import yaml

    for path in paths:
        try:
            with open(path, encoding="utf-8") as handle:
                data = yaml.safe_load(handle)
        except (OSError, yaml.YAMLError):
            continue
        if not isinstance(data, dict):
            continue
        data.setdefault("llm", {})
        _point(data["llm"], base_url, key)
        with open(path, "w", encoding="utf-8") as handle:
            yaml.safe_dump(data, handle, sort_keys=False)
