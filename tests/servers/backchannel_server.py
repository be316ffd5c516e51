"""A stdio MCP server that talks back to its client during (and after) its tool calls: log
messages, sampling and elicitation requests, some of them hostile in number or size.

Tools:

    sample {"prompt": str}         asks the client for a completion; answers its text, or "refused: <why>"
    ask {"question": str}          asks the client (elicitation, a form with "answer"); answers
                                   "<action> <answer>" or "refused: <why>"
    chatter {"count": int, "size": int}
                                   logs ``count`` messages at each of debug, info, warning, error
                                   (``size`` characters of data each), then answers "done"
    flood {"times": int}           asks for ``times`` completions one after another; answers
                                   "<answered> <refused>"
    hold {"dir": str}              writes <dir>/held, waits (at most 60 s) for <dir>/go, answers "released"
    later {"dir": str}             answers at once; then, when <dir>/go appears (at most 60 s), asks
                                   for a completion outside any call and writes the outcome to
                                   <dir>/outcome
"""

from __future__ import annotations

from pathlib import Path

import anyio
import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError

server = MCPServer("gocode-test-backchannel")


async def _sample(ctx: Context, prompt: str, related: bool = True) -> str:
    try:
        answer = await ctx.session.create_message(
            [types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))],
            max_tokens=50,
            related_request_id=ctx.request_id if related else None,
        )
    except MCPError as exc:
        return f"refused: {exc.message}"
    content = answer.content
    return content.text if isinstance(content, types.TextContent) else str(content)


@server.tool()
async def sample(prompt: str, ctx: Context) -> str:
    """Ask the client's model to complete a prompt."""
    return await _sample(ctx, prompt)


@server.tool()
async def ask(question: str, ctx: Context) -> str:
    """Ask the client's user a question."""
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
    try:
        result = await ctx.session.elicit_form(question, schema, related_request_id=ctx.request_id)
    except MCPError as exc:
        return f"refused: {exc.message}"
    return f"{result.action} {(result.content or {}).get('answer', '')}"


@server.tool()
async def chatter(count: int, size: int, ctx: Context) -> str:
    """Log count messages at each of four levels, each size characters long."""
    for i in range(count):
        for level in ("debug", "info", "warning", "error"):
            await ctx.log(level, f"{level} {i} " + "x" * size, logger_name="chatter")  # type: ignore[arg-type]
    return "done"


@server.tool()
async def flood(times: int, ctx: Context) -> str:
    """Ask for times completions, one after another."""
    answered = refused = 0
    for i in range(times):
        if (await _sample(ctx, f"flood {i}")).startswith("refused: "):
            refused += 1
        else:
            answered += 1
    return f"{answered} {refused}"


async def _appears(path: Path) -> bool:
    with anyio.move_on_after(60):
        while not path.exists():
            await anyio.sleep(0.02)
        return True
    return False


@server.tool()
async def hold(dir: str) -> str:
    """Stay in flight until dir/go appears."""
    Path(dir, "held").write_text("held")
    await _appears(Path(dir, "go"))
    return "released"


@server.tool()
async def later(dir: str, ctx: Context) -> str:
    """Answer now; ask for a completion outside any call once dir/go appears."""

    async def afterwards() -> None:
        if await _appears(Path(dir, "go")):
            Path(dir, "outcome").write_text(await _sample(ctx, "after the call", related=False))

    tg = server_tasks
    assert tg is not None
    tg.start_soon(afterwards)
    return "answered"


server_tasks: anyio.abc.TaskGroup | None = None


async def main() -> None:
    global server_tasks
    async with anyio.create_task_group() as tg:
        server_tasks = tg
        await server.run_stdio_async()
        tg.cancel_scope.cancel()


if __name__ == "__main__":
    anyio.run(main)
