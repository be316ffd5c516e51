"""Which tools a model gets in Go and which as regular tools: ``codeMode.enabled`` (``auto``
decided by what the tools' classic definitions cost) and ``excludedTools``. (The result types
inferred from what tools answered are given by :mod:`gocode.schema.inferred`, a stage below.)
Pure: no servers, no Go; ``gocode list`` reads it without loading the rest of code mode."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from gocode.config import CodeModeConfig
from gocode.mcp.listing import DiscoveryResult
from gocode.mcp.tasksupport import task_support
from gocode.toolset import ServerTools, ToolInfo, ToolSet


@dataclass(frozen=True)
class ToolView:
    """What one model gets: the tools in Go, and the excluded tools offered as regular tools."""

    code_tools: ToolSet
    excluded: tuple[ToolInfo, ...]
    protocols: dict[str, str]
    warnings: tuple[str, ...] = ()

    def task_tools(self, server: str) -> list[str]:
        """The server's tools in Go that run only as MCP tasks (:mod:`gocode.mcp.tasks`): a program
        that opens its own session to the server makes each call of them a task."""
        return sorted(
            t.name
            for s in self.code_tools.servers
            if s.server == server
            for t in s.tools
            if task_support(t.definition) == "required"
        )


def split_tools(discovered: list[ServerTools], excluded_names: set[str], enabled: bool) -> ToolView:
    """Sort tools into code mode and regular tools for a model (pure).

    An ``excludedTools`` entry that names no tool is a warning (with the closest names): a
    typo would otherwise silently leave the tool in code mode.
    """
    code, regular = [], []
    used: set[str] = set()
    for s in discovered:
        keep = []
        for t in s.tools:
            names = {t.name, f"{s.server}.{t.name}"}
            if not enabled or names & excluded_names:
                regular.append(t)
                used |= names & excluded_names
            else:
                keep.append(t)
        code.append(
            ServerTools(
                s.server, tuple(keep), s.protocol_version, s.server_info, instructions=s.instructions, offers=s.offers
            )
        )
    known = [n for s in discovered for t in s.tools for n in (t.name, f"{s.server}.{t.name}")]
    warnings = []
    for name in sorted(excluded_names - used):
        close = difflib.get_close_matches(name, known, n=2, cutoff=0.6)
        hint = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
        warnings.append(f"excludedTools entry {name!r} matches no tool{hint}")
    protocols = {s.server: s.protocol_version for s in discovered}
    return ToolView(ToolSet(tuple(code)), tuple(regular), protocols, tuple(warnings))


def in_config_order(servers: list[ServerTools], configured: list[str]) -> list[ServerTools]:
    """The servers in the order they take Go names (:meth:`gocode.toolset.ToolSet.by_seniority`):
    the configured ones as the config lists them, then the others (Python tools) by name, each
    after those it came after already, so one added at the end of the config, or a tool kind
    added later, never takes a name an existing tool has."""
    rank = {name: i for i, name in enumerate(configured)}
    return sorted(servers, key=lambda s: (rank.get(s.server, len(rank)), s.server if s.server not in rank else ""))


# enabled: auto turns code mode on when the tools' classic definitions cost more than this
# many o200k tokens: below it the execute_go_code definition costs about as much as the
# tools it replaces (measured with bench/tokens.py; see docs/model-view.md).
AUTO_MIN_CLASSIC_TOKENS = 1500


def _classic(servers: list[ServerTools], excluded_names: set[str]) -> list[dict[str, Any]]:
    """The tools' classic JSON definitions, the excluded ones left out."""
    return [t.as_json() for s in servers for t in s.tools if not {t.name, f"{s.server}.{t.name}"} & excluded_names]


def pays_off(servers: list[ServerTools], excluded_names: set[str]) -> bool:
    """Whether code mode pays for these tools: their classic JSON definitions are large."""
    from gocode.view.tokens import at_most, wire_json

    return not at_most(wire_json(_classic(servers, excluded_names)), AUTO_MIN_CLASSIC_TOKENS - 1)


def code_mode_reason(settings: CodeModeConfig, servers: list[ServerTools]) -> str:
    """Why code mode is on or off for these tools (``auto``: what it resolved to and why)."""
    from gocode.view.tokens import count_json

    if settings.enabled != "auto":
        return f"codeMode.enabled: {str(settings.enabled).lower()}"
    tokens = count_json(_classic(servers, set(settings.excluded_tools)))
    state = "on" if tokens >= AUTO_MIN_CLASSIC_TOKENS else "off"
    return f"auto: {state}, the tools' classic definitions take {tokens} tokens (code mode pays from {AUTO_MIN_CLASSIC_TOKENS})"


def code_mode_on(settings: CodeModeConfig, servers: list[ServerTools]) -> bool:
    """Whether code mode is on for these tools: ``enabled``, with ``auto`` decided by :func:`pays_off`."""
    if settings.enabled == "auto":
        return pays_off(servers, set(settings.excluded_tools))
    return bool(settings.enabled)


def listing(
    settings: CodeModeConfig, result: DiscoveryResult, model: str | None = None
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Each server's tools and which are in code mode for a model, decided as a controller
    decides it (what ``gocode list --json`` prints), with the warnings of that decision."""
    enabled = code_mode_on(settings, result.servers)
    view = split_tools(result.servers, set(settings.excluded_tools), enabled)
    in_code = {(s.server, t.name) for s in view.code_tools.servers for t in s.tools}
    servers: list[dict[str, Any]] = [
        {
            "name": s.server,
            "ok": True,
            "protocolVersion": s.protocol_version,
            "tools": [
                {
                    "name": t.name,
                    "description": t.description,
                    "codeMode": (s.server, t.name) in in_code,
                    "hasOutputSchema": t.output_schema is not None,
                }
                for t in s.tools
            ],
            "warnings": list(s.warnings),
        }
        for s in result.servers
    ]
    servers += [
        {
            "name": name,
            "ok": False,
            "error": str(exc),
            "summary": exc.summary,
            "exitStatus": exc.exit_status,
            "stderr": exc.stderr,
        }
        for name, exc in sorted(result.failures.items())
    ]
    doc = {
        "model": model,
        "codeMode": enabled,
        "codeModeSetting": settings.enabled,
        "codeModeReason": code_mode_reason(settings, result.servers),
        "servers": servers,
    }
    return doc, view.warnings
