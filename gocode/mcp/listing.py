"""``tools/list`` read tool by tool, so one tool gocode cannot use never hides the rest of its server.

The SDK validates a whole ``tools/list`` result at once: one tool whose ``inputSchema`` is
``{}`` without ``"type"`` (a common way to say "no parameters") fails the listing, and the
server contributes nothing. Here the raw result is read page by page and each tool is vetted
on its own (:func:`vet_tools`, pure): a tool that is fine is kept as sent; one with parameters
or a result gocode cannot type keeps a safe fallback (its input becomes ``map[string]any``, its
result text); one that cannot be called at all (no name, a name already taken, parameters nested
deeper than :data:`SCHEMA_DEPTH`) is left out.
Every fallback and omission is a warning, carried with the server's tools.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from gocode.config import ServerConfig
from gocode.errors import DiscoveryError
from gocode.mcp.nesting import SCHEMA_DEPTH, deeper_than
from gocode.toolset import ServerTools, ToolInfo

if TYPE_CHECKING:  # the SDK is imported where a session is used: showing cached tools needs none
    from mcp import Client

MAX_PAGES = 1000

# A tool's input when its schema says nothing gocode can use: any object (Go: map[string]any).
FALLBACK_INPUT: dict[str, Any] = {
    "type": "object",
    "additionalProperties": {"description": "Any JSON value (the tool's own schema could not be used)."},
}


@dataclass
class Listing:
    """A server's tools as vetted wire JSON, what was changed or left out, and its cache hints."""

    tools: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    ttl_ms: int | None = None  # the smallest ttlMs of the pages (None: the server gave none)
    cache_scope: str | None = None  # "private" wins over "public" across pages
    instructions: str = ""  # the server's own, from initialize (untrusted; at most INSTRUCTIONS_CHARS)
    offers: list[str] | None = None  # "resources", "prompts" as its capabilities say (None: not known)


INSTRUCTIONS_CHARS = 4000  # of a server's instructions kept (the model view shows fewer)


async def list_tools(client: Client) -> Listing:
    """Every tool, following ``nextCursor`` (bounded, in case a server loops), vetted one by one.

    The SDK session is then told about the kept tools, as its own listing would have, so
    calls made through it find their output schemas without listing again.
    """
    raw_tools: list[Any] = []
    listing = Listing()
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await _raw_list(client, cursor)
        tools = page.get("tools")
        if not isinstance(tools, list):
            raise DiscoveryError(f"tools/list answered without a list of tools: {_short(page)}")
        raw_tools.extend(tools)
        _merge_cache_hints(listing, page)
        cursor = page.get("nextCursor")
        if not isinstance(cursor, str) or not cursor:
            break
    else:
        raise DiscoveryError(f"tools/list returned more than {MAX_PAGES} pages; giving up")
    listing.tools, listing.warnings = vet_tools(raw_tools)
    said = client.instructions
    listing.instructions = said[:INSTRUCTIONS_CHARS] if isinstance(said, str) else ""
    listing.offers = offered(client)
    absorb(client, listing.tools)
    return listing


def offered(client: Client) -> list[str] | None:
    """What a server offers besides tools, as its capabilities say (None when it said none)."""
    try:
        caps = client.server_capabilities
    except Exception:  # no handshake answered with capabilities
        return None
    return [kind for kind in ("resources", "prompts") if getattr(caps, kind, None) is not None]


async def _raw_list(client: Client, cursor: str | None) -> dict[str, Any]:
    # Raw: the session's own send_request validates the whole result first (the failure this
    # module exists to avoid).
    from gocode.mcp import sdk_private

    raw = await sdk_private.raw_request(client.session, "tools/list", {"cursor": cursor} if cursor else None)
    if not isinstance(raw, dict):
        raise DiscoveryError(f"tools/list answered with {type(raw).__name__}, not an object")
    return raw


def absorb(client: Client, tools: list[dict[str, Any]]) -> None:
    """Tell the SDK session about the tools, as its own listing would have (the output schemas
    it checks results against), so calling a tool never makes it list them again."""
    import mcp_types as types

    from gocode.mcp import sdk_private

    models = []
    for t in tools:
        try:
            models.append(types.Tool.model_validate(t))
        except ValidationError:
            models.append(types.Tool.model_validate(_essential(t)))
    sdk_private.absorb_tool_listing(client.session, models)


def _merge_cache_hints(listing: Listing, page: dict[str, Any]) -> None:
    ttl = page.get("ttlMs")
    if isinstance(ttl, int) and not isinstance(ttl, bool) and ttl >= 0:
        listing.ttl_ms = ttl if listing.ttl_ms is None else min(ttl, listing.ttl_ms)
    scope = page.get("cacheScope")
    if scope in ("public", "private"):
        listing.cache_scope = "private" if "private" in (scope, listing.cache_scope) else "public"


