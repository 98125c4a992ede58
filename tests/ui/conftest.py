"""On a failed browser test, keep a screenshot and the page's HTML under test-artifacts/ui/."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import REPO


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.when != "call" or not report.failed or "page" not in getattr(item, "funcargs", {}):
        return
    page = item.funcargs["page"]
    out = REPO / "test-artifacts" / "ui"
    out.mkdir(parents=True, exist_ok=True)
    try:
        page.screenshot(path=str(out / f"failure-{item.name}.png"), full_page=True)
        (out / f"failure-{item.name}.html").write_text(page.content(), encoding="utf-8")
    except Exception:  # noqa: BLE001 - best effort: the browser may be gone
        pass
