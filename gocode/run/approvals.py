"""Approvals: a program that can call a tool needing approval is held before it starts.

Which tools need approval follows ``codeMode.approval`` (:class:`~gocode.config.ApprovalConfig`)
and the tools' MCP annotations; what a program can call is its static plan
(:mod:`gocode.program.plan`). A program that may call any tool needs approval when any tool of
the set does. Whoever runs the program decides through an :data:`Approver`: the Python API's
callback, or ``gocode serve``'s client through elicitation (:mod:`gocode.serve.elicitation`). With no approver the run is refused,
naming the tools: nothing is approved silently. An approval is for one program hash (its code,
the tool set it was built against, the code of the saved programs it reaches and the tools it
was held for), and only for the run that asked.
"""

from __future__ import annotations

import fnmatch
import inspect
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gocode.config import ApprovalConfig
from gocode.errors import NoApprover
from gocode.program.plan import Plan
from gocode.toolset import ServerTools, ToolInfo

# Shown in place of the tool list for a program that may call any tool.
ANY_TOOL = "any tool"


@dataclass(frozen=True)
class ApprovalRequest:
    """What someone is asked to approve: this program, which can call these tools."""

    program_hash: str
    code: str
    tools: tuple[str, ...]  # the tools needing approval, as server.tool (or ANY_TOOL first)
    plan: Plan

    def message(self, code_chars: int = 4000) -> str:
        """The text a person reads: the tools, why, and the program."""
        code = self.code if len(self.code) <= code_chars else self.code[:code_chars] + "\n… (cut)"
        return (
            f"A Go program wants to run. It can call tools that need approval: {', '.join(self.tools)}.\n"
            f"It can call: {self.plan.text()}.\n"
            f"Program {self.program_hash[:12]}:\n{code}"
        )

    def as_json(self) -> dict[str, Any]:
        return {"programHash": self.program_hash, "tools": list(self.tools), "plan": self.plan.as_json()}


@dataclass(frozen=True)
class AskFirst:
    """An approver's answer that it cannot decide yet: the client must be asked first
    (2026-07-28 era: an ``InputRequiredResult``, decided when the client retries the call with
    the response). The run ends with phase ``approval`` carrying ``request``."""

    request: ApprovalRequest


# Decides one request: True runs the program, False refuses it, AskFirst defers it to the client.
Approver = Callable[[ApprovalRequest], "bool | AskFirst | Awaitable[bool | AskFirst]"]


# What the model view says on a tool that needs approval, where someone can approve and where not.
APPROVAL_NOTE = "Needs approval."
APPROVAL_NOTE_NO_ONE = "Needs approval, which no one can give here: a program calling it is refused."


def needs_approval(settings: ApprovalConfig, server: str, tool: ToolInfo | None) -> bool:
    """Whether calling this tool needs approval (``tool`` None: not in the set, so unannotated)."""
    if not settings.enabled:
        return False
    name = f"{server}.{tool.name}" if tool is not None else server
    if any(fnmatch.fnmatchcase(name, p) for p in settings.ask):
        return True
    if any(fnmatch.fnmatchcase(name, p) for p in settings.allow):
        return False
    hints = (tool.definition.get("annotations") if tool is not None else None) or {}
    if not isinstance(hints, Mapping):
        hints = {}
    if hints.get("readOnlyHint") is True:
        return False
    if hints.get("destructiveHint") is True:
        return True
    return settings.unannotated == "ask"


# The MCP tool annotations that say how safe a tool is (the 2025-03-26 revision on): hints a
# server gives, which the approval policy reads (readOnlyHint, destructiveHint) and people do.
SAFETY_HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
# How `gocode list` marks them: a fixed word for each hint a server set to true (openWorldHint
# false too: the spec's default is true), so nothing a server sends reaches the terminal.
_MARKS = (("readOnlyHint", True, "read-only"), ("destructiveHint", True, "destructive"),
          ("idempotentHint", True, "idempotent"), ("openWorldHint", False, "closed-world"))  # fmt: skip


def safety_hints(tool: ToolInfo) -> dict[str, bool]:
    """The safety annotations a server gave ``tool``: the hints it set, and only as booleans
    (a server's listing is untrusted; anything else is as if unset)."""
    found = tool.definition.get("annotations")
    if not isinstance(found, Mapping):
        return {}
    return {k: found[k] for k in SAFETY_HINTS if isinstance(found.get(k), bool)}


def safety(settings: ApprovalConfig, tool: ToolInfo, in_code: bool = True) -> dict[str, Any]:
    """What ``gocode list --json`` says of a tool: its safety annotations, and whether a program
    calling it is held for approval under ``settings`` (only tools in code mode: a regular tool
    is called by the client itself, which gocode does not hold)."""
    return {"annotations": safety_hints(tool), "needsApproval": in_code and needs_approval(settings, tool.server, tool)}


def with_safety(doc: dict[str, Any], settings: ApprovalConfig, servers: Iterable[ServerTools]) -> None:
    """Add :func:`safety` to each tool of a ``gocode list`` document
    (:func:`gocode.view.selection.listing`)."""
    infos = {(s.server, t.name): t for s in servers for t in s.tools}
    for server in doc["servers"]:
        for entry in server.get("tools", ()):
            info = infos.get((server["name"], entry["name"]))
            if info is not None:
                entry.update(safety(settings, info, in_code=entry["codeMode"]))


