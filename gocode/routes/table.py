"""The route table: the tools offered, each name with its handler, built from one tool set.

Built again whenever the tool list is (a server's tools changed, a program was saved, the
sandbox tier was found): which names there are, and what answers each, change together.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

import mcp_types as types

from gocode.codemode import TOOL_NAME, CodeMode
from gocode.errors import UnknownToolError
from gocode.mcp.provider import ToolProvider
from gocode.routes import asking
from gocode.routes.code import ExecuteGoCode
from gocode.routes.handler import Handler
from gocode.routes.passthrough import ProviderTool, passthrough_tool
from gocode.routes.runs import Runs
from gocode.routes.saved import SavedProgramTool, SaveGoProgram
from gocode.routes.search import SearchGoTools
from gocode.routes.step import StepGoCode
from gocode.run import step as stepping
from gocode.tools import saved
from gocode.tools.saved import SAVE_TOOL_NAME, SavedProgram, SaveRequest
from gocode.toolset import ToolInfo
from gocode.view.rules import SEARCH_TOOL_NAME

# Safe for every model API: OpenAI and Anthropic allow [A-Za-z0-9_-]{1,64}; Gemini also wants
# a letter or underscore first.
_SAFE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")


@dataclass(frozen=True)
class RouteTable:
    """The tools to offer, in order, and the handler of each name."""

    handlers: dict[str, Handler] = field(default_factory=dict)
    tools: tuple[types.Tool, ...] = ()
    # The same tools as a client that cannot be asked to approve a program reads them.
    unasked: tuple[types.Tool, ...] = ()

    def handler(self, name: str) -> Handler:
        try:
            return self.handlers[name]
        except KeyError:
            known = ", ".join(self.handlers) or "none"
            raise UnknownToolError(f"unknown tool {name!r} (tools: {known})") from None

    def names(self) -> set[str]:
        """The names offered, saved programs left out."""
        return {n for n, h in self.handlers.items() if not isinstance(h, SavedProgramTool)}


@dataclass(frozen=True)
class Offer:
    """What a toolbox offers besides the tools its code mode decides on."""

    stateless_step: bool  # step_go_code (client-owned tools; pooled only)
    save: Callable[[SaveRequest], Awaitable[SavedProgram]]  # what save_go_program calls


def build(code_mode: CodeMode, providers: Mapping[str, ToolProvider], runs: Runs, offer: Offer) -> RouteTable:
    """The table for the tool set ``code_mode`` uses now (see :meth:`CodeMode.use`)."""
    active = code_mode.active  # enabled: auto decides per tool set
    reserved = {TOOL_NAME, SEARCH_TOOL_NAME} if active else set()
    handlers: dict[str, Handler] = {}
    tools: list[types.Tool] = []

    def add(name: str, handler: Handler, definition: types.Tool) -> None:
        handlers[name] = handler
        tools.append(definition)

    client_approves = asking.by_client(code_mode, runs)
    shown: list[types.Tool] = []  # execute_go_code and search_go_tools, whose text says who can approve
    unasked = shown
    if active:
        shown = asking.code_tools(code_mode, None)
        unasked = asking.code_tools(code_mode, False) if client_approves else shown
        handlers[TOOL_NAME] = ExecuteGoCode(runs)
        # Offered when either description shows less than every declaration.
        if len(shown) > 1 or len(unasked) > 1:
            handlers[SEARCH_TOOL_NAME] = SearchGoTools(code_mode, client_approves)
        tools.extend(shown)
        if offer.stateless_step:
            reserved.add(stepping.STEP_TOOL_NAME)
            definition = stepping.tool_definition(code_mode.rules())
            add(stepping.STEP_TOOL_NAME, StepGoCode(runs, client_approves), types.Tool.model_validate(definition))
    # A saved program is offered as itself below, never as a passed-through tool.
    excluded = [t for t in code_mode.view.excluded if t.server != saved.SAVED_SERVER]
    timeout = code_mode.settings.clamp_timeout(None)
    for name, info in exposed_names(excluded, reserved).items():
        add(name, ProviderTool(providers[info.server], info, timeout), passthrough_tool(name, info))
    if active and code_mode.settings.saved_programs:
        add(SAVE_TOOL_NAME, SaveGoProgram(offer.save), types.Tool.model_validate(saved.save_tool_definition()))
        # The programs this tool set was built with (one read of the store for both).
        for program in code_mode.state.stored.values():
            if program.name not in handlers:  # a tool that came later keeps its name
                add(program.name, SavedProgramTool(runs, code_mode, program), types.Tool.model_validate(program.tool()))
    return RouteTable(handlers, tuple(tools), (*unasked, *tools[len(shown) :]))


def exposed_names(tools: list[ToolInfo], reserved: set[str]) -> dict[str, ToolInfo]:
    """A name per passed-through tool that every model API accepts and that no other tool has.

    A tool keeps its own name when it can; one that clashes (the same tool name on two
    servers) or is not a valid function name becomes ``server_tool``, cleaned and, if still
    taken, suffixed with a short hash. Deterministic for a given set of tools (pure).
    """
    out: dict[str, ToolInfo] = {}
    counts: dict[str, int] = {}
    for t in tools:
        counts[t.name] = counts.get(t.name, 0) + 1
    for t in sorted(tools, key=lambda t: (t.server, t.name)):
        name = t.name
        if counts[name] > 1 or name in reserved or not _SAFE_NAME.match(name):
            name = _clean(f"{t.server}_{t.name}")
        if name in out or name in reserved:
            digest = hashlib.sha256(f"{t.server}\0{t.name}".encode()).hexdigest()[:8]
            name = _clean(name[:55] + "_" + digest)
        out[name] = t
    return out


def _clean(name: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_-]+", "_", name).strip("_-") or "tool"
    if not re.match(r"[A-Za-z_]", name):
        name = "t_" + name
    return name[:64]
