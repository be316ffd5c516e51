"""The static plan of a program: which tools it can call, known before it runs.

The Go helper reads the type-checked ``main.go`` (``go_templates/gofix/plan.go``) and answers
with the typed functions the model's lines reference, the constant names given to
``callTool`` and the reasons, if any, that the program may call tools nobody can name before it
runs (a name computed at run time, ``callTool`` passed around as a value, …). This module turns
that answer into ``server.tool`` names against the tool set the program was built with (pure).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from gocode.schema.ir import Package, ToolFunc

PLAN_META_KEY = "io.gocode/plan"
# A refusal names at most this many lines of each call (a program may call a tool anywhere).
_SHOWN_LINES = 5


@dataclass(frozen=True)
class Plan:
    """``tools``: (server, tool) pairs the program can call; ``any_tool``: why it may call any
    tool (empty when ``tools`` is the whole story); ``unknown``: constant ``callTool`` names that
    name no tool of the set (they fail when called)."""

    tools: tuple[tuple[str, str], ...] = ()
    any_tool: tuple[str, ...] = ()
    unknown: tuple[str, ...] = ()
    # Lines of model.go where a tool's result is dereferenced through a pointer, with the tools
    # (their Go names, server and tool) whose results reach that line: a nil dereference there
    # is named after them (:func:`nil_result_hint`). Not part of the plan's JSON.
    derefs: tuple[tuple[int, tuple[tuple[str, str, str], ...]], ...] = ()
    # The tools the program calls through their typed companion (the result type learned from
    # their results): a saved program depends on that type only then. Not part of the JSON.
    typed: tuple[tuple[str, str], ...] = ()
    # Where the model's lines call each tool: (server, tool, the name the code calls it by, the
    # lines), so a refusal can point at the calls. Not part of the JSON, nor of what a plan is
    # (two programs calling the same tools on other lines can call the same).
    sites: tuple[tuple[str, str, str, tuple[int, ...]], ...] = field(default=(), compare=False)

    @property
    def is_any(self) -> bool:
        return bool(self.any_tool)

    def names(self) -> list[str]:
        return [f"{s}.{t}" for s, t in self.tools]

    def calls_of(self, server: str, tool: str, *, lines: bool = True) -> str:
        """How the code calls a tool, for people: ``deleteNote (notes.delete_note), line 6``, or
        the tool's name alone when the code does not call it by name (a saved program does)."""
        said = [(written, at) for s, t, written, at in self.sites if (s, t) == (server, tool)]
        if not said:
            return f"{server}.{tool}"
        out = []
        for written, at in said:
            shown = ", ".join(map(str, at[:_SHOWN_LINES])) + (
                f" and {len(at) - _SHOWN_LINES} more" if len(at) > _SHOWN_LINES else ""
            )
            where = f", line{'s' if len(at) > 1 else ''} {shown}" if lines else ""
            out.append(f"{written} ({server}.{tool}){where}")
        return "; ".join(out)

    def allows(self, server: str, tool: str) -> bool:
        """Whether a call was foreseen: every call, for a program that may call any tool."""
        return self.is_any or (server, tool) in self.tools

    def as_json(self) -> dict[str, Any]:
        return {"tools": self.names(), "anyTool": self.is_any, "anyToolReasons": list(self.any_tool)} | (
            {"unknown": list(self.unknown)} if self.unknown else {}
        )

    def text(self) -> str:
        """One line for people: what the program can call (the tools it names come first even
        when it may also call any tool, so a reader sees what it certainly reaches)."""
        named = ", ".join(self.names())
        if self.is_any:
            reasons = "any tool (" + "; ".join(self.any_tool) + ")"
            return f"{named}, and {reasons}" if named else reasons
        return named or "no tools"


def split_name(name: str, servers: set[str]) -> tuple[str, str] | None:
    """``server.tool`` with the longest server name it starts with (both may contain dots), as
    the Go runtime's callTool splits it."""
    best = max((s for s in servers if name.startswith(s + ".") and len(name) > len(s) + 1), key=len, default=None)
    return (best, name[len(best) + 1 :]) if best is not None else None


