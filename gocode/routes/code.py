"""``execute_go_code``: the model's Go built and run, its output the answer."""

from __future__ import annotations

from typing import Any

from gocode.codemode import TOOL_NAME
from gocode.results import error_result, run_to_result
from gocode.routes.handler import Answer, CallContext, Kind
from gocode.routes.runs import Runs


class ExecuteGoCode:
    kind: Kind = "code"
    runs_code = True

    def __init__(self, runs: Runs) -> None:
        self.runs = runs

    async def handle(self, arguments: dict[str, Any] | None, ctx: CallContext) -> Answer:
        source = (arguments or {}).get("code")
        if not isinstance(source, str):
            return Answer(error_result(f"{TOOL_NAME} needs a string argument `code` (the Go statements to run)"))
        on_line = ctx.reporter.line if ctx.reporter.progress else None
        run = await self.runs.execute(
            source, approve=ctx.approve, session=ctx.session, on_line=on_line, caller=ctx.caller
        )
        return Answer(run_to_result(run), run)
