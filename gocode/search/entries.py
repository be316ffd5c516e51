"""The searchable tools: one :class:`ToolEntry` per tool of a tool set, as the index, the
answers and ``searchTools`` see it (where it lives, its Go function, what the model is told)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gocode.schema.ir import Package, ToolFunc
from gocode.toolset import ToolInfo, ToolSet
from gocode.view.modelview import signature


@dataclass(frozen=True)
class ToolEntry:
    """One searchable tool: where it lives, its Go function and what the model is told about it."""

    server: str
    tool: str
    function: str
    description: str
    signature: str
    info: ToolInfo
    func: ToolFunc

    @property
    def qualified(self) -> str:
        return f"{self.server}.{self.tool}"

    def match_json(self) -> dict[str, Any]:
        """The shape of rt.ToolMatch (what searchTools returns to a Go program)."""
        return {
            "name": self.tool,
            "server": self.server,
            "function": self.function,
            "description": self.description,
            "signature": self.signature,
        }


def entries(toolset: ToolSet, package: Package) -> list[ToolEntry]:
    """The searchable tools of a tool set, in the package's (stable) order."""
    infos = {(s.server, t.name): t for s in toolset.servers for t in s.tools}
    out = []
    for f in package.tool_funcs:  # a typed companion is shown with its tool (modelview.with_companions)
        info = infos.get((f.server, f.tool))
        if info is None:
            continue
        desc = " ".join((info.description or info.title or "").split())
        out.append(ToolEntry(f.server, f.tool, f.name, desc, signature(f), info, f))
    return out
