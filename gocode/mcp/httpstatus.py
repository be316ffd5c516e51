"""The HTTP status an MCP server over HTTP answered, said with what to check in the config.

The MCP SDK turns an error status into a JSON-RPC error of its own ("Server returned an error
response", "Not Found") without the status: a missing token and a wrong URL read the same. The
HTTP client of a session records the status of each POST (:class:`StatusRecorder`), and the
errors the session raises carry it with a hint (:func:`describe_status`), worded as the Go
runtime words them (go_templates/rt/httpclient.go).
"""

from __future__ import annotations

import contextlib
import http
from collections.abc import Iterator
from typing import Any

import httpx2
from mcp.shared.exceptions import MCPError


def describe_status(code: int, signs_in: bool = False) -> str:
    """``HTTP 401 Unauthorized: check …``: the status, its name, what to check (``signs_in``:
    the server is configured with OAuth, not a token in its headers)."""
    try:
        what = f"HTTP {code} {http.HTTPStatus(code).phrase}"
    except ValueError:
        what = f"HTTP {code}"
    if code in (401, 403) and signs_in:
        return what + ": the OAuth sign-in gave no token the server takes (see the server's `auth`, docs/oauth.md)"
    if code in (401, 403):
        return what + ": check the server's headers (its token) in the config"
    if code in (404, 405):
        return what + ": check the server's url in the config (is it the MCP endpoint?)"
    return what


class StatusRecorder:
    """The error status of the last POST a session's HTTP client sent (0: it succeeded)."""

    def __init__(self, signs_in: bool = False) -> None:
        self.last = 0
        self.signs_in = signs_in

    async def seen(self, response: httpx2.Response) -> None:
        # A session's end (DELETE) and the optional standalone stream (GET, 405 when a server
        # has none) are not failures of what was asked.
        if response.request.method == "POST":
            self.last = response.status_code if response.status_code >= 400 else 0

    def hint(self) -> str:
        return describe_status(self.last, self.signs_in) if self.last else ""

    def explain(self, exc: BaseException) -> None:
        """Add the status to each error in ``exc`` (a note, which :func:`reason` reads)."""
        if hint := self.hint():
            for e in _leaves(exc):
                if hint not in getattr(e, "__notes__", ()):
                    e.add_note(hint)


def _leaves(exc: BaseException) -> Iterator[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        for sub in exc.exceptions:
            yield from _leaves(sub)
    else:
        yield exc


# By id: the SDK's Client is a dataclass, so unhashable; an entry lives as long as its session.
_recorders: dict[int, StatusRecorder] = {}


@contextlib.contextmanager
def recording(client: Any, recorder: StatusRecorder) -> Iterator[None]:
    """While the block runs, ``client``'s errors can be given the status (:func:`with_status`)."""
    _recorders[id(client)] = recorder
    try:
        yield
    finally:
        _recorders.pop(id(client), None)


def with_status(client: Any, exc: MCPError) -> MCPError:
    """``exc`` (an error a session raised), with the HTTP status the server answered, if any."""
    recorder = _recorders.get(id(client))
    hint = recorder.hint() if recorder is not None else ""
    if not hint or hint in exc.message:
        return exc
    return MCPError(exc.code, f"{exc.message} ({hint})", exc.data)
