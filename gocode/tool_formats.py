"""MCP tools and results in the shapes the common model APIs expect, as plain dicts (pure).

Definitions (``FORMATS``):

=====================  ====================================================================
``mcp``                the MCP ``Tool`` wire JSON (``name``, ``description``, ``inputSchema``…)
``openai``             Chat Completions: ``{"type": "function", "function": {name, description, parameters}}``
``openai-responses``   Responses API: ``{"type": "function", name, description, parameters, strict: false}``
``anthropic``          Messages API: ``{name, description, input_schema}``
``gemini``             a ``functionDeclarations`` entry: ``{name, description, parametersJsonSchema}``
=====================  ====================================================================

``strict`` is off for the Responses API (where it defaults to on) because strict mode accepts
only schemas whose every property is required, which MCP servers rarely write.

Results: :func:`result_text` flattens a ``CallToolResult`` for APIs whose tool results are
text — Chat Completions, Gemini — describing non-text parts as ``[image image/png, 4033
bytes]`` (the Go runtime's notation) rather than dropping them; :func:`anthropic_tool_result`
and :func:`openai_responses_output` keep images as images, which those APIs accept in a tool
result.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from typing import Any, Literal

import mcp_types as types

Format = Literal["mcp", "openai", "openai-responses", "anthropic", "gemini"]

# Anthropic accepts these image types in a tool_result; anything else is described as text.
_ANTHROPIC_IMAGES = {"image/jpeg", "image/png", "image/gif", "image/webp"}


def _schema(tool: types.Tool) -> dict[str, Any]:
    schema = dict(tool.input_schema or {})
    schema.setdefault("type", "object")
    if schema.get("type") == "object":
        schema.setdefault("properties", {})
    return schema


def to_mcp(tool: types.Tool) -> dict[str, Any]:
    return tool.model_dump(by_alias=True, exclude_none=True, mode="json")


def to_openai(tool: types.Tool) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description or "", "parameters": _schema(tool)},
    }


def to_openai_responses(tool: types.Tool) -> dict[str, Any]:
    return {
        "type": "function",
        "name": tool.name,
        "description": tool.description or "",
        "parameters": _schema(tool),
        "strict": False,
    }


def to_anthropic(tool: types.Tool) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description or "", "input_schema": _schema(tool)}


def to_gemini(tool: types.Tool) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description or "", "parametersJsonSchema": _schema(tool)}


FORMATS: dict[str, Callable[[types.Tool], dict[str, Any]]] = {
    "mcp": to_mcp,
    "openai": to_openai,
    "openai-responses": to_openai_responses,
    "anthropic": to_anthropic,
    "gemini": to_gemini,
}


def convert(tools: list[types.Tool], fmt: str) -> list[dict[str, Any]]:
    """Tool definitions in one of :data:`FORMATS`; raises ``ValueError`` naming the known ones."""
    try:
        conv = FORMATS[fmt]
    except KeyError:
        raise ValueError(f"unknown tool format {fmt!r} (known: {', '.join(FORMATS)})") from None
    return [conv(t) for t in tools]


def _decoded_size(data: str) -> int:
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return len(data) * 3 // 4


def describe_part(part: types.ContentBlock) -> str:
    """A content block as text: text as is, anything else as a short bracketed note."""
    if isinstance(part, types.TextContent):
        return part.text
    # The same notes as the Go runtime's (go_templates/rt), so a model sees one convention.
    if isinstance(part, types.ImageContent | types.AudioContent):
        kind = "image" if isinstance(part, types.ImageContent) else "audio"
        return f"[{kind} {part.mime_type}, {_decoded_size(part.data)} bytes]"
    if isinstance(part, types.EmbeddedResource):
        res = part.resource
        if isinstance(res, types.TextResourceContents):
            return res.text
        return f"[resource {res.uri}, {_decoded_size(getattr(res, 'blob', ''))} bytes]"
    if isinstance(part, types.ResourceLink):
        return f"[resource link {part.name} {part.uri}]"
    return f"[{getattr(part, 'type', 'content')}]"


def result_text(result: types.CallToolResult) -> str:
    """The whole result as one string; structured content alone is serialized as JSON."""
    parts = [describe_part(p) for p in result.content]
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    return "\n".join(parts)


def openai_tool_message(result: types.CallToolResult, tool_call_id: str) -> dict[str, Any]:
    """A Chat Completions ``role: tool`` message."""
    return {"role": "tool", "tool_call_id": tool_call_id, "content": result_text(result)}


def openai_responses_output(result: types.CallToolResult, call_id: str) -> dict[str, Any]:
    """A Responses API ``function_call_output`` input item; images go as ``input_image`` parts."""
    if not any(isinstance(p, types.ImageContent) for p in result.content):
        return {"type": "function_call_output", "call_id": call_id, "output": result_text(result)}
    parts: list[dict[str, Any]] = []
    for part in result.content:
        if isinstance(part, types.ImageContent):
            parts.append({"type": "input_image", "image_url": f"data:{part.mime_type};base64,{part.data}"})
        else:
            parts.append({"type": "input_text", "text": describe_part(part)})
    return {"type": "function_call_output", "call_id": call_id, "output": parts}


def anthropic_tool_result(result: types.CallToolResult, tool_use_id: str) -> dict[str, Any]:
    """A Messages API ``tool_result`` block; supported images stay images."""
    blocks: list[dict[str, Any]] = []
    for part in result.content:
        if isinstance(part, types.ImageContent) and part.mime_type in _ANTHROPIC_IMAGES:
            blocks.append(
                {"type": "image", "source": {"type": "base64", "media_type": part.mime_type, "data": part.data}}
            )
        else:
            blocks.append({"type": "text", "text": describe_part(part) or "(empty)"})
    if not blocks:
        blocks.append({"type": "text", "text": result_text(result) or "(no output)"})
    out: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id, "content": blocks}
    if result.is_error:
        out["is_error"] = True
    return out


def gemini_function_response(result: types.CallToolResult, name: str) -> dict[str, Any]:
    """A ``functionResponse`` part."""
    key = "error" if result.is_error else "output"
    return {"functionResponse": {"name": name, "response": {key: result_text(result)}}}