def safety_marks(entry: Mapping[str, Any]) -> str:
    """The short marker ``gocode list`` prints for what :func:`safety` answered ("" for none):
    ``(read-only)``, ``(destructive, needs approval)``."""
    hints = entry.get("annotations") or {}
    marks = [word for key, value, word in _MARKS if hints.get(key) is value]
    marks += ["needs approval"] if entry.get("needsApproval") else []
    return f" ({', '.join(marks)})" if marks else ""


def held_for(
    settings: ApprovalConfig, reach: Plan, tools: Mapping[tuple[str, str], ToolInfo], exempt_server: str = ""
) -> tuple[str, ...]:
    """The tools a program that can call ``reach`` is held for (empty: it runs unasked), as the
    approve step decides it. Calls to ``exempt_server`` are held for what they reach (counted in
    ``reach``), not for themselves; a program that may call any tool when no tool needs approval
    is not held."""
    held = tools_needing_approval(settings, reach, tools)
    if exempt_server:
        held = tuple(h for h in held if not h.startswith(exempt_server + "."))
    return () if held == (ANY_TOOL,) else held


def approval_comments(
    settings: ApprovalConfig, tools: Mapping[tuple[str, str], ToolInfo], can_ask: bool
) -> dict[tuple[str, str], list[str]]:
    """The tools a program needs approval to call, each with the comment the model view shows
    wherever its declaration is (the description included); without anyone to ask (``can_ask``
    False: no approver, no client to elicit from), that such a program is refused here."""
    note = APPROVAL_NOTE if can_ask else APPROVAL_NOTE_NO_ONE
    return {k: [note] for k, t in tools.items() if needs_approval(settings, k[0], t)}


def tools_needing_approval(
    settings: ApprovalConfig, plan: Plan, tools: Mapping[tuple[str, str], ToolInfo]
) -> tuple[str, ...]:
    """The tools of ``plan`` that need approval; for a program that may call any tool, ANY_TOOL
    followed by every tool of the set that needs it (empty when none does)."""
    if not settings.enabled:
        return ()
    if plan.is_any:
        held = tuple(f"{s}.{t}" for (s, t), info in sorted(tools.items()) if needs_approval(settings, s, info))
        return (ANY_TOOL, *held) if held else ()
    return tuple(f"{s}.{t}" for s, t in plan.tools if needs_approval(settings, s, tools.get((s, t))))


def refusal(request: ApprovalRequest, why: str) -> str:
    """Why a program did not run, the calls it was held for, and what of it could run as it is."""
    return (
        f"not run: the program can call tools that need approval ({', '.join(request.tools)}) and {why}. "
        "Nothing was called." + the_rest(request)
    )


def the_rest(request: ApprovalRequest) -> str:
    """Where the calls a program was held for are, and what to do without them: the rest of it
    as its own program, which runs unasked; or, for a program that may call any tool, naming
    each tool it calls so only those that need approval hold it."""
    plan = request.plan
    if plan.is_any:
        return (
            f"\nIt may call any tool ({'; '.join(plan.any_tool)}), so it is held for every tool that needs approval. "
            "Call each tool by its function, or callTool with a constant name, and only those calls are held."
        )
    held = set(request.tools)
    calls = [plan.calls_of(s, t) for s, t in plan.tools if f"{s}.{t}" in held]
    free = [plan.calls_of(s, t, lines=False) for s, t in plan.tools if f"{s}.{t}" not in held]
    text = f"\nThe calls that need approval: {'; '.join(calls)}."
    if free:
        return text + (
            f"\nIts other calls ({', '.join(free)}) need none: run the rest as its own program, without the "
            "calls above, and it runs without asking."
        )
    return text + " Every tool it calls needs approval: without them nothing of it is left to run here."


async def refused(request: ApprovalRequest, approver: Approver | None) -> str | AskFirst | None:
    """None when the program may run, else why not (for the model and the user), or that the
    client must be asked first."""
    if approver is None:
        return refusal(request, "no one can be asked here (no approval callback or elicitation-capable client)")
    try:
        answer = approver(request)
        if inspect.isawaitable(answer):
            answer = await answer
    except NoApprover as exc:
        return refusal(request, str(exc) or "no one can be asked here")
    if answer is True:
        return None
    if isinstance(answer, AskFirst):
        return answer
    return refusal(request, "it was not approved")


async def approval(
    settings: ApprovalConfig,
    reach: Plan,
    tools: Mapping[tuple[str, str], ToolInfo],
    request_for: Callable[[tuple[str, ...]], ApprovalRequest],
    approver: Approver | None,
    exempt_server: str = "",
) -> str | AskFirst | None:
    """The approve step of a run: None when the program may run, else why not, or that the
    client must be asked first (a returned outcome: nothing is raised across the run's layers).

    ``reach`` is everything the program can call (the tools its saved programs reach
    included); ``request_for`` names what approving the tools held means (the program hash
    covers whatever else runs with it). Calls to ``exempt_server`` are held for what they reach
    (counted in ``reach``), not for themselves."""
    held = held_for(settings, reach, tools, exempt_server)
    if not held:
        return None
    return await refused(request_for(held), approver)
