"""The channel a direct program's elicitation requests come to the controller by.

A program run with ``gocode exec --direct`` opens its own sessions and must not talk to the
terminal itself; its runtime (``go_templates/rt/elicit.go``) sends each server's
``elicitation/create`` here, and the controller answers it with the same
:class:`~gocode.mcp.asker.CommandLine` as a pooled run. The channel is a Unix socket in a
directory only this user can enter, named to the program in :data:`ENV`, with a secret of this
run in :data:`TOKEN_ENV` (stdio servers the program starts see neither: their environment is a
fixed list). One JSON line a request, ``{"token": secret, "server": name, "params":
<ElicitRequestParams>}``, one a answer, ``{"result": <ElicitResult>}`` or ``{"error": why}``.

The program holds the sessions, so what it sends is its word, not the server's: a line without
this run's secret ends its connection (another run's program that found the socket cannot ask
through it); a name that is not one of this run's servers, or is gocode's own, is refused and
said on stderr; and what is asked is shown as relayed by the program (:data:`VIA`).

The program is on the other end of a hostile server's requests, so the channel is bounded as
the backchannel is: a line at most :data:`MAX_LINE` bytes (a longer one ends the connection),
:data:`~gocode.mcp.backchannel.MAX_REQUESTS` requests a run (the rest refused at once), one
asked at a time, each answered within :data:`~gocode.mcp.backchannel.FORWARD_TIMEOUT_S`, at
most :data:`MAX_CONNECTIONS` connections at once; it closes when the run ends.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import os
import secrets
import shutil
import tempfile
from collections.abc import AsyncIterator, Collection
from typing import Any

import anyio
import mcp_types as types
from anyio.abc import SocketStream
from anyio.streams.buffered import BufferedByteReceiveStream
from pydantic import TypeAdapter, ValidationError

from gocode.mcp.asker import CommandLine
from gocode.mcp.backchannel import FORWARD_TIMEOUT_S, MAX_REQUESTS
from gocode.mcp.clientinfo import CLIENT_NAME
from gocode.mcp.elicitform import shown

ENV = "GOCODE_ELICIT_SOCKET"
TOKEN_ENV = "GOCODE_ELICIT_TOKEN"
VIA = "relayed by the program, direct run"
MAX_LINE = 256 * 1024  # one request, serialised
MAX_CONNECTIONS = 4
SEND_TIMEOUT_S = 5.0  # a program that does not read its answer loses it
NOT_THIS_RUN = {"error": "not this run's elicitation channel"}
_PARAMS: TypeAdapter[types.ElicitRequestParams] = TypeAdapter(types.ElicitRequestParams)


class _Channel:
    def __init__(self, asker: CommandLine, servers: Collection[str], token: str) -> None:
        self.asker = asker
        # gocode's own name is never a server's here, even one configured so: it is how gocode
        # speaks for itself.
        self.servers = frozenset(s for s in servers if s.casefold() != CLIENT_NAME.casefold())
        self.token = token.encode()
        self.requests = 0
        self.connections = 0
        self.one_at_a_time = anyio.Lock()

    async def serve(self, stream: SocketStream) -> None:
        async with stream:
            if self.connections >= MAX_CONNECTIONS:
                return
            self.connections += 1
            try:
                reader = BufferedByteReceiveStream(stream)
                while True:
                    try:
                        line = await reader.receive_until(b"\n", MAX_LINE)
                    except (anyio.EndOfStream, anyio.IncompleteRead, anyio.DelimiterNotFound, OSError):
                        return  # closed, or a line over the bound: the connection ends
                    answer = await self.answer(line)
                    with anyio.move_on_after(SEND_TIMEOUT_S):
                        await stream.send(json.dumps(answer or NOT_THIS_RUN).encode() + b"\n")
                    if answer is None:
                        return  # not this run's program: its connection ends
            finally:
                self.connections -= 1

    async def answer(self, line: bytes) -> dict[str, Any] | None:
        """The answer to one line; None when it is not this run's (without its secret)."""
        try:
            request = json.loads(line)
        except ValueError:
            request = None
        token = request.get("token") if isinstance(request, dict) else None
        if not isinstance(token, str) or not hmac.compare_digest(token.encode(), self.token):
            return None
        try:
            server, raw = request["server"], request["params"]
            if not isinstance(server, str):
                raise TypeError("the server's name is not a string")
            if isinstance(raw, dict) and not raw.get("mode"):  # Go's SDK sends "" for a form that named none
                raw = {k: v for k, v in raw.items() if k != "mode"}
            params = _PARAMS.validate_python(raw)
        except (ValueError, KeyError, TypeError, ValidationError):
            return {"error": "malformed elicitation request"}
        if self.requests >= MAX_REQUESTS:
            return {"error": f"elicitation: at most {MAX_REQUESTS} requests are answered during one run"}
        self.requests += 1
        if server not in self.servers:
            return self.refused(server)
        with anyio.move_on_after(FORWARD_TIMEOUT_S):
            async with self.one_at_a_time:
                result = await self.asker.answer(server, params, via=VIA)
                return {"result": result.model_dump(by_alias=True, exclude_none=True, mode="json")}
        return {"error": "the elicitation request was not answered in time"}

    def refused(self, server: str) -> dict[str, Any]:
        """A request under a name that is not one of this run's servers: said, never asked."""
        name = shown(server, 80)
        self.asker.say(f"gocode: refused a request the program sent as {name!r} ({VIA}): not a server of this run")
        return {"error": f"elicitation: {name!r} is not a server of this run"}


@contextlib.asynccontextmanager
async def elicit_channel(asker: CommandLine, servers: Collection[str]) -> AsyncIterator[dict[str, str]]:
    """The channel open for one run whose program has sessions with ``servers``; yields the
    environment that names it to the program (and to that program only: the secret in it)."""
    folder = tempfile.mkdtemp(prefix="gocode-elicit-")  # 0700: no other user reaches the socket
    path = os.path.join(folder, "s")
    token = secrets.token_urlsafe(32)
    try:
        listener = await anyio.create_unix_listener(path)
        channel = _Channel(asker, servers, token)
        async with listener, anyio.create_task_group() as tg:
            tg.start_soon(listener.serve, channel.serve)
            try:
                yield {ENV: path, TOKEN_ENV: token}
            finally:
                tg.cancel_scope.cancel()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
