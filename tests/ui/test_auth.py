"""The UI server refuses every request without its token: each route of the app Gradio builds
(enumerated from the app itself, ``/gradio_api/*``, static and file routes included) answers 401
to a request without it, and works with it (query parameter, then cookie; or a header)."""

from __future__ import annotations

import http.client
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.conftest import REPO, require

require("gradio")
# the modules that start gradio in the test process share a worker, which imports it once
pytestmark = pytest.mark.xdist_group("gradio")


def _routes(routes: list[Any], prefix: str = "") -> Iterator[tuple[str, set[str], str]]:
    """(path, methods, kind) of every route, recursing into mounts and included routers."""
    for route in routes:
        if hasattr(route, "original_router"):  # FastAPI's included router (/gradio_api/...)
            yield from _routes(route.original_router.routes, prefix + route.include_context.prefix)
        elif type(route).__name__ == "Mount":
            inner = getattr(route, "routes", None) or []
            if inner:
                yield from _routes(inner, prefix + route.path)
            else:  # a mounted ASGI app (static files)
                yield prefix + route.path + "/x", {"GET"}, "mount"
        elif type(route).__name__ == "WebSocketRoute":
            yield prefix + route.path, {"GET"}, "websocket"
        elif hasattr(route, "path"):
            yield prefix + route.path, set(getattr(route, "methods", None) or {"GET"}), "http"


def _concrete(path: str) -> str:
    path = re.sub(r"\{[^}]*:path\}", "x.txt", path)
    return re.sub(r"\{[^}]*\}", "1", path)


def _request(port: int, method: str, path: str, headers: dict[str, str] | None = None) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    body = b"{}" if method in ("POST", "PUT", "PATCH") else None
    connection.request(method, path, body=body, headers={"content-type": "application/json", **(headers or {})})
    response = connection.getresponse()  # status and headers only: some routes stream (queue data, heartbeat)
    connection.close()
    return response


def _refused(response: http.client.HTTPResponse) -> bool:
    """Refused by the token check (Gradio's own 401s, e.g. for its login routes, do not count)."""
    return response.status == 401 and response.getheader("www-authenticate") == 'Token realm="trace-bench"'


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    from trace_bench.ui.app import start_server

    app, gate, url = start_server(tmp_path_factory.mktemp("ui") / "runs")
    try:
        yield {"app": app, "gate": gate, "url": url, "port": int(urlsplit(url).port or 0)}
    finally:
        app.close()


def test_every_route_refuses_a_request_without_the_token(server: dict[str, Any]) -> None:
    routes = list(_routes(server["app"].server_app.routes))
    paths = {path for path, _, _ in routes}
    assert {"/", "/config"} <= paths
    assert any(p.startswith("/gradio_api/queue") for p in paths) and any("file" in p for p in paths), sorted(paths)
    checked = 0
    for path, methods, _kind in routes:
        for method in sorted(methods - {"HEAD", "OPTIONS"}) or ["GET"]:
            assert _refused(_request(server["port"], method, _concrete(path))), (method, path)
            wrong = _request(server["port"], method, _concrete(path), {"Authorization": "token not-the-token"})
            assert _refused(wrong), (method, path)
            with_token = _request(server["port"], method, _concrete(path),
                                  {"Authorization": f"token {server['gate'].token}"})
            assert not _refused(with_token), (method, path)  # Gradio's own answer (200, 404, 422, ...)
            checked += 1
    assert checked >= 30, checked
    for path in ("/", "/config", "/gradio_api/info", "/theme.css"):  # the app works with the token
        assert _request(server["port"], "GET", path, {"Authorization": f"Bearer {server['gate'].token}"}).status == 200
    assert _request(server["port"], "GET", "/gradio_api/startup-events").status == 401  # closed after launch


def test_the_token_in_the_url_becomes_a_strict_httponly_cookie(server: dict[str, Any]) -> None:
    gate = server["gate"]
    first = _request(server["port"], "GET", f"/?token={gate.token}")
    assert first.status == 302 and first.getheader("location") == "/"  # the token leaves the address bar
    cookie = first.getheader("set-cookie") or ""
    assert cookie.startswith(f"{gate.cookie_name}={gate.token};")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
    assert _request(server["port"], "GET", "/config", {"Cookie": f"{gate.cookie_name}={gate.token}"}).status == 200
    assert _request(server["port"], "GET", "/config", {"Cookie": f"{gate.cookie_name}=forged"}).status == 401
    api = _request(server["port"], "GET", f"/gradio_api/info?token={gate.token}")
    assert api.status == 200 and gate.cookie_name in (api.getheader("set-cookie") or "")


def test_no_token_is_refused_with_share() -> None:
    proc = subprocess.run([sys.executable, "-m", "trace_bench", "ui", "--no-token", "--share"], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "--no-token" in proc.stderr and "--share" in proc.stderr


def test_no_token_on_loopback_serves_with_a_warning(tmp_path: Path) -> None:
    process = subprocess.Popen([sys.executable, "-m", "trace_bench", "ui", "--no-token", "--runs-dir",
                                str(tmp_path / "runs")], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    try:
        line = process.stdout.readline() if process.stdout else ""  # the start-up line, once serving
        url = re.search(r"open (http://\S+)", line)
        assert url and "token=" not in url.group(1), line
        assert _request(int(urlsplit(url.group(1)).port or 0), "GET", "/config").status == 200
    finally:
        process.terminate()
        stdout, stderr = process.communicate(timeout=60)
    assert "warning: --no-token" in stderr
    # SIGTERM (an editor's stop, `make ui` stopped) closes the server like Ctrl-C: exit 0, so make
    # does not end with "make: *** Terminated"
    assert process.returncode == 0 and "trace-bench ui: stopped" in stdout, (process.returncode, stderr[-2000:])
