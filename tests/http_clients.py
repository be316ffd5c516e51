"""Helpers for the HTTP limit tests: the loopback endpoint served in a thread, raw requests."""

from __future__ import annotations

import contextlib
import json
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass

import anyio
import anyio.from_thread

from gocode.mcp.loopback import CONTROLLER_SERVER, SERVER_HEADER, Loopback, Run

LIST = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()


@dataclass
class Served:
    loopback: Loopback
    portal: anyio.from_thread.BlockingPortal

    def open_run(self) -> Run:
        return self.portal.call(self.loopback.open_run)

    def close_run(self, run: Run) -> None:
        self.portal.call(self.loopback.close_run, run)


@contextlib.contextmanager
def loopback() -> Iterator[Served]:
    """A real loopback endpoint (no providers: the controller's own tools) in a thread of its own."""
    with anyio.from_thread.start_blocking_portal() as portal:
        lb = Loopback({}, 30, lambda server, tool: True)

        async def host(*, task_status: anyio.abc.TaskStatus[None]) -> None:
            async with anyio.create_task_group() as tg:
                await lb.start(tg)
                task_status.started()

        done, _ = portal.start_task(host)
        try:
            yield Served(lb, portal)
        finally:
            portal.call(lb.stop)
            done.result(10)


def head(token: str | None, length: int | None, extra: str = "", path: str = "/mcp") -> bytes:
    """A POST's request line and headers (``length`` None: a chunked body)."""
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1:80", "Content-Type: application/json",
             "Accept: application/json, text/event-stream", f"{SERVER_HEADER}: {CONTROLLER_SERVER}"]  # fmt: skip
    if token is not None:
        lines.append(f"Authorization: Bearer {token}")
    lines.append("Transfer-Encoding: chunked" if length is None else f"Content-Length: {length}")
    return ("\r\n".join(lines) + "\r\n" + extra + "\r\n").encode()


def connect(port: int, timeout: float = 10) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.settimeout(timeout)
    return s


def response(s: socket.socket, timeout: float = 10) -> tuple[int, dict[str, str], bytes]:
    """Read one response (status, headers, body by Content-Length); (0, {}, b"") if the server
    closed the connection without answering."""
    s.settimeout(timeout)
    data = b""
    deadline = time.monotonic() + timeout
    while b"\r\n\r\n" not in data:
        try:
            chunk = s.recv(65536)
        except (ConnectionResetError, BrokenPipeError):
            return 0, {}, b""
        if not chunk:
            return 0, {}, b""
        data += chunk
        if time.monotonic() > deadline:
            raise TimeoutError("no response headers")
    top, _, rest = data.partition(b"\r\n\r\n")
    status_line, *header_lines = top.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in header_lines)}
    length = int(headers.get("content-length", "0"))
    while len(rest) < length:
        try:
            chunk = s.recv(65536)
        except (ConnectionResetError, BrokenPipeError):
            break
        if not chunk:
            break
        rest += chunk
    return int(status_line.split()[1]), headers, rest[:length]


def post(port: int, token: str | None, body: bytes, timeout: float = 10) -> tuple[int, dict[str, str], bytes]:
    with connect(port, timeout) as s:
        s.sendall(head(token, len(body)) + body)
        return response(s, timeout)


def closed_by_server(s: socket.socket, within: float) -> bool:
    """Whether the server closes ``s`` (EOF or reset) within ``within`` seconds."""
    s.settimeout(within)
    try:
        while s.recv(65536):
            pass
        return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False
