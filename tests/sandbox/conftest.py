"""Sandbox tests run under the strong isolation; where bubblewrap is missing they fail, not pass.

``make test`` installs bubblewrap (scripts/install-system-deps.sh).  A machine that lacks it and
cannot install it (not root, or no apt-get) skips these tests with the reason; every other
machine fails them, so a broken install can never look like a passing red-team suite.
"""

from __future__ import annotations

import os
import shutil
import sys

import pytest

from trace_bench.sandbox import SETTING_ENV, availability, shutdown


@pytest.fixture(autouse=True)
def _default_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SETTING_ENV, raising=False)


_AVAILABLE: dict[str, str] = {}


def require_bwrap() -> None:
    """Require the bubblewrap sandbox: fail where it should exist, skip (with why) where it cannot."""
    if not _AVAILABLE:
        saved = os.environ.pop(SETTING_ENV, None)
        try:
            _AVAILABLE.update(availability())
        finally:
            if saved is not None:
                os.environ[SETTING_ENV] = saved
    if _AVAILABLE["mode"] == "bwrap":
        return
    reason = _AVAILABLE["reason"] or f"the sandbox runs in mode {_AVAILABLE['mode']!r}"
    can_install = sys.platform.startswith("linux") and hasattr(os, "geteuid") and os.geteuid() == 0 \
        and shutil.which("apt-get") is not None
    if can_install:
        pytest.fail(f"the bubblewrap sandbox is not working: {reason} (run scripts/install-system-deps.sh)")
    pytest.skip(f"bubblewrap sandbox unavailable and not installable here (not root or no apt-get): {reason}")


@pytest.fixture
def strong() -> None:
    require_bwrap()


@pytest.fixture
def fresh_sandbox() -> None:
    """A sandbox started for this test alone (e.g. after changing what it must expose)."""
    shutdown()
    yield
    shutdown()
