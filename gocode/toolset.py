"""What discovery found: the tools of each server, as plain data.

A :class:`ToolSet` is the input of code generation and the key of every cache built from it:
its :meth:`ToolSet.digest` covers exactly what changes the generated Go (server names and
their tools' names, descriptions and schemas), never how a server is reached or its secrets.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

# The protocol eras gocode tells the Go program to use per server:
# "legacy" pins the initialize handshake (2025-11-25, negotiating down), skipping the
# server/discover probe that some servers exit on; "modern" is the stateless 2026-07-28 era.
LEGACY_PROTOCOL = "2025-11-25"
MODERN_PROTOCOL = "2026-07-28"


@dataclass(frozen=True)
class ToolInfo:
    """One MCP tool as a server listed it (wire JSON for the schemas)."""

    server: str
    name: str
    description: str = ""
    input_schema: dict[str, Any] = field(default_factory=dict)
    output_schema: dict[str, Any] | None = None
    title: str | None = None
    # output_schema was inferred from the tool's results (gocode.mcp.shapes), not declared.
    output_inferred: bool = False
    # The whole tool as listed (annotations, icons, _meta, …): what a passthrough offers its client.
    # Not part of equality or the digest, which cover only what shapes the generated Go.
    definition: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "description": self.description, "inputSchema": self.input_schema}
        if self.output_schema is not None:
            out["outputSchema"] = self.output_schema
        if self.output_inferred:
            out["outputSchemaInferred"] = True
        if self.title:
            out["title"] = self.title
        return out


@dataclass(frozen=True)
class ServerTools:
    """A server's tools and the protocol version the Go program should pin for it."""

    server: str
    tools: tuple[ToolInfo, ...]
    protocol_version: str = LEGACY_PROTOCOL
    server_info: str = ""
    # Tools changed to a fallback or left out when listed (see gocode.mcp.listing).
    warnings: tuple[str, ...] = ()
    instructions: str = ""  # the server's own (initialize), untrusted: the model view bounds it
    # What it offers besides tools ("resources", "prompts"), as its capabilities say.
    offers: tuple[str, ...] = ()


@dataclass(frozen=True)
class ToolSet:
    """The tools that go into Go for one model, across servers, in a stable order."""

    servers: tuple[ServerTools, ...]

    def tools(self) -> list[ToolInfo]:
        return [t for s in sorted(self.servers, key=lambda s: s.server) for t in sorted(s.tools, key=lambda t: t.name)]

    def by_seniority(self) -> list[ToolInfo]:
        """The tools in the order they take Go names (:func:`gocode.schema.builder.build_package`):
        the servers in the order given (code mode gives config order, then Python tools, the
        caller's, the saved programs), a server's tools by name. A server or tool added at the
        end never takes a name an earlier one has."""
        return [t for s in self.servers for t in sorted(s.tools, key=lambda t: t.name)]

    def digest(self) -> str:
        # Computed once: every cache keyed by the tool set asks, and hashing a thousand tools'
        # schemas takes a tenth of a second.
        known = self.__dict__.get("_digest")
        if known is None:
            known = self._compute_digest()
            object.__setattr__(self, "_digest", known)
        return known

    def _compute_digest(self) -> str:
        # In the servers' order: it decides which tool keeps a name two want (by_seniority).
        doc = [
            {"server": s.server, "tools": [t.as_json() for t in sorted(s.tools, key=lambda t: t.name)]}
            for s in self.servers
        ]
        blob = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        return hashlib.sha256(blob.encode()).hexdigest()
