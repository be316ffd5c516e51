"""The hook every call of a run passes through on the loopback endpoint, when the run has one.

The endpoint only routes; what happens to a call — forwarded and recorded, answered from a
record, or held for the caller — is decided by the run's interceptor
(:class:`gocode.run.interceptor.Interceptor`, a later stage, hence this protocol here).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import mcp_types as types

# Makes the call for real (the provider's answer, its failures as isError results).
Forward = Callable[[], Awaitable[types.CallToolResult]]


class CallInterceptor(Protocol):
    """Answers one call of a run, calling ``forward`` if (and only if) the call must reach its provider."""

    async def call(self, server: str, tool: str, arguments: Any, forward: Forward) -> types.CallToolResult: ...
