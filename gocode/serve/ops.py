"""The operator's endpoints of ``gocode serve --transport http``: health, readiness, metrics.

- ``GET /healthz``: 200 while the process answers (liveness). No token, no details.
- ``GET /readyz``: 200 once the servers were discovered, the Go module cache is warm and the tool
  definitions are settled, else 503 with a JSON status (``starting`` until then, ``not ready``
  when warming up failed) and reason (readiness: a load balancer sends traffic only to ready replicas).
  No token; the reason names a state, never a server, path or setting.
- ``GET /metrics``: Prometheus text (:mod:`gocode.mcp.metrics`); it needs a token when one
  is set (see :class:`gocode.serve.server.HttpGuard`).

Plain ASGI responses: no framework routing, so no redirects (``/metrics`` stays ``/metrics``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

HEALTH_PATH = "/healthz"
READY_PATH = "/readyz"
METRICS_PATH = "/metrics"
PROBE_PATHS = (HEALTH_PATH, READY_PATH)

Readiness = Callable[[], tuple[bool, str]]


async def send_body(send: Any, status: int, body: bytes, content_type: str, head: bool = False) -> None:
    headers = [
        (b"content-type", content_type.encode()),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if head else body})


async def send_json(send: Any, status: int, doc: dict[str, Any], head: bool = False) -> None:
    await send_body(send, status, json.dumps(doc).encode(), "application/json", head)


async def probe(scope: Any, send: Any, readiness: Readiness) -> None:
    """Answer ``/healthz`` or ``/readyz``."""
    method = scope.get("method", "GET")
    if method not in ("GET", "HEAD"):
        await send_json(send, 405, {"error": "method not allowed"})
        return
    head = method == "HEAD"
    if scope["path"] == HEALTH_PATH:
        await send_json(send, 200, {"status": "ok"}, head)
        return
    ready, reason = readiness()
    if ready:
        await send_json(send, 200, {"status": "ready"}, head)
    else:
        # Starting and warming up end by themselves; anything else needs a look.
        status = "starting" if reason.startswith(("starting", "warming")) else "not ready"
        await send_json(send, 503, {"status": status, "reason": reason}, head)


async def metrics(scope: Any, send: Any, render: Callable[[], bytes], content_type: str) -> None:
    if scope.get("method", "GET") not in ("GET", "HEAD"):
        await send_json(send, 405, {"error": "method not allowed"})
        return
    await send_body(send, 200, render(), content_type, scope.get("method") == "HEAD")
