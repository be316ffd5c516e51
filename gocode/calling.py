"""One tool call from outside a program: ``gocode call SERVER TOOL [--args JSON | key=value …]``.

The server is reached as everywhere else (its config entry, ``${VAR}`` secrets expanded into
its environment or headers, never printed), its listing is vetted and filtered by its
``disabledTools`` as discovery does, and the tool may be named as the server lists it or by its
Go function name (``get_weather``, ``getWeather``). Arguments come as one JSON object or as
``key=value`` pairs, each value read as the tool's input schema says (``days=3`` is a number
when ``days`` is an integer, ``tag=a tag=b`` a list when ``tag`` is an array); they are checked
against the schema before the call, and a bad one is refused with the tool's Go declaration.
"""

from __future__ import annotations

import difflib
import json
import tempfile
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

import anyio
import jsonschema
import mcp_types as types
from mcp import Client

from gocode.config import Config
from gocode.errors import CallError, ConfigError, UpstreamError
from gocode.mcp.asker import Policy, Say, answering, on_stderr
from gocode.mcp.backchannel import InFlight
from gocode.mcp.discovery import connect, failure, list_all_tools, server_label, server_tools
from gocode.mcp.tasks import ProgressRoutes, call_task
from gocode.mcp.tasksupport import task_support
from gocode.schema.builder import build_package
from gocode.schema.names import camel
from gocode.toolset import ServerTools, ToolInfo, ToolSet
from gocode.view.modelview import render_funcs


@dataclass(frozen=True)
class Called:
    """What ``gocode call`` made: the tool, the arguments sent, and the server's result."""

    tool: ToolInfo
    arguments: dict[str, Any]
    result: types.CallToolResult


async def call_tool(
    config: Config,
    server: str,
    tool: str,
    *,
    args_json: str | None = None,
    pairs: Sequence[str] = (),
    model: str | None = None,
    timeout: float | None = None,
    elicit: Policy | None = None,
    say: Say | None = None,
) -> Called:
    """Connect to ``server``, check the arguments against ``tool``'s schema, and call it once.

    Raises :class:`~gocode.errors.ConfigError` for an unknown server,
    :class:`~gocode.errors.DiscoveryError` when it cannot be reached, and :class:`CallError`
    for an unknown tool or bad arguments (nothing is called then). A tool's own failure is a
    result with ``is_error`` set.

    ``elicit``: how a server's elicitation during the call is answered (:mod:`gocode.mcp.asker`:
    ``ask`` the person at the terminal, accept its ``defaults``, ``decline``; None: elicitation
    is not declared); each answer is said to ``say`` (by default, stderr).
    """
    settings = config.code_mode_for(model)
    spec = config.mcp_servers.get(server)
    if spec is None:
        close = difflib.get_close_matches(server, list(config.mcp_servers), n=2, cutoff=0.6)
        hint = f" (did you mean {' or '.join(close)}?)" if close else ""
        known = ", ".join(sorted(config.mcp_servers)) or "none"
        raise ConfigError(f"no server {server!r} in {config.source}{hint}; servers: {known}")
    limit = settings.clamp_timeout(timeout)
    # Decided inside the session, raised after it: the session's task group would wrap them.
    refused: CallError | None = None
    result: types.CallToolResult | None = None
    with (
        tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog,
        answering(elicit, say or on_stderr) as asker,
    ):
        # Without an asker, elicitation is not declared; sampling never is (no model here to ask).
        inflight = InFlight(server, sampling=False) if asker is not None else None
        log = errlog if spec.type == "stdio" else None
        try:
            async with connect(server, spec, log, read_timeout=spec.timeout, inflight=inflight) as (client, version):
                with anyio.fail_after(spec.timeout):
                    listing = await list_all_tools(client)
                listed = server_tools(server, spec, listing, version, client.server_info)
                try:
                    info = find_tool(listed, tool)
                    arguments = parse_arguments(listed, info, args_json, pairs)
                except CallError as exc:
                    refused = exc
                else:
                    with anyio.move_on_after(limit), inflight.call(asker) if inflight else nullcontext():
                        result = await _call(client, server, info, arguments)
        except (Exception, BaseExceptionGroup) as exc:
            raise failure(server, spec, exc, log) from None
    if refused is not None:
        raise refused
    if result is None:
        raise CallError(f"{server}.{info.name} did not answer within {limit:g} s")
    return Called(info, arguments, result)