def vet_tools(raw: list[Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """Each listed tool checked on its own: (the tools to use, warnings). Pure."""
    kept: list[dict[str, Any]] = []
    warnings: list[str] = []
    seen: set[str] = set()
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            warnings.append(f"tool #{i + 1} is not a JSON object ({_short(item)}); left out")
            continue
        name = item.get("name")
        if not isinstance(name, str) or not name.strip():
            warnings.append(f"tool #{i + 1} has no usable name ({_short(name)}); left out")
            continue
        if name in seen:
            warnings.append(f"tool {name!r} is listed twice; the second one is left out (calls name only one)")
            continue
        seen.add(name)
        tool, notes = _vet_tool(item)
        warnings.extend(f"tool {name!r}: {n}" for n in notes)
        if tool is not None:
            kept.append(tool)
    return kept, warnings


def _vet_tool(item: dict[str, Any]) -> tuple[dict[str, Any] | None, list[str]]:
    import mcp_types as types

    tool = dict(item)
    notes: list[str] = []
    schema = tool.get("inputSchema")
    if deeper_than(schema, SCHEMA_DEPTH):
        # No schema needs this depth, and converting one would exhaust the stack.
        return None, [f"inputSchema is nested deeper than {SCHEMA_DEPTH} levels; left out"]
    if deeper_than(tool.get("outputSchema"), SCHEMA_DEPTH):
        notes.append(f"outputSchema is nested deeper than {SCHEMA_DEPTH} levels; its result is returned as text")
        del tool["outputSchema"]
    if "inputSchema" not in tool:  # an old server's way to say "no parameters"
        tool["inputSchema"] = {"type": "object"}
    elif not isinstance(schema, dict):
        notes.append(f"inputSchema is not a JSON object ({_short(schema)}); its input is taken as map[string]any")
        tool["inputSchema"] = dict(FALLBACK_INPUT)
    elif schema.get("type", "object") != "object":
        notes.append(
            f"inputSchema has type {_short(schema.get('type'))}, not object; its input is taken as map[string]any"
        )
        tool["inputSchema"] = dict(FALLBACK_INPUT)
    out = tool.get("outputSchema")
    if "outputSchema" in tool and out is not None:
        if not isinstance(out, dict) or out.get("type", "object") != "object":
            notes.append(f"outputSchema is not an object schema ({_short(out)}); its result is returned as text")
            del tool["outputSchema"]
    elif "outputSchema" in tool:
        del tool["outputSchema"]
    if "description" in tool and not isinstance(tool["description"], str):
        notes.append(f"description is not a string ({_short(tool['description'])}); dropped")
        del tool["description"]
    if "title" in tool and not isinstance(tool["title"], str):
        del tool["title"]
    try:
        types.Tool.model_validate(tool)
    except ValidationError as exc:
        # Fields gocode does not need (annotations, icons, …) in a shape the SDK refuses.
        fields = sorted({str(e["loc"][0]) for e in exc.errors() if e.get("loc")})
        notes.append(f"fields the SDK cannot read were dropped: {', '.join(fields) or exc.error_count()}")
        tool = _essential(tool)
    return tool, notes


def _essential(tool: dict[str, Any]) -> dict[str, Any]:
    keep = ("name", "title", "description", "inputSchema", "outputSchema")
    return {k: tool[k] for k in keep if k in tool}


def _short(value: Any, limit: int = 60) -> str:
    try:
        text = json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _tool_info(server: str, raw: dict[str, Any]) -> ToolInfo:
    return ToolInfo(
        server=server,
        name=str(raw.get("name", "")),
        description=str(raw.get("description") or ""),
        input_schema=i if isinstance(i := raw.get("inputSchema"), dict) else {},
        output_schema=o if isinstance(o := raw.get("outputSchema"), dict) else None,
        title=t if isinstance(t := raw.get("title"), str) else None,
        definition=raw,
    )


def server_tools(name: str, server: ServerConfig, listing: Listing, version: str, info: Any) -> ServerTools:
    """A server's listing as :class:`ServerTools`, after the server's own tool filter.

    ``info`` is the server's ``Implementation`` (or the label made from it, for a cached listing).
    """
    tools = tuple(_tool_info(name, t) for t in listing.tools if server.allows(str(t.get("name", ""))))
    label = info if isinstance(info, str) else f"{info.name} {info.version}" if info is not None else ""
    # Not known (a listing kept before gocode asked): it may offer them.
    offers = tuple(listing.offers) if listing.offers is not None else ("resources", "prompts")
    return ServerTools(name, tools, version, label, tuple(listing.warnings), listing.instructions, offers)


# A short repr: asyncio.run formats its main task's (its result included) when it restores the
# SIGINT handler on Python 3.11, and every tool's schema takes a tenth of a second and more.
@dataclass(repr=False)
class DiscoveryResult:
    """Tools per server that answered, and an error per server that did not."""

    servers: list[ServerTools] = field(default_factory=list)
    failures: dict[str, DiscoveryError] = field(default_factory=dict)
    # Servers whose tools came from RecentListings instead of the server: when each was listed.
    from_cache: dict[str, float] = field(default_factory=dict)

    def __repr__(self) -> str:
        tools = sum(len(s.tools) for s in self.servers)
        return f"DiscoveryResult({len(self.servers)} servers, {tools} tools, failed: {sorted(self.failures)})"
