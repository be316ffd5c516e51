"""Who can approve, per caller: what the tools say to a client that cannot be asked.

A toolbox whose programs are approved by the client of each call (``gocode serve``) tells a
client it can ask that a tool needs approval, and one it cannot ask (no way to elicit) that
a program calling it is refused here (:data:`~gocode.run.approvals.APPROVAL_NOTE_NO_ONE`).
Both tool lists are rendered once per tool set; each client gets the same bytes every time.
"""

from __future__ import annotations

import mcp_types as types

from gocode.codemode import CodeMode
from gocode.routes.handler import CallContext
from gocode.routes.runs import Runs
from gocode.search.answer import search_tool_definition


def by_client(code_mode: CodeMode, runs: Runs) -> bool:
    """Whether the client of each call approves its programs (no approver of the toolbox's own)."""
    return code_mode.can_ask and runs.approve is None


def can_ask(ctx: CallContext, client_approves: bool) -> bool | None:
    """What a call's answers say of approval: False when programs are approved by the client
    of each call and this one cannot be asked; else None (the code mode's own)."""
    return False if client_approves and ctx.approve is None else None


def code_tools(code_mode: CodeMode, can_ask: bool | None) -> list[types.Tool]:
    """``execute_go_code``, then ``search_go_tools`` when the description shows less than every
    declaration, as a reader who ``can_ask`` (or not) reads them."""
    tools = [types.Tool.model_validate(code_mode.tool_definition(can_ask))]
    if not code_mode.complete(can_ask):
        tools.append(types.Tool.model_validate(search_tool_definition()))
    return tools