async def _call(client: Client, server: str, info: ToolInfo, arguments: dict[str, Any]) -> types.CallToolResult:
    """One call; a task-only tool's as a task (:mod:`gocode.mcp.tasks`), whose answer that is not
    one is the call's error result (the server was reached: its failure is the tool's)."""
    if task_support(info.definition) != "required":
        return await client.call_tool(info.name, arguments)
    try:
        return await call_task(
            client.session, info.name, arguments, label=server_label(server), routes=ProgressRoutes()
        )  # fmt: skip
    except UpstreamError as exc:
        return types.CallToolResult(content=[types.TextContent(type="text", text=str(exc))], is_error=True)


def find_tool(listed: ServerTools, name: str) -> ToolInfo:
    """The tool named as the server lists it, as ``server.tool``, or by its Go function name."""
    bare = name.removeprefix(listed.server + ".")
    by_name = {t.name: t for t in listed.tools}
    if bare in by_name:
        return by_name[bare]
    for f in build_package(ToolSet((listed,))).funcs:
        if bare in (f.name, f.exported) or camel(bare) == f.name:
            return by_name[f.tool]
    close = difflib.get_close_matches(bare, list(by_name), n=3, cutoff=0.5)
    hint = f"; did you mean {' or '.join(close)}?" if close else ""
    known = ", ".join(sorted(by_name)) or "none"
    raise CallError(f"server {listed.server!r} has no tool {name!r}{hint}\n(tools: {known})")


def parse_arguments(listed: ServerTools, tool: ToolInfo, args_json: str | None, pairs: Sequence[str]) -> dict[str, Any]:
    """The arguments from ``--args`` JSON and/or ``key=value`` pairs, checked against the schema."""
    schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
    arguments: dict[str, Any] = {}
    if args_json is not None:
        try:
            arguments = json.loads(args_json)
        except ValueError as exc:
            raise _refused(listed, tool, f"--args is not JSON: {exc}") from None
        if not isinstance(arguments, dict):
            raise _refused(listed, tool, f"--args must be a JSON object, not {type(arguments).__name__}")
    given = set(arguments)
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key:
            raise _refused(listed, tool, f"{pair!r} is not key=value")
        try:
            value = coerce(schema, key, text)
        except ValueError as exc:
            raise _refused(listed, tool, f"{key}={text}: {exc}") from None
        # A key given twice is refused rather than one silently winning; only pairs add to a list.
        if key in given:
            raise _refused(listed, tool, f"{key!r} is given both in --args and as {key}=...")
        if key not in arguments:
            arguments[key] = value
        elif isinstance(arguments[key], list) and isinstance(value, list):
            arguments[key] = [*arguments[key], *value]  # tag=a tag=b
        else:
            raise _refused(listed, tool, f"{key!r} is given more than once")
    problems = _violations(schema, arguments)
    if problems:
        raise _refused(listed, tool, "; ".join(problems))
    return arguments


def coerce(schema: dict[str, Any], key: str, text: str) -> Any:
    """The value of ``key=text`` as the input schema types ``key`` (raises ValueError)."""
    props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    prop = props.get(key) if isinstance(props, dict) else None
    if prop is None:
        extra = schema.get("additionalProperties", True)
        if extra is False:
            known = ", ".join(props) if isinstance(props, dict) and props else "none"
            raise ValueError(f"the tool takes no argument {key!r} (arguments: {known})")
        prop = extra if isinstance(extra, dict) else {}
    return _value(schema, _resolve(schema, prop), text)


