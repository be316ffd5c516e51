"""Saved programs as tools: each one offered under its name, and ``save_go_program``."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types

from gocode.codemode import CodeMode
from gocode.errors import SavedProgramError
from gocode.results import error_result, run_to_result, saved_answer
from gocode.routes.handler import Answer, CallContext, Kind
from gocode.routes.runs import Pass, Runs
from gocode.tools import saved
from gocode.tools.saved import SavedProgram, SaveRequest


class SavedProgramTool:
    """A saved program, run as Go code with its input; answered as its definition promises
    (the Output as structured content), with the run's ``_meta``."""

    kind: Kind = "code"
    runs_code = True

    def __init__(self, runs: Runs, code_mode: CodeMode, program: SavedProgram) -> None:
        self.runs, self.code_mode, self.program = runs, code_mode, program

    async def handle(self, arguments: dict[str, Any] | None, ctx: CallContext) -> Answer:
        # The program and everything it reaches as of now: replacing one meanwhile changes nothing here.
        state = self.code_mode.state
        program = state.stored.get(self.program.name, self.program)
        if problem := saved.changed_text(program, state.infos):
            return Answer(error_result(problem))
        how = Pass(
            "live", state=state, chain=(program.name,), saved_input=json.dumps(arguments or {}), caller=ctx.caller
        )
        code = saved.with_input(program.source, None)
        run = await self.runs.execute(code, approve=ctx.approve, session=ctx.session, how=how)
        return Answer(saved_answer(program, run).model_copy(update={"meta": run_to_result(run).meta}), run)


class SaveGoProgram:
    """``save_go_program``: a program checked, built and kept as a tool (``save``: the toolbox's
    :meth:`~gocode.toolbox.Toolbox.save_program`, which announces the new tool list)."""

    kind: Kind = "code"
    runs_code = True

    def __init__(self, save: Callable[[SaveRequest], Awaitable[SavedProgram]]) -> None:
        self.save = save

    async def handle(self, arguments: dict[str, Any] | None, ctx: CallContext) -> Answer:
        try:
            program = await self.save(SaveRequest.parse(arguments))
        except SavedProgramError as exc:
            return Answer(error_result(str(exc)))
        text = f"saved: tool {program.name!r} is offered from now on, input schema {json.dumps(program.input_schema)}"
        return Answer(types.CallToolResult(content=[types.TextContent(type="text", text=text)]))


async def save_program(code_mode: CodeMode, request: SaveRequest, taken: set[str]) -> SavedProgram:
    """Check and build ``request``'s program against ``code_mode``'s tools and keep it in its
    store; ``taken``: the names it may not have (the tools offered, every server's tool names)."""
    saved.check_name(request.name, taken)
    store = code_mode.saved_store()
    if request.name in store.names() and not request.replace:
        raise SavedProgramError(
            f"a saved program named {request.name!r} exists; pass replace (--force) to overwrite it"
        )
    program = await saved.derive(
        code_mode.module_cache,
        code_mode.package,
        request.name,
        request.code,
        request.description,
        tools=code_mode.tool_infos,
        saved={p.name: p for p in store.all()},
        timeout=code_mode.settings.clamp_timeout(None),
    )
    store.store(program, replace=request.replace)
    return program
