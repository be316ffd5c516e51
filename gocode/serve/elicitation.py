"""Asking ``gocode serve``'s client to approve a program: MCP elicitation.

What needs approval and the outcome of asking are decided in :mod:`gocode.run.approvals`; this
is how the client is asked. Handshake era: an ``elicitation/create`` request on the call's
session. 2026-07-28 era: the multi-round-trip flow, the call answered with an
``InputRequiredResult`` (:func:`input_required`) and decided when the client retries it.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types

from gocode.run.approvals import ApprovalRequest, Approver, AskFirst
from gocode.serve.askable import can_be_asked

# The key of gocode's one input request in the multi-round-trip flow, and the form it asks.
APPROVAL_INPUT_KEY = "gocode.approval"
APPROVAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approve": {"type": "boolean", "title": "Run this program", "description": "true runs it once"},
    },
    "required": ["approve"],
}


def input_required(request: ApprovalRequest) -> types.InputRequiredResult:
    """The ``InputRequiredResult`` that asks the client to approve ``request`` (2026-07-28 era);
    the client retries the call with the response."""
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
    if not can_be_asked(ctx.session):
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
