"""One tool call a program made, as the loopback records it and a run result reports it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what `gocode list` reads of a run's records needs no SDK
    import mcp_types as types


@dataclass(frozen=True)
class ToolCall:
    """One tool call a program made through the controller's pooled sessions."""

    server: str
    tool: str
    duration_ms: float
    error: str | None = None

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"server": self.server, "tool": self.tool, "durationMs": round(self.duration_ms, 2)}
        if self.error is not None:
            out["error"] = self.error
        return out


# An upstream's message is untrusted and may be megabytes: the record keeps its head.
ERROR_LIMIT = 1000


def error_message(result: types.CallToolResult) -> str:
    """What an ``isError`` result says (its text parts), cut to ``ERROR_LIMIT`` characters."""
    import mcp_types as types

    text = "\n".join(p.text for p in result.content if isinstance(p, types.TextContent)).strip()
    if not text:
        text = "the tool reported an error and said nothing"
    return text if len(text) <= ERROR_LIMIT else text[: ERROR_LIMIT - 1] + "…"
