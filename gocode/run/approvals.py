"""Approvals: a program that can call a tool needing approval is held before it starts.

Which tools need approval follows ``codeMode.approval`` (:class:`~gocode.config.ApprovalConfig`)
and the tools' MCP annotations; what a program can call is its static plan
(:mod:`gocode.program.plan`). A program that may call any tool needs approval when any tool of
the set does. Whoever runs the program decides through an :data:`Approver`: the Python API's
callback, or ``gocode serve``'s client through elicitation. With no approver the run is refused,
naming the tools: nothing is approved silently. An approval is for one program hash (its code,
the tool set it was built against, the code of the saved programs it reaches and the tools it
was held for), and only for the run that asked.
"""

from __future__ import annotations

import fnmatch
import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from gocode.config import ApprovalConfig
from gocode.errors import NoApprover
from gocode.program.plan import Plan
from gocode.toolset import ToolInfo

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
    return (
        f"not run: the program can call tools that need approval ({', '.join(request.tools)}) and {why}. "
        "Nothing was called."
    )


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
    held = tools_needing_approval(settings, reach, tools)
    if exempt_server:
        held = tuple(h for h in held if not h.startswith(exempt_server + "."))
    if not held or held == (ANY_TOOL,):
        return None
    return await refused(request_for(held), approver)


# --- over MCP: elicitation ------------------------------------------------------------------

# The key of gocode's one input request in the multi-round-trip flow, and the form it asks.
APPROVAL_INPUT_KEY = "gocode.approval"
APPROVAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approve": {"type": "boolean", "title": "Run this program", "description": "true runs it once"},
    },
    "required": ["approve"],
}


def input_required(request: ApprovalRequest) -> Any:
    """The ``InputRequiredResult`` that asks the client to approve ``request`` (2026-07-28 era);
    the client retries the call with the response."""
    import mcp_types as types

    ask = types.ElicitRequest(
        params=types.ElicitRequestFormParams(message=request.message(), requested_schema=APPROVAL_SCHEMA)
    )
    # The state names the program: a retry carrying another program's approval is asked again.
    return types.InputRequiredResult(input_requests={APPROVAL_INPUT_KEY: ask}, request_state=request.program_hash)


def accepted(answer: Any) -> bool:
    """Only an explicit accept with ``approve: true`` approves."""
    return (
        getattr(answer, "action", None) == "accept" and (getattr(answer, "content", None) or {}).get("approve") is True
    )


def elicitation_approver(ctx: Any, params: Any, modern: bool) -> Approver | None:
    """The approver of one MCP ``tools/call``: the client, if it declared elicitation.

    Handshake era: an ``elicitation/create`` request on the call's session. 2026-07-28 era: the
    multi-round-trip flow (:class:`AskFirst`, answered with :func:`input_required`, then the
    retry's ``inputResponses``).
    """
    caps = getattr(ctx.session, "client_capabilities", None)
    if caps is None or getattr(caps, "elicitation", None) is None:
        return None
    if modern:
        responses = getattr(params, "input_responses", None) or {}
        state = getattr(params, "request_state", None)

        def from_retry(request: ApprovalRequest) -> bool | AskFirst:
            answer = responses.get(APPROVAL_INPUT_KEY)
            if answer is None or state != request.program_hash:
                return AskFirst(request)
            return accepted(answer)

        return from_retry

    async def ask(request: ApprovalRequest) -> bool:
        answer = await ctx.session.elicit_form(request.message(), APPROVAL_SCHEMA, related_request_id=ctx.request_id)
        return accepted(answer)

    return ask
