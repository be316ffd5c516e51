"""The sign-in redirect of the OAuth authorization-code flow: a listener on 127.0.0.1 for one sign-in.

:meth:`Redirect.send` starts listening, then prints the authorization URL on stderr and opens
it in the user's browser (Python's ``webbrowser``, which honours ``$BROWSER``; only where one
can open without taking the terminal);
:meth:`Redirect.receive` waits (at most the configured ``loginTimeout``) for the browser to come
back to ``/callback``. Only a callback carrying this sign-in's ``state`` is taken (a constant-time
comparison); any other request is answered 400 or 404 and the wait goes on, so another local
process cannot end or steer the sign-in. The pages served say nothing the request carried.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import sys
import threading
import webbrowser
from urllib.parse import parse_qs, urlsplit

from mcp.client.auth import AuthorizationCodeResult, OAuthFlowError

from gocode.terminal import terminal_text

MAX_REQUEST_BYTES = 16 * 1024  # a redirect's request line and headers
READ_TIMEOUT_S = 10.0  # a connection must send its request within this

_PAGES = {
    200: "Signed in. You can close this tab and go back to gocode.",
    400: "This is not the redirect of the sign-in gocode is waiting for.",
    404: "Not found.",
}


class Redirect:
    """One sign-in's redirect listener; not shared (each flow makes its own), closed by :meth:`receive`."""

    def __init__(self, port: int, label: str, *, timeout: float, open_browser: bool) -> None:
        self.port = port
        self.label = label
        self.timeout = timeout
        self.open_browser = open_browser
        self._state = ""
        self._server: asyncio.Server | None = None
        self._done: asyncio.Future[AuthorizationCodeResult] | None = None

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.port}/callback"

    async def send(self, authorization_url: str) -> None:
        """The SDK's redirect handler: listen, then send the person to ``authorization_url``."""
        state = parse_qs(urlsplit(authorization_url).query).get("state", [""])[0]
        if not state:
            raise OAuthFlowError("the authorization request carries no state")
        self._state = state
        self._done = asyncio.get_running_loop().create_future()
        try:
            self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        except OSError as e:
            raise OAuthFlowError(
                f"cannot listen for the sign-in redirect on 127.0.0.1:{self.port} ({e.strerror}): "
                "set the server's `auth.redirectPort` to a free port"
            ) from None
        print(f"gocode: sign in to {self.label}: open {terminal_text(authorization_url)}", file=sys.stderr, flush=True)
        if self.open_browser and _has_browser():
            # In a thread of its own: a browser command may not return until it is closed.
            threading.Thread(target=_open, args=(authorization_url,), daemon=True).start()

    async def receive(self) -> AuthorizationCodeResult:
        """The SDK's callback handler: the code the browser brought back with this sign-in's state."""
        if self._done is None:
            raise OAuthFlowError("no sign-in was started")
        try:
            with contextlib.suppress(TimeoutError):
                return await asyncio.wait_for(asyncio.shield(self._done), self.timeout)
            raise OAuthFlowError(f"no sign-in within {self.timeout:g} s (the server's `auth.loginTimeout`)")
        finally:
            if self._server is not None:
                self._server.close()
                self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(READ_TIMEOUT_S):
                head = await reader.readuntil(b"\r\n\r\n")
        except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            writer.close()
            return
        status = self._answer(head[:MAX_REQUEST_BYTES].split(b"\r\n", 1)[0].decode("latin-1"))
        body = _PAGES[status].encode()
        writer.write(
            f"HTTP/1.1 {status} {'OK' if status == 200 else 'Bad Request' if status == 400 else 'Not Found'}\r\n"
            f"Content-Type: text/plain; charset=utf-8\r\nContent-Length: {len(body)}\r\n"
            "Cache-Control: no-store\r\nConnection: close\r\n\r\n".encode()
            + body
        )
        with contextlib.suppress(ConnectionError):
            await writer.drain()
        writer.close()

    def _answer(self, request_line: str) -> int:
        parts = request_line.split(" ")
        if len(parts) != 3 or parts[0] != "GET":
            return 404
        target = urlsplit(parts[1])
        if target.path != "/callback":
            return 404
        query = parse_qs(target.query)
        state = query.get("state", [""])[0]
        if not secrets.compare_digest(state.encode(), self._state.encode()):
            return 400
        done = self._done
        if done is None or done.done():
            return 400
        if error := query.get("error", [""])[0]:
            what = query.get("error_description", [""])[0]
            done.set_exception(
                OAuthFlowError(
                    f"the authorization server refused the sign-in: {terminal_text(error + ': ' + what)[:300]}"
                )
            )
            return 200
        code = query.get("code", [""])[0]
        if not code:
            return 400
        done.set_result(AuthorizationCodeResult(code=code, state=state, iss=query.get("iss", [None])[0]))
        return 200


def _has_browser() -> bool:
    """Whether a browser can be opened without taking the terminal: one named by ``$BROWSER``, a
    desktop session, or macOS and Windows (else ``webbrowser`` may start a text browser in it)."""
    names = ("BROWSER", "DISPLAY", "WAYLAND_DISPLAY")
    return any(os.environ.get(n) for n in names) or sys.platform in ("darwin", "win32")


def _open(url: str) -> None:
    with contextlib.suppress(Exception):  # no browser: the URL is on stderr
        webbrowser.open(url)
