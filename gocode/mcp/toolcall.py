"""One tool call a program made, as the loopback records it and a run result reports it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


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
