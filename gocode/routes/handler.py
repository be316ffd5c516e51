"""What every route is: a handler that answers one tool call (see :mod:`gocode.routes`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

import mcp_types as types
from mcp.shared.dispatcher import ProgressFnT

from gocode.mcp.backchannel import Caller
from gocode.run.approvals import Approver
from gocode.run.runner import RunResult
from gocode.run.setup import Notice

# How a call is counted (the metrics' and logs' `kind`): one that runs or reads Go, or a tool passed through.
Kind = Literal["code", "passthrough"]


@dataclass(frozen=True)
class Answer:
    """A handler's answer: the MCP result, and the run when Go code ran."""

    result: types.CallToolResult
    run: RunResult | None = None


class CallProgress:
    """One call's progress notifications, numbered from 1 (the text as the message): the
    set-up's lines while the call waits for it, then the lines its program prints. The set-up's
    lines also go to ``notice`` (serve logs them to the client)."""

    def __init__(self, progress: ProgressFnT | None, notice: Notice | None) -> None:
        self.progress = progress
        self._notice = notice
        self._count = 0

    async def line(self, text: str) -> None:
        if self.progress is not None:
            self._count += 1
            await self.progress(self._count, None, text)

    async def note(self, text: str) -> None:
        await self.line(text)
        if self._notice is not None:
            await self._notice(text)


@dataclass(frozen=True)
class CallContext:
    """Who asked, for one call: its progress, its approver, its client session, and the client
    itself as a passed-through server's log messages, sampling and elicitation reach it."""

    reporter: CallProgress
    approve: Approver | None = None
    session: str | None = None
    caller: Caller | None = None


class Handler(Protocol):
    """Answers the calls of the tools routed to it. ``kind`` counts them; ``runs_code``: a call
    waits for the machine's set-up (the Go module cache) first."""

    @property
    def kind(self) -> Kind: ...

    @property
    def runs_code(self) -> bool: ...

    async def handle(self, arguments: dict[str, Any] | None, ctx: CallContext) -> Answer: ...
