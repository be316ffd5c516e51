"""gocode's HTTP listeners send each response at once: the connections they accept have
TCP_NODELAY set. Without it a response's body (written after its head) waited for the client's
delayed ACK, 40 ms on Linux, on every request of a kept-alive connection: a program's every
tool call through the loopback took 44 ms instead of 2."""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Iterator
from typing import Any

import anyio
import anyio.from_thread
import pytest
import uvicorn

from gocode.mcp.httplimits import ConnectionLimits, uvicorn_options
from gocode.serve.server import bind
from tests.http_clients import LIST, connect, head, loopback, response

pytestmark = pytest.mark.fast


def accepted_side(client: socket.socket) -> socket.socket:
    """The server's end of ``client``'s connection (the server runs in this process)."""
    want = (client.getpeername(), client.getsockname())
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            s = socket.socket(fileno=os.dup(int(fd)))
            with contextlib.suppress(OSError):
                if s.type == socket.SOCK_STREAM and (s.getsockname(), s.getpeername()) == want:
                    return s
            s.close()
    raise AssertionError("the server's end of the connection is not in this process")


def no_delay(client: socket.socket) -> int:
    with accepted_side(client) as server:
        return server.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)


def test_the_loopback_endpoint_answers_without_waiting_for_the_clients_ack():
    with loopback() as lb:
        run = lb.open_run()
        with connect(lb.loopback.port) as c:
            c.sendall(head(run.token, len(LIST)) + LIST)
            status, _, _ = response(c)
            assert status == 200
            assert no_delay(c) == 1


async def hello(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})


@contextlib.contextmanager
def served_like_serve() -> Iterator[int]:
    """An app on a socket made as `gocode serve --transport http` makes its own, with its options."""
    sock = bind("127.0.0.1", 0)
    port = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(hello, log_level="warning", lifespan="off", **uvicorn_options(ConnectionLimits()))
    )
    with anyio.from_thread.start_blocking_portal() as portal:
        done = portal.start_task_soon(server.serve, [sock])
        try:
            while not server.started:
                portal.call(anyio.sleep, 0.01)
            yield port
        finally:
            server.should_exit = True
            done.result(10)


def test_serves_http_listener_answers_without_waiting_for_the_clients_ack():
    with served_like_serve() as port, connect(port) as c:
        c.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        status, _, body = response(c)
        assert (status, body) == (200, b"ok")
        assert no_delay(c) == 1
