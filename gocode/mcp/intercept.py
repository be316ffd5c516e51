"""The hook every call of a run passes through on the loopback endpoint, when the run has one.

The endpoint only routes; what happens to a call — forwarded and recorded, answered from a
record, or held for the caller — is decided by the run's interceptor
(:class:`gocode.run.interceptor.Interceptor`, a later stage, hence this protocol here).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import mcp_types as types

# Makes the call for real (the provider's answer, its failures as isError results).
Forward = Callable[[], Awaitable[types.CallToolResult]]

Verdict = Literal["idle", "busy", "unknown"]
_VERDICTS: tuple[Verdict, ...] = ("idle", "busy", "unknown")
_MAX_COUNT = 2**53  # a JSON number a program can give exactly


@dataclass(frozen=True)
class IdleReport:
    """What a program on a step pass saw of its goroutines (go_templates/rt/idle.go): ``idle``
    (each waits on an outstanding tool call or on another goroutine), ``busy`` (one runs) or
    ``unknown`` (one sleeps or waits on something else), with the tool calls it had started and
    finished when it looked. From the program: untrusted, and only ever a hint about when to
    end a pass (see :meth:`gocode.run.interceptor.Interceptor.settled`)."""

    verdict: Verdict
    started: int
    finished: int

    @classmethod
    def parse(cls, arguments: Any) -> IdleReport | None:
        """The report in a program's call, None when it is not one."""
        if not isinstance(arguments, dict):
            return None
        verdict, started, finished = arguments.get("verdict"), arguments.get("started"), arguments.get("finished")
        if verdict not in _VERDICTS or not isinstance(started, int) or not isinstance(finished, int):
            return None
        if isinstance(started, bool) or isinstance(finished, bool) or not 0 <= finished <= started <= _MAX_COUNT:
            return None
        return cls(verdict, started, finished)


class CallInterceptor(Protocol):
    """Answers one call of a run, calling ``forward`` if (and only if) the call must reach its provider."""

    async def call(self, server: str, tool: str, arguments: Any, forward: Forward) -> types.CallToolResult: ...

    def idle(self, report: IdleReport) -> None:
        """The program's latest report of its own state (step passes send them)."""
