"""The answers tool calls get: ``execute_go_code``'s MCP result from a run (with what clients
and logs read in ``_meta``), a saved program's, an error, and :class:`ToolResult`, the answer an
agent loop gets from :meth:`gocode.toolbox.Toolbox.call` with converters for the model APIs."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

import mcp_types as types

from gocode import tool_formats
from gocode.program.plan import PLAN_META_KEY
from gocode.run.result import RETRYABLE_PHASES, RunResult
from gocode.tools import saved
from gocode.tools.saved import SavedProgram

RUN_META_KEY = "io.gocode/run"
REQUEST_ID_META_KEY = "io.gocode/requestId"


@dataclass(frozen=True)
class ToolResult:
    """The answer to one tool call, with converters for the common model APIs.

    ``result`` is the MCP ``CallToolResult`` (for a passed-through tool, the server's own);
    ``run`` is the program's :class:`~gocode.run.runner.RunResult` for ``execute_go_code``.
    """

    name: str
    result: types.CallToolResult
    run: RunResult | None = None

    @property
    def is_error(self) -> bool:
        return bool(self.result.is_error)

    @property
    def value(self) -> Any:
        """The structured value: what the program gave ``result(v)`` for ``execute_go_code``
        (None if nothing), else the tool's ``structuredContent``."""
        if self.run is not None:
            return self.run.result
        return self.result.structured_content

    @property
    def text(self) -> str:
        """The result as text (images and other parts described in brackets)."""
        return tool_formats.result_text(self.result)

    def openai(self, tool_call_id: str) -> dict[str, Any]:
        """A Chat Completions ``role: tool`` message."""
        return tool_formats.openai_tool_message(self.result, tool_call_id)

    def openai_responses(self, call_id: str) -> dict[str, Any]:
        """A Responses API ``function_call_output`` item."""
        return tool_formats.openai_responses_output(self.result, call_id)

    def anthropic(self, tool_use_id: str) -> dict[str, Any]:
        """A Messages API ``tool_result`` block (images kept as images)."""
        return tool_formats.anthropic_tool_result(self.result, tool_use_id)

    def gemini(self) -> dict[str, Any]:
        """A ``functionResponse`` part."""
        return tool_formats.gemini_function_response(self.result, self.name)


def error_result(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True)


def warming_up_result() -> types.CallToolResult:
    """The answer to a call that came while the server was still warming up, past its timeout."""
    return run_to_result(
        RunResult(False, "warming", stderr="gocode is still warming up (building the Go module cache); retry shortly")
    )


def run_to_result(run: RunResult) -> types.CallToolResult:
    """``execute_go_code``'s MCP result: the printed output, or the error a model can act on.

    Timings, phase, the sandbox in force and whether a retry may help go in ``_meta`` (for
    clients and logs; models do not see them). :meth:`gocode.toolbox.Toolbox.call_mcp` adds the request id.
    """
    meta: dict[str, Any] = {
        RUN_META_KEY: {
            "phase": run.phase,
            "durationMs": round(run.duration_ms, 1),
            "buildMs": round(run.build_ms, 1),
            "runMs": round(run.run_ms, 1),
            "cachedBinary": run.cached_binary,
            "buildMode": run.build_mode,
            "runner": run.runner or None,
            "truncated": run.truncated,
            "warnings": run.warnings,
            "pooled": run.pooled,
            "toolCalls": [c.as_json() for c in run.tool_calls],
            "sandbox": run.sandbox,
            "retryable": run.phase in RETRYABLE_PHASES,
            "runId": run.run_id or None,
            "outputBytes": run.output_bytes,
            "outputFile": run.output_file,
            "resultFile": run.result_file,
        }
    }
    if run.plan is not None:
        meta[PLAN_META_KEY] = run.plan
    warning = (run.sandbox or {}).get("warning")
    if warning:  # a weaker sandbox than asked for is something the model's user must see
        note = f"\n[{warning}]"
        run = dataclasses.replace(run, output=run.output + note) if run.ok else run
    if run.ok:
        structured: dict[str, Any] = {"output": run.output}
        if run.result is not None:
            structured["result"] = run.result
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=_shown(run))],
            structured_content=structured,
            _meta=meta,
        )
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=run.error_text())], is_error=True, _meta=meta
    )


def _shown(run: RunResult) -> str:
    """The text a model reads for a run that worked: what it printed, and its result() as JSON."""
    if run.result is None:
        return run.output or "(the program printed nothing)"
    # Longer than the output cap: its head and tail, and the file it is kept in.
    value = run.result_excerpt or json.dumps(run.result, ensure_ascii=False)
    return f"{run.output.rstrip()}\nresult: {value}" if run.output.strip() else f"result: {value}"


def saved_answer(program: SavedProgram, run: RunResult) -> types.CallToolResult:
    """A saved program's answer as a tool: its ``result()`` value (structured, for a declared
    Output) or what it printed; a failed run is an error naming the program."""
    if not run.ok:
        why = "\n".join(x for x in (run.stderr.strip(), run.output.strip()[-2000:]) if x)
        return saved.error_text(f"saved program {program.name!r} failed ({run.phase}): {why}")
    if program.output_schema is not None and not isinstance(run.result, dict):
        return saved.error_text(f"saved program {program.name!r} declares an Output but gave result() no Output value")
    if run.result is None:
        return types.CallToolResult(content=[types.TextContent(type="text", text=run.output)])
    text = json.dumps(run.result, ensure_ascii=False)
    structured = run.result if isinstance(run.result, dict) else None
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=structured)