def plan_from_answer(doc: dict[str, Any] | None, pkg: Package, derefs: list[dict[str, Any]] | None = None) -> Plan:
    """The plan from the helper's ``check`` answer (``derefs``: its lines where tool results
    are dereferenced); no answer at all means nothing is known, so the program may call any tool."""
    if not doc:
        return Plan(any_tool=("the program could not be analysed",))
    by_exported = {f.exported: (f.server, f.tool) for f in pkg.funcs}
    by_name = {f.exported: f for f in pkg.funcs}
    servers = {f.server for f in pkg.funcs}
    tools: set[tuple[str, str]] = set()
    typed: set[tuple[str, str]] = set()
    unknown: list[str] = []
    for exported in doc.get("funcs") or ():
        if exported in by_exported:
            tools.add(by_exported[exported])
            if by_name[exported].companion:
                typed.add(by_exported[exported])
    known = set(by_exported.values())
    for name in doc.get("calls") or ():
        pair = split_name(name, servers)
        if pair is not None and pair in known:
            tools.add(pair)
        else:
            unknown.append(name)
    for server, tool in doc.get("pairs") or ():
        tools.add((server, tool))
    named_at: list[tuple[int, tuple[tuple[str, str, str], ...]]] = []
    for d in derefs or ():
        named = tuple((f.name, f.server, f.tool) for t in d.get("tools") or () if (f := by_name.get(t)) is not None)
        if named and isinstance(d.get("line"), int):
            named_at.append((d["line"], named))
    return Plan(
        tuple(sorted(tools)),
        tuple(doc.get("any") or ()),
        tuple(sorted(unknown)),
        tuple(named_at),
        tuple(sorted(typed)),
        _sites(doc.get("sites"), by_name, servers, known),
    )


def _sites(
    doc: Any, by_name: dict[str, ToolFunc], servers: set[str], known: set[tuple[str, str]]
) -> tuple[tuple[str, str, str, tuple[int, ...]], ...]:
    """The helper's ``sites`` (a tool's exported function, callTool's constant name or
    ``server.tool`` → the model's lines) as (server, tool, the name the code writes, lines)."""
    out = []
    for key, lines in (doc or {}).items() if isinstance(doc, dict) else ():
        if not isinstance(lines, list) or not all(isinstance(n, int) for n in lines):
            continue
        f = by_name.get(key)
        if f is not None:
            out.append((f.server, f.tool, f.name, tuple(lines)))
        elif (pair := split_name(key, servers)) is not None and pair in known:
            out.append((*pair, f"callTool({json.dumps(key)})", tuple(lines)))
    return tuple(sorted(out))


_NIL_DEREF = "invalid memory address or nil pointer dereference"
# The first frame of the panicking goroutine in a tidied traceback (gocode.run.gotraceback).
_FIRST_FRAME = re.compile(r"^goroutine \d+ \([^)]*the one that panicked\)[^\n]*\n[^\n]*\n\tmodel\.go:(\d+)", re.M)


def nil_result_hint(stderr: str, plan: Plan | None) -> str:
    """For a nil pointer dereference on a line that dereferences a tool's result: which tool
    (its result was the zero value because its error was ignored, or it left an optional
    field out); else "" (pure)."""
    if plan is None or not plan.derefs or _NIL_DEREF not in stderr:
        return ""
    m = _FIRST_FRAME.search(stderr)
    if m is None:
        return ""
    line = int(m[1])
    tools = next((t for at, t in plan.derefs if at == line), ())
    if not tools:
        return ""
    named = " or ".join(f"{name} ({server}.{tool})" for name, server, tool in tools)
    return (
        f"model.go:{line} dereferenced a nil pointer in the result of {named}: check its error before "
        "using the result, and check optional (pointer) fields for nil: the tool may leave them out"
    )


def program_hash(code: str, pkg: Package) -> str:
    """What an approval is for: this code against this tool set (a changed tool set, or one
    changed character, is another program)."""
    return hashlib.sha256(f"{pkg.digest}\0{code}".encode()).hexdigest()[:32]
