"""The client of one ``tools/call`` to ``gocode serve``, as a passed-through server's traffic
during that call reaches it (a :class:`~gocode.mcp.backchannel.Caller`).

Log messages go to the client as ``notifications/message`` on the call's own stream, at or above
the level it set with ``logging/setLevel``; sampling and elicitation requests go to it as
requests related to the call, only if it declared the capability at its handshake. The
2026-07-28 era has no server-to-client requests during a call (its flow answers the call with
an ``InputRequiredResult`` instead), so a client of that era is said to have neither.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from gocode.mcp.backchannel import ElicitAnswer, SamplingAnswer


class ClientOfCall:
    """One call's client; ``wants_log(level)`` says whether it asked for messages at that level."""

    def __init__(self, ctx: ServerRequestContext[Any], wants_log: Callable[[str], bool]) -> None:
        self._ctx = ctx
        self._wants_log = wants_log
        caps = None if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS else ctx.session.client_capabilities
        self.sampling = caps is not None and caps.sampling is not None
        self.elicitation = caps is not None and caps.elicitation is not None

    def _related(self) -> ServerMessageMetadata:
        return ServerMessageMetadata(related_request_id=self._ctx.request_id)

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        # The SDK's own sender: a 2026-07-28 client gets only what its request opted in to.
        if self._wants_log(params.level):
            await self._ctx.session.send_log_message(
                params.level, params.data, logger=params.logger, related_request_id=self._ctx.request_id
            )

    async def sample(self, params: types.CreateMessageRequestParams) -> SamplingAnswer:
        kind: type[types.CreateMessageResult] | type[types.CreateMessageResultWithTools] = (
            types.CreateMessageResultWithTools if params.tools else types.CreateMessageResult
        )
        try:
            return await self._ctx.session.send_request(
                types.CreateMessageRequest(params=params), kind, metadata=self._related()
            )
        except MCPError as exc:  # the client's own refusal goes back as it said it
            return exc.error
        except Exception as exc:  # no back-channel, a client that left, an answer of the wrong shape
            return types.ErrorData(code=types.INTERNAL_ERROR, message=f"the client did not answer: {exc}")

    async def elicit(self, params: types.ElicitRequestParams) -> ElicitAnswer:
        try:
            return await self._ctx.session.send_request(
                types.ElicitRequest(params=params), types.ElicitResult, metadata=self._related()
            )
        except MCPError as exc:
            return exc.error
        except Exception as exc:
            return types.ErrorData(code=types.INTERNAL_ERROR, message=f"the client did not answer: {exc}")