def _value(root: dict[str, Any], prop: Any, text: str) -> Any:
    kinds = _kinds(root, prop)
    if kinds == {"string"} or (not kinds and isinstance(prop, dict) and _all_strings(prop.get("enum"))):
        return text
    if "array" in kinds and not text.lstrip().startswith("["):
        items = _resolve(root, prop.get("items", {})) if isinstance(prop, dict) else {}
        return [_value(root, items, text)]
    for kind in ("integer", "number", "boolean", "null", "array", "object"):
        if kind in kinds:
            got = _parse_as(kind, text)
            if got is not _NOT:
                return got
    if "string" in kinds:
        return text
    if kinds:
        raise ValueError(f"not {' or '.join(sorted(_ARTICLE.get(k, k) for k in kinds))}")
    try:  # untyped: JSON when it is JSON (3, true, [1]), else the text
        return json.loads(text)
    except ValueError:
        return text


_NOT = object()
_ARTICLE = {
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
    "array": "a JSON array",
    "object": "a JSON object",
}


def _parse_as(kind: str, text: str) -> Any:
    t = text.strip()
    if kind == "integer":
        try:
            return int(t)
        except ValueError:
            return _NOT
    if kind == "number":
        try:
            number = float(t)
        except ValueError:
            return _NOT
        return int(number) if number.is_integer() and "." not in t and "e" not in t.lower() else number
    if kind == "boolean":
        return {"true": True, "false": False}.get(t.lower(), _NOT)
    if kind == "null":
        return None if t == "null" else _NOT
    try:
        value = json.loads(t)
    except ValueError:
        return _NOT
    wanted = list if kind == "array" else dict
    return value if isinstance(value, wanted) else _NOT


def _kinds(root: dict[str, Any], prop: Any) -> set[str]:
    """The JSON types a property allows (from ``type`` and the branches of anyOf/oneOf)."""
    if not isinstance(prop, dict):
        return set()
    kind = prop.get("type")
    kinds = (
        {kind}
        if isinstance(kind, str)
        else {k for k in kind if isinstance(k, str)}
        if isinstance(kind, list)
        else set()
    )
    for key in ("anyOf", "oneOf"):
        for branch in prop.get(key) or []:
            kinds |= _kinds(root, _resolve(root, branch))
    return kinds


def _all_strings(values: Any) -> bool:
    return isinstance(values, list) and bool(values) and all(isinstance(v, str) for v in values)


def _resolve(root: dict[str, Any], prop: Any) -> Any:
    """Follow a local ``$ref`` (``#/$defs/X``, ``#/definitions/X``); anything else as it is."""
    seen = 0
    while isinstance(prop, dict) and isinstance(prop.get("$ref"), str) and prop["$ref"].startswith("#/") and seen < 16:
        target: Any = root
        for part in prop["$ref"][2:].split("/"):
            target = target.get(part.replace("~1", "/").replace("~0", "~")) if isinstance(target, dict) else None
        if not isinstance(target, dict):
            return {}
        prop, seen = target, seen + 1
    return prop


def _violations(schema: dict[str, Any], arguments: dict[str, Any]) -> list[str]:
    """What the input schema says is wrong with the arguments (nothing when the schema itself is broken)."""
    try:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        validator = cls(schema)
    except (jsonschema.SchemaError, TypeError):
        return []
    problems = []
    for error in sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path)):
        where = ".".join(str(p) for p in error.absolute_path)
        problems.append(f"{where}: {error.message}" if where else error.message)
    return problems[:10]


def _refused(listed: ServerTools, tool: ToolInfo, why: str) -> CallError:
    pkg = build_package(ToolSet((ServerTools(listed.server, (tool,), listed.protocol_version),)))
    declaration = render_funcs(pkg, pkg.funcs).strip()
    return CallError(f"bad arguments for {listed.server}.{tool.name}: {why}\n\nthe tool:\n{declaration}")
