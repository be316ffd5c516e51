"""``step_go_code``: one pass of the stateless step protocol (client-owned tools; see
:mod:`gocode.run.step`), its answer as structured content and the same JSON as text."""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types

from gocode.results import error_result, run_to_result
from gocode.routes.asking import can_ask
from gocode.routes.handler import Answer, CallContext, Kind
from gocode.routes.runs import Runs
from gocode.run import step as stepping


class StepGoCode:
    kind: Kind = "code"
    runs_code = True

    def __init__(self, runs: Runs, client_approves: bool = False) -> None:
        self.runs = runs
        self.client_approves = client_approves  # the declarations say whether this client can approve

    async def handle(self, arguments: dict[str, Any] | None, ctx: CallContext) -> Answer:
        name, arguments = stepping.STEP_TOOL_NAME, arguments or {}
        code, tools = arguments.get("code"), arguments.get("tools", [])
        continuation, results = arguments.get("continuation"), arguments.get("results") or []
        if not isinstance(code, str):
            return Answer(error_result(f"{name} needs a string argument `code` (the Go statements to run)"))
        if arguments.get("declarations_only") is True:
            try:
                doc = self.runs.step_declarations(tools, can_ask(ctx, self.client_approves)).as_json()
            except stepping.StepError as exc:
                return Answer(error_result(f"{name}: {exc}"))
            text: list[types.ContentBlock] = [types.TextContent(type="text", text=json.dumps(doc))]
            return Answer(types.CallToolResult(content=text, structured_content=doc))
        if continuation is not None and not isinstance(continuation, str):
            return Answer(error_result(f"{name}: `continuation` must be the string the last step returned"))
        try:
            got = await self.runs.step(code, tools, continuation, results)
        except stepping.StepError as exc:
            return Answer(error_result(f"{name}: {exc}"))
        doc = got.as_json()
        failed = got.status == "error" or (got.run is not None and got.status == "done" and not got.run.ok)
        meta = run_to_result(got.run).meta if got.run is not None else None
        result = types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(doc))],
            structured_content=doc,
            is_error=failed,
            _meta=meta,
        )
        return Answer(result)
