"""The static plan of a program: which tools it can call, known before it runs.

The Go helper reads the type-checked ``main.go`` (``go_templates/gofix/plan.go``) and answers
with the typed functions the model's lines reference, the constant names given to
``callTool`` and the reasons, if any, that the program may call tools nobody can name before it
runs (a name computed at run time, ``callTool`` passed around as a value, …). This module turns
that answer into ``server.tool`` names against the tool set the program was built with (pure).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from gocode.schema.ir import Package

PLAN_META_KEY = "io.gocode/plan"


@dataclass(frozen=True)
class Plan:
    """``tools``: (server, tool) pairs the program can call; ``any_tool``: why it may call any
    tool (empty when ``tools`` is the whole story); ``unknown``: constant ``callTool`` names that
    name no tool of the set (they fail when called)."""

    tools: tuple[tuple[str, str], ...] = ()
    any_tool: tuple[str, ...] = ()
    unknown: tuple[str, ...] = ()

    @property
    def is_any(self) -> bool:
        return bool(self.any_tool)

    def names(self) -> list[str]:
        return [f"{s}.{t}" for s, t in self.tools]

    def allows(self, server: str, tool: str) -> bool:
        """Whether a call was foreseen: every call, for a program that may call any tool."""
        return self.is_any or (server, tool) in self.tools

    def as_json(self) -> dict[str, Any]:
        return {"tools": self.names(), "anyTool": self.is_any, "anyToolReasons": list(self.any_tool)} | (
            {"unknown": list(self.unknown)} if self.unknown else {}
        )

    def text(self) -> str:
        """One line for people: what the program can call."""
        if self.is_any:
            return "any tool (" + "; ".join(self.any_tool) + ")"
        return ", ".join(self.names()) or "no tools"


def split_name(name: str, servers: set[str]) -> tuple[str, str] | None:
    """``server.tool`` with the longest server name it starts with (both may contain dots), as
    the Go runtime's callTool splits it."""
    best = max((s for s in servers if name.startswith(s + ".") and len(name) > len(s) + 1), key=len, default=None)
    return (best, name[len(best) + 1 :]) if best is not None else None


def plan_from_answer(doc: dict[str, Any] | None, pkg: Package) -> Plan:
    """The plan from the helper's ``check`` answer; no answer at all means nothing is known,
    so the program may call any tool."""
    if not doc:
        return Plan(any_tool=("the program could not be analysed",))
    by_exported = {f.exported: (f.server, f.tool) for f in pkg.funcs}
    servers = {f.server for f in pkg.funcs}
    tools: set[tuple[str, str]] = set()
    unknown: list[str] = []
    for exported in doc.get("funcs") or ():
        if exported in by_exported:
            tools.add(by_exported[exported])
    known = set(by_exported.values())
    for name in doc.get("calls") or ():
        pair = split_name(name, servers)
        if pair is not None and pair in known:
            tools.add(pair)
        else:
            unknown.append(name)
    for server, tool in doc.get("pairs") or ():
        tools.add((server, tool))
    return Plan(tuple(sorted(tools)), tuple(doc.get("any") or ()), tuple(sorted(unknown)))


def program_hash(code: str, pkg: Package) -> str:
    """What an approval is for: this code against this tool set (a changed tool set, or one
    changed character, is another program)."""
    return hashlib.sha256(f"{pkg.digest}\0{code}".encode()).hexdigest()[:32]
