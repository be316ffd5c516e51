"""``search_go_tools``: full declarations for a query or for names (offered when the
description shows less than every declaration)."""

from __future__ import annotations

from typing import Any

import anyio.to_thread
import mcp_types as types

from gocode.codemode import CodeMode
from gocode.routes.asking import can_ask
from gocode.routes.handler import Answer, CallContext, Kind


class SearchGoTools:
    kind: Kind = "code"
    runs_code = False

    def __init__(self, code_mode: CodeMode, client_approves: bool = False) -> None:
        self.code_mode = code_mode
        self.client_approves = client_approves  # the declarations say whether this client can approve

    async def handle(self, arguments: dict[str, Any] | None, ctx: CallContext) -> Answer:
        said = can_ask(ctx, self.client_approves)
        text, failed = await anyio.to_thread.run_sync(self.code_mode.search_answer, arguments, said)
        return Answer(types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=failed))
