"""An upstream server's requests and log messages during a call, taken to the client of that call.

A server may log (``notifications/message``), ask for an LLM completion
(``sampling/createMessage``) or ask the user (``elicitation/create``) while it answers a tool
call. The session that carries them is pooled (one per server, shared by every client of a
controller), and the client side of MCP does not say which of our requests a server's request
belongs to. So :class:`InFlight` keeps the calls in flight on one session, and a request goes
to a client only when every call in flight is that client's (one call, or a program's calls in
parallel): with none (a server speaking on its own) or calls of several clients (whose would
it be?) it is refused, and a log message dropped, so one client never receives another's
traffic. A program's calls (code mode) carry the client of its ``execute_go_code`` call.

Sampling and elicitation are declared to every server (a pooled session cannot declare what
only some of its clients have); a request reaches the caller only if the caller itself has
the capability, else it is answered "not supported", as a client without it would.

A hostile server is bounded per call: a few requests at a time, a budget of them and of log
messages, and each log message's data cut to :data:`MAX_LOG_BYTES` when serialised.
"""

from __future__ import annotations

import contextvars
import itertools
import json
import logging
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import anyio
import mcp_types as types
from mcp.client.session import ClientRequestContext

log = logging.getLogger("gocode.mcp.backchannel")

MAX_REQUESTS = 32  # sampling and elicitation requests one call may forward
MAX_LOGS = 256  # log messages one call may forward
MAX_LOG_BYTES = 8192  # a log message's data, serialised, beyond which it is cut
MAX_TEXT_CHARS = 1024  # the logger name kept
FORWARD_TIMEOUT_S = 600.0  # an answer from the client (a person may be answering a form)
LOG_TIMEOUT_S = 5.0  # handing a log message to a client that reads slowly

T = TypeVar("T")
SamplingAnswer = types.CreateMessageResult | types.CreateMessageResultWithTools | types.ErrorData
ElicitAnswer = types.ElicitResult | types.ErrorData
# The server whose request a caller is answering (a caller of several servers' calls says which asks).
ASKING_SERVER: contextvars.ContextVar[str] = contextvars.ContextVar("gocode_asking_server", default="")


class Caller(Protocol):
    """The client of one call, as the server's traffic during it reaches that client."""

    @property
    def sampling(self) -> bool:
        """The client declared sampling."""
        ...

    @property
    def elicitation(self) -> bool:
        """The client declared elicitation."""
        ...

    async def log(self, params: types.LoggingMessageNotificationParams) -> None: ...

    async def sample(self, params: types.CreateMessageRequestParams) -> SamplingAnswer: ...

    async def elicit(self, params: types.ElicitRequestParams) -> ElicitAnswer: ...


def _refused(message: str) -> types.ErrorData:
    return types.ErrorData(code=types.INVALID_REQUEST, message=message)


@dataclass
class _Call:
    caller: Caller | None
    requests: int = 0
    logs: int = 0
    dropped: int = 0
    one_at_a_time: anyio.Semaphore = field(default_factory=lambda: anyio.Semaphore(1))
    asking: set[anyio.CancelScope] = field(default_factory=set)  # its requests waiting for the client


class InFlight:
    """The calls in flight on one upstream session, and the callbacks its client is given."""

    def __init__(self, server: str, *, sampling: bool = True) -> None:
        self.server = server
        self.sampling = sampling  # declared to the server (a client that never samples does not)
        self._calls: dict[int, _Call] = {}
        self._ids = itertools.count()

    @contextmanager
    def call(self, caller: Caller | None) -> Iterator[None]:
        """Mark a call in flight for as long as the block runs; ``caller`` None: nobody to forward to."""
        key = next(self._ids)
        self._calls[key] = _Call(caller)
        try:
            yield
        finally:
            call = self._calls.pop(key)
            for scope in call.asking:  # the call is over: nobody upstream waits for these answers
                scope.cancel()
            if call.dropped:
                log.info(
                    "%s: %d of its messages during a call were not forwarded (over budget)", self.server, call.dropped
                )

    def _current(self) -> _Call | None:
        # The one client with calls in flight (a program's parallel calls share theirs): with
        # several clients, the server's request could be any one's.
        calls = list(self._calls.values())
        if not calls or any(c.caller is not calls[0].caller for c in calls):
            return None
        return calls[0]

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        """``logging_callback``: the message goes to the call's client, cut to size, within budget."""
        call = self._current()
        if call is None or call.caller is None:
            return
        if call.logs >= MAX_LOGS:
            call.dropped += 1
            return
        call.logs += 1
        with anyio.move_on_after(LOG_TIMEOUT_S):  # a client slow to read loses the message
            try:
                await call.caller.log(bounded(params))
            except Exception as exc:  # the client left: the call itself says so
                log.debug("forwarding a log message of %s failed: %s", self.server, exc)

    async def sample(self, context: ClientRequestContext, params: types.CreateMessageRequestParams) -> SamplingAnswer:
        """``sampling_callback``: asked of the call's client if it has sampling."""
        call = self._admit("sampling")
        if isinstance(call, types.ErrorData):
            return call
        assert call.caller is not None
        return await _asked(call, "sampling", call.caller.sample(params))

    async def elicit(self, context: ClientRequestContext, params: types.ElicitRequestParams) -> ElicitAnswer:
        """``elicitation_callback``: asked of the call's client if it has elicitation."""
        call = self._admit("elicitation")
        if isinstance(call, types.ErrorData):
            return call
        assert call.caller is not None
        ASKING_SERVER.set(self.server)  # this request's own task: the caller's answer runs in it
        return await _asked(call, "elicitation", call.caller.elicit(params))

    def _admit(self, capability: str) -> _Call | types.ErrorData:
        call = self._current()
        if call is None:
            return _refused(f"{capability.capitalize()} is only forwarded during a call, to the client that made it")
        caller = call.caller
        if caller is None or not getattr(caller, capability):
            return _refused(f"{capability.capitalize()} not supported")
        if call.requests >= MAX_REQUESTS:
            call.dropped += 1
            return _refused(f"{capability}: at most {MAX_REQUESTS} requests are forwarded during one call")
        call.requests += 1
        return call


async def _asked(call: _Call, capability: str, answer: Coroutine[Any, Any, T]) -> T | types.ErrorData:
    """The client's answer, one request at a time, while the call lasts (at most :data:`FORWARD_TIMEOUT_S`)."""
    with anyio.move_on_after(FORWARD_TIMEOUT_S) as scope:
        call.asking.add(scope)
        try:
            async with call.one_at_a_time:
                return await answer
        finally:
            call.asking.discard(scope)
    answer.close()  # never awaited when cancelled while waiting its turn
    return _refused(f"the client did not answer the {capability} request while the call lasted")


def bounded(params: types.LoggingMessageNotificationParams) -> types.LoggingMessageNotificationParams:
    """The message with its data at most :data:`MAX_LOG_BYTES` serialised (else the text cut to
    that), and its logger name at most :data:`MAX_TEXT_CHARS`."""
    try:
        text = json.dumps(params.data, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        text = repr(params.data)
    data: Any = params.data
    if len(text.encode("utf-8", "replace")) > MAX_LOG_BYTES:
        cut = text.encode("utf-8", "replace")[:MAX_LOG_BYTES].decode("utf-8", "ignore")
        data = f"{cut}… (cut: {len(text)} characters)"
    logger = params.logger[:MAX_TEXT_CHARS] if params.logger is not None else None
    return types.LoggingMessageNotificationParams(level=params.level, logger=logger, data=data)
