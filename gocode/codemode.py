"""Code mode for one model: its tools as Go functions, the ``execute_go_code`` tool, and running it.

A :class:`CodeMode` is built from a config and a model ref. :meth:`CodeMode.refresh`
discovers the servers; tools named in the model's ``excludedTools`` (bare name or
``server.tool``) stay regular tools, everything else goes into Go (:mod:`gocode.view.selection`). :meth:`CodeMode.execute`
runs one piece of model code and always returns a :class:`~gocode.run.runner.RunResult`
(failures of the code are answers, not exceptions).

One instance may serve many calls, concurrently: the tool set is fixed between refreshes
and every run has its own directory and process.
"""

from __future__ import annotations

import asyncio
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from gocode.compile.modcache import BuildResult, ModuleCache, Progress, check_and_build
from gocode.config import ApprovalConfig, Config, ServerConfig
from gocode.errors import GocodeError
from gocode.mcp.cache import ListingCache
from gocode.mcp.listing import DiscoveryResult
from gocode.mcp.shapes import ShapeRecorder
from gocode.program.code import ModelCode
from gocode.program.plan import Plan, plan_from_answer, program_hash
from gocode.run import workdir as workdirs
from gocode.run.approvals import ApprovalRequest, Approver, AskFirst, approval, approval_comments, held_for, refusal
from gocode.run.launching import Launching
from gocode.run.reach import OwnSessions, Reach, server_spec
from gocode.run.result import RunResult, compile_failure, keep_value
from gocode.run.runner import LineFn
from gocode.run.sandbox import probe_state, process_limit
from gocode.schema.doctext import one_line
from gocode.schema.inferred import typeable, typeable_tools, with_inferred_outputs
from gocode.schema.ir import Package
from gocode.schema.kept import package_for
from gocode.search.answer import respond
from gocode.search.index import SearchIndex
from gocode.tools.saved import SAVED_SERVER, SavedProgram, SavedStore, approved_text, expand_plan, legacy_names
from gocode.tools.saved import listing as saved_listing
from gocode.toolset import ServerTools, ToolInfo
from gocode.view.disclosure import Disclosure, Tier, choose
from gocode.view.modelview import merged_comments, render_full
from gocode.view.rules import offers_more, search_hint
from gocode.view.rules import rules as rules_text
from gocode.view.selection import ToolView, code_mode_on, in_config_order, split_tools
from gocode.view.shown import KeptDisclosures

TOOL_NAME = "execute_go_code"
# The answer to code with nothing to run (blank, or comments only): said, not a silent success.
NO_STATEMENTS = "the program has no statements (only blank lines or comments), so nothing ran: write Go statements"

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "code": {
            "type": "string",
            "description": "Go statements: the body of func Run(ctx context.Context) error (see the tool description).",
        }
    },
    "required": ["code"],
    "additionalProperties": False,
}
OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "output": {"type": "string", "description": "What the program printed on stdout."},
        "result": {},  # the value given to result(v), if any (the rules say so: no tokens spent here)
    },
    "required": ["output"],
}

# Rules and declarations are built by gocode.view (rules, modelview, disclosure).
_NO_TOOLS = "// (no tools are configured for code mode)\n"


def _describe(head: str, text: str, tier: str) -> str:
    hint = "" if tier == "full" else search_hint(tier)
    # Only full declarations are Go; the index's one-line signatures and the names are not.
    fence = "```go" if tier == "full" else "```"
    return f"{head}{hint}\n{fence}\n{text or _NO_TOOLS}```\n"


@dataclass(frozen=True)
class ToolState:
    """One tool set as a run sees it from start to end: the view, the package its programs are
    built against, the tools by (server, tool), and the saved programs with their code (those
    that are Go functions, and every one read from the store). A call takes it once, before
    its build, and decides, approves and runs on it alone: a tool list changed or a saved
    program replaced meanwhile is the next call's."""

    view: ToolView
    package: Package
    infos: Mapping[tuple[str, str], ToolInfo]
    saved_programs: Mapping[str, SavedProgram]  # the `saved` server's tools (Go functions)
    stored: Mapping[str, SavedProgram]  # every saved program offered, as a tool of its own too


def saved_offer(
    programs: list[SavedProgram], taken: bool, saved_on: bool
) -> tuple[list[ServerTools], dict[str, SavedProgram], tuple[str, ...]]:
    """How ``programs`` are offered as Go functions of the server ``saved`` (none when they are
    not offered): the listing to add, the functions by name, and notes on the saved programs a
    model does not get: all of them when a server is already named ``saved`` (``taken``), and
    (``saved_on``) those kept before they were per model."""
    notes: tuple[str, ...] = ()
    if programs and taken:
        notes = (f"saved programs are not Go functions here: a server is named {SAVED_SERVER!r}",)
    if saved_on and (legacy := legacy_names()):
        notes += (
            f"{len(legacy)} saved programs kept before they were per model ({', '.join(legacy[:5])}) are offered "
            "to no model: `gocode saved --adopt` moves them to one",
        )
    if not programs or taken:
        return [], {}, notes
    return [saved_listing(programs)], {p.name: p for p in programs}, notes


def problems_line(unavailable: Mapping[str, str], tool_warnings: tuple[str, ...]) -> str:
    """One short line for the description when something is missing (else empty): the servers
    that are down, and how many tools were typed loosely or left out."""
    parts = []
    if unavailable:
        parts.append(f"unavailable servers (their calls fail): {', '.join(unavailable)}")
    if tool_warnings:
        parts.append(f"{len(tool_warnings)} tools typed loosely or left out")
    return f"Note: {'; '.join(parts)}.\n" if parts else ""


def module_cache_or_alias(
    module_cache: ModuleCache | None, workspace: ModuleCache | None, owner: str
) -> ModuleCache | None:
    """``module_cache``, or what the deprecated keyword ``workspace`` gave (its old name, from
    before "workspace" meant the programs' file directory), with a DeprecationWarning."""
    if workspace is None:
        return module_cache
    warnings.warn(
        f"{owner}(workspace=...) is deprecated: pass module_cache=... (the Go module cache)",
        DeprecationWarning,
        stacklevel=3,
    )
    if module_cache is not None:
        raise TypeError(f"{owner}() takes module_cache or its old name workspace, not both")
    return workspace


# Of a server's own instructions, declarations show this much: they are often a manual (its
# first lines say what it is). The description leaves them out: every request carries it.
SAID_CHARS = 120


def server_notes(config: Config, servers: Iterable[ServerTools] = ()) -> dict[str, str]:
    """What the model view shows once per server, by name, one labelled line each: its config
    ``note`` (never its env, headers or args, which may hold secrets), then its own
    ``instructions`` from initialize (untrusted, like its tool descriptions)."""
    said = {s.server: s.instructions for s in servers if s.instructions.strip()}
    out = {}
    for name in [*config.mcp_servers, *(n for n in said if n not in config.mcp_servers)]:
        note = config.mcp_servers[name].note if name in config.mcp_servers else ""
        parts = [
            f"Note: {note}" if note.strip() else "",
            f"From the server: {one_line(said[name], SAID_CHARS)}" if name in said else "",
        ]
        if any(parts):
            out[name] = "\n".join(p.replace("\n", " ") for p in parts if p)
    return out


class CodeMode:
    """Go code mode for one model of a config. Call :meth:`refresh` (or use ``async with``) first."""

    def __init__(
        self, config: Config, model: str | None = None, *, module_cache: ModuleCache | None = None,
        offer_saved: bool = False, shapes_cache: ListingCache | Literal[False] | None = None, can_ask: bool = True,
        workspace: ModuleCache | None = None,
    ) -> None:  # fmt: skip
        """``module_cache``: where programs are built (None: the default; ``workspace``: its
        deprecated name). ``offer_saved``: the saved programs are Go functions of the server
        ``saved`` too (a controller answers their calls: a pooled toolbox, or a listing).
        ``shapes_cache``: where learned result shapes are kept (None: default, False: nowhere).
        ``can_ask``: whether a program held for approval can be approved here (the declarations
        say so)."""
        self.config = config
        self.model = model
        self.settings = config.code_mode_for(model)
        self._module_cache = module_cache_or_alias(module_cache, workspace, "CodeMode")
        self._view: ToolView | None = None
        self._package: Package | None = None
        self._allowed: frozenset[tuple[str, str]] = frozenset()  # (server, tool) in code mode
        self._infos: dict[tuple[str, str], ToolInfo] = {}
        self._unavailable: dict[str, str] = {}  # server -> why it is down
        self._tool_warnings: tuple[str, ...] = ()
        self._notes = self._about = server_notes(config)  # declarations add the servers' own words
        self._saved_notes: tuple[str, ...] = ()
        self._active = self.settings.enabled is True
        self._disclosures = KeptDisclosures()
        self._search: tuple[Package, SearchIndex] | None = None
        self._search_lock = threading.Lock()
        self.discovery: DiscoveryResult | None = None
        self._sandbox: dict[str, Any] | None = None
        # What the servers' results looked like (the toolbox's loopback endpoint records them),
        # this model's own: one model's results never reach what another reads.
        cache = ListingCache() if shapes_cache is None else shapes_cache or None
        self.shapes = ShapeRecorder(cache, dict(config.mcp_servers), self.shape_scope)
        # The result types inferred from those shapes that the current package uses, per tool.
        self._inferred: dict[tuple[str, str], dict[str, Any]] = {}
        self.offer_saved = offer_saved
        self._state: ToolState | None = None
        self.can_ask = can_ask

    @property
    def shape_scope(self) -> str:
        """Whose learned shapes this code mode reads and writes: the config's owner (as for
        workspaces: ``codeMode.workspace.id``, else its file) and the model ref in effect, so two
        projects naming the same model never read each other's results."""
        owner = workdirs.owner(self.settings.workdir, self.config.source)
        return f"{owner}/{self.model or self.config.defaults.model or ''}"

    async def __aenter__(self) -> CodeMode:
        await self.refresh()
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    @property
    def module_cache(self) -> ModuleCache:
        """The Go module cache this code mode builds in (the default one unless given)."""
        if self._module_cache is None:
            self._module_cache = ModuleCache()
        return self._module_cache

    async def refresh(self) -> None:
        """(Re)discover every server. One that fails is left out and named in :attr:`warnings`
        (its error in ``discovery.failures``); the others are used."""
        from gocode.mcp.discovery import discover  # the MCP SDK: not needed to show kept listings

        self.adopt(await discover(self.config))

    def adopt(self, result: DiscoveryResult) -> None:
        """Take a discovery's tools (from the servers or kept listings, :mod:`gocode.mcp.browse`)."""
        self.discovery = result
        self.use(result.servers, {name: exc.brief for name, exc in result.failures.items()})

    def use(self, servers: list[ServerTools], unavailable: dict[str, str] | None = None) -> None:
        """Take tool listings discovered elsewhere (a controller's long-lived sessions);
        ``unavailable`` names the servers that are down, with the reason."""
        enabled = code_mode_on(self.settings, servers)
        servers = in_config_order(servers, list(self.config.mcp_servers))  # the order tools take Go names in
        saved_on = enabled and self.settings.saved_programs
        stored = self.saved_store().all() if saved_on else []
        taken = any(s.server == SAVED_SERVER for s in servers)  # a server of that name keeps it
        offered, functions, saved_notes = saved_offer(stored if self.offer_saved else [], taken, saved_on)
        servers = [*servers, *offered]
        view = split_tools(servers, set(self.settings.excluded_tools), enabled)
        keep = typeable_tools(view.code_tools)
        inferred = {k: v for k, v in self.shapes.inferred().items() if k in keep}
        view = replace(view, code_tools=with_inferred_outputs(view.code_tools, inferred))
        package = package_for(view.code_tools)  # built once per tool set and gocode, then read back
        infos = {(s.server, t.name): t for s in view.code_tools.servers for t in s.tools}
        # Swapped together, so a call never pairs one tool set's Go with another's servers.
        self._view, self._package, self._allowed, self._infos = view, package, frozenset(infos), infos
        self._state = ToolState(
            view, package, MappingProxyType(dict(infos)), MappingProxyType(functions),
            MappingProxyType({p.name: p for p in stored}),
        )  # fmt: skip
        self._inferred = inferred
        self._active = enabled
        self._unavailable = dict(sorted((unavailable or {}).items()))
        self._tool_warnings = tuple(f"{s.server}: {w}" for s in servers for w in s.warnings)
        self._about = server_notes(self.config, servers)
        self._saved_notes = saved_notes

    def saved_store(self) -> SavedStore:
        """This config and model's saved programs (see :func:`gocode.tools.saved.store_key`)."""
        return SavedStore.for_model(self.config, self.model)

    def inferred_changed(self) -> bool:
        """Whether the result types inferred from the tools' results differ from those the
        current package has (a new one after enough calls, one learned again or withdrawn after
        a result that did not fit): then the tool set is built again (:meth:`use`)."""
        if self._view is None:
            return False
        keep = frozenset(k for k, t in self._infos.items() if t.output_inferred or typeable(t))
        return {k: v for k, v in self.shapes.inferred().items() if k in keep} != self._inferred

    def shape_comments(self, can_ask: bool | None = None) -> dict[tuple[str, str], list[str]]:
        """What the model view says about each tool: that it needs approval, then its results
        (learned shapes; a tool typed by them says so)."""
        return merged_comments(self.approval_comments(can_ask), self.shapes.comments(frozenset(self._inferred)))

    def approval_comments(self, can_ask: bool | None = None) -> dict[tuple[str, str], list[str]]:
        """The tools that need approval, with their comment (the description shows it too);
        ``can_ask`` says whether the reader's programs can be approved (None: :attr:`can_ask`)."""
        return approval_comments(self.settings.approval, self._infos, self.can_ask if can_ask is None else can_ask)

    @property
    def warnings(self) -> list[str]:
        """Every problem with the tool set, as data: servers that are down, tools typed loosely
        or left out when listed, Go names that clashed, excludedTools entries that match nothing."""
        down = list(self._unavailable.values())  # each names its server
        view = self._view.warnings if self._view is not None else ()
        package = self._package.warnings if self._package is not None else ()
        return [*down, *self._tool_warnings, *self._saved_notes, *package, *view]

    @property
    def tool_infos(self) -> dict[tuple[str, str], ToolInfo]:
        """The tools in code mode, by (server, tool)."""
        return self._infos

    @property
    def unavailable(self) -> dict[str, str]:
        """The servers that are down, with the reason."""
        return dict(self._unavailable)

    def _unavailable_note(self) -> str:
        return "".join(f"\nnote: unavailable: {why}" for why in self._unavailable.values())

    def _missing_servers(self, build: BuildResult) -> list[str]:
        """Why servers are down, when the code names something undefined: a tool of theirs,
        maybe (a server that never started listed none), so the run failed for want of them."""
        undefined = any(d.message.startswith("undefined:") for d in build.diagnostics)
        return list(self._unavailable.values()) if undefined else []

    @property
    def state(self) -> ToolState:
        """The current tool set, whole (see :class:`ToolState`): what a call takes once."""
        if self._state is None:
            raise RuntimeError("call refresh() first")
        return self._state

    @property
    def saved_programs(self) -> Mapping[str, SavedProgram]:
        """The saved programs that are Go functions (tools of the ``saved`` server)."""
        return self._state.saved_programs if self._state is not None else MappingProxyType({})

    @property
    def view(self) -> ToolView:
        if self._view is None:
            raise RuntimeError("call refresh() first")
        return self._view

    @property
    def package(self) -> Package:
        if self._package is None:
            raise RuntimeError("call refresh() first")
        return self._package

    def declarations(self) -> str:
        """The model view of every tool (what the model reads at the full tier)."""
        return render_full(self.package, self.shape_comments(), self._about)

    def go_version(self) -> str:
        """``1.26`` for the toolchain in use (``1.25+``, the minimum, when it cannot be found yet)."""
        try:
            version = self.module_cache.go_version  # known before a machine without Go has fetched it
        except GocodeError:
            return "1.25+"
        return ".".join(version.removeprefix("go").split(".")[:2])

    def rules(self) -> str:
        """The usage rules alone: the head of the description."""
        tier = self.sandbox_state()["tier"]
        kind = process_limit(self.settings.limits)[0] if tier is not None else "none"
        return rules_text(self.settings, self.go_version(), tier, kind, offers_more(self._view))

    def disclosure(self, can_ask: bool | None = None) -> Disclosure:
        """What the description shows of the declarations, chosen once per tool set, rules text
        (the rules change when the sandbox tier becomes known) and ``can_ask``."""
        package, head = self.package, self.rules()
        notes = self.approval_comments(can_ask)  # never the learned shapes: they alone must not change it

        def describe(text: str, tier: Tier) -> str:
            return _describe(head, text, tier)

        settings = self.settings
        return self._disclosures.get(
            package, head, notes,
            lambda: choose(package, settings.disclosure, settings.description_tokens, describe, notes, self._notes),
        )  # fmt: skip

    def complete(self, can_ask: bool | None = None) -> bool:
        """Whether the description shows every tool's declaration (else search_go_tools is needed)."""
        return self.disclosure(can_ask).complete

    def search_index(self) -> SearchIndex:
        """The tool search index of the current tool set, built on first use and kept until it changes."""
        view, package = self.view, self.package
        with self._search_lock:  # searches and the warm-up may ask at once, from threads
            cached = self._search
            if cached is not None and cached[0] is package:
                return cached[1]
            index = SearchIndex.build(view.code_tools, package, keep=True)  # BM25's part kept on disk
            self._search = (package, index)
            return index

    def runtime_search(self, query: str, limit: int) -> list[dict[str, Any]]:
        """A program's searchTools: the best matches as rt.ToolMatch JSON objects."""
        return [e.match_json() for e in self.search_index().search(query, limit)]

    def search_answer(self, arguments: dict[str, Any] | None, can_ask: bool | None = None) -> tuple[str, bool]:
        """``search_go_tools``' answer to a request: (text, is_error); never raises for bad input."""
        index, notes, budget = self.search_index(), self.shape_comments(can_ask), self.settings.description_tokens
        return respond(index, self.package, arguments, self.view.excluded, notes, self._about, budget)

    async def resolve_sandbox(self) -> dict[str, Any]:
        """Find the tier ``codeMode.sandbox`` gets on this host (for ``auto``: probe it), for
        :meth:`sandbox_state`; never raises (a host that cannot tell gets ``off``, with why).

        Nothing is built for it: before the first set-up has built the launcher, the kernel is
        asked from Python (:meth:`~gocode.run.sandbox.Launcher.quick_probe`), and
        :meth:`confirm_sandbox` checks that answer against the launcher's once it exists."""
        if self._sandbox is None:
            self._sandbox = await probe_state(self.module_cache, self.settings.sandbox, quick=True)
        return self.sandbox_state()

    async def confirm_sandbox(self) -> bool:
        """Ask the launcher itself (built by the set-up) what the host supports; True when that
        changes the tier :meth:`resolve_sandbox` found (the description must then change)."""
        if self._sandbox is None or self.settings.sandbox == "off":
            return False
        got = await probe_state(self.module_cache, self.settings.sandbox, quick=False)
        changed = got.get("tier") != self._sandbox.get("tier")
        self._sandbox = got
        return changed

    @property
    def sandbox_resolved(self) -> bool:
        return self._sandbox is not None

    def sandbox_state(self) -> dict[str, Any]:
        """The sandbox in force for pooled runs: ``setting``, ``tier`` (None: unconfined) and a
        ``note`` on why; ``tier`` is unknown (None) for ``auto`` until :meth:`resolve_sandbox`."""
        if self._sandbox is not None:
            return dict(self._sandbox)
        return {"setting": self.settings.sandbox, "tier": None}

    def description(self, can_ask: bool | None = None) -> str:
        """The ``execute_go_code`` description: the rules, then as much of the model view as the
        budget allows (see docs/model-view.md)."""
        shown = self.disclosure(can_ask)
        return _describe(self.rules(), shown.text, shown.tier) + problems_line(self._unavailable, self._tool_warnings)

    def tool_definition(self, can_ask: bool | None = None) -> dict[str, Any]:
        """``execute_go_code`` as an MCP Tool (wire JSON)."""
        return {
            "name": TOOL_NAME,
            "description": self.description(can_ask),
            "inputSchema": INPUT_SCHEMA,
            "outputSchema": OUTPUT_SCHEMA,
        }

    @property
    def active(self) -> bool:
        """Whether code mode is on for the current tool set (``enabled: auto`` decides per tool set)."""
        return self._active

    def allows(self, server: str, tool: str) -> bool:
        """Whether a program may call this tool: it is in code mode for the model (current view)."""
        return (server, tool) in self._allowed

    def code_servers(self, view: ToolView | None = None) -> list[str]:
        """The servers the program calls: those with at least one tool in code mode."""
        return sorted({s.server for s in (view or self.view).code_tools.servers if s.tools})

    def server_specs(
        self, view: ToolView | None = None, configured: dict[str, ServerConfig] | None = None
    ) -> dict[str, dict[str, Any]]:
        """How a program reaches each server it calls; ``configured``: the servers' settings to
        use instead of the config's (a standalone binary's, with their ``${VAR}``s unexpanded)."""
        view = view or self.view
        configured = self.config.mcp_servers if configured is None else configured
        # Only configured servers: others (saved programs) are answered by a controller.
        servers = [n for n in self.code_servers(view) if n in configured]
        return {n: server_spec(configured[n], view.protocols[n], view.task_tools(n)) for n in servers}

    def warmup(self, progress: Progress | None = None) -> None:
        self.module_cache.ensure(progress)

    async def prewarm(self, progress: Progress | None = None) -> None:
        """Prepare the module cache and compile this tool set's bindings, so the first call only links."""
        await check_and_build(self.module_cache, self.package, ModelCode(""), progress)

    def workdir(self, session: str | None = None) -> Path | None:
        """The workspace programs of this model (or session) start in; None when turned off."""
        if not self.settings.workdir.enabled:
            return None
        settings = self.settings.workdir
        key = workdirs.owner(settings, self.config.source)
        return workdirs.path_for(settings, self.model or self.config.defaults.model, session, key)

    def keep_result(self, result: RunResult, session: str | None = None) -> RunResult:
        """``result`` with a result() value too long for the answer kept in the workspace
        (see :func:`gocode.run.result.keep_value`); blocking, as that is."""
        workdir = self.workdir(session)
        return result if workdir is None else keep_value(result, workdir, self.settings)

    async def plan(self, code: str, progress: Progress | None = None) -> BuildResult:
        """Which tools ``code`` can call (``BuildResult.plan``), from the type check alone:
        nothing is compiled or run."""
        if not self.module_cache.ready:
            await asyncio.to_thread(self.module_cache.ensure, progress)
        return await self.module_cache.plan(self.package, ModelCode(code))

    def held_for(self, plan: Plan) -> tuple[str, ...]:
        """The tools a program with ``plan`` would be held for before it runs (empty: none), those
        the saved programs it calls reach included, as the approve step decides it: what
        ``gocode exec --plan`` shows."""
        covered = expand_plan(plan, self.saved_programs)
        return held_for(self.settings.approval, covered, self.tool_infos, exempt_server=SAVED_SERVER)

    async def execute(
        self,
        code: str,
        timeout: float | None = None,
        progress: Progress | None = None,
        *,
        reach: Reach | None = None,
        on_line: LineFn | None = None,
        package: Package | None = None,
        godebug: str = "",
        program_env: dict[str, str] | None = None,
        approve: Approver | None = None,
        on_plan: Callable[[Plan], None] | None = None,
        session: str | None = None,
        calls_servers: bool = True,
        state: ToolState | None = None,
    ) -> RunResult:
        """Build and run ``code`` as the body of Run; every failure is a result, not an exception.

        The steps are docs/architecture.md's "A run". ``reach``: how the program reaches its tools
        (:mod:`gocode.run.reach`; by default its own sessions, direct mode). ``on_line`` gets each
        line printed, as printed; ``package`` replaces the bindings (with client-owned tools);
        ``godebug`` and ``program_env`` add to the program's environment. A program that can call
        tools needing approval runs only if ``approve`` says so, unless ``calls_servers`` is false
        (a replay or a dry run); ``on_plan`` learns what it can call before it starts. It starts in
        its workspace (per ``session`` when so scoped). ``state``: the tool set the caller took for
        this call (by default the current one); what is built, approved and run is read from it alone.
        """
        start = time.monotonic()
        if ModelCode(code).empty:
            return RunResult(False, "code", stderr=NO_STATEMENTS)
        state = state or self.state
        package = package or state.package
        reach = reach or OwnSessions(self.server_specs(state.view), self.config.mcp_servers)  # and so the runtime
        run = Launching(self.module_cache, self.settings, reach, self.workdir(session),
                        self.settings.clamp_timeout(timeout), on_line, program_env, godebug)  # fmt: skip
        linking = _early_unless_held(run, self.settings.approval, state, calls_servers)
        try:
            build = await check_and_build(self.module_cache, package, ModelCode(code), progress, reach.runner, linking,
                                          run.timeout)  # fmt: skip
            if not build.ok:
                await run.discard()
                return compile_failure(build, self._unavailable_note(), start, down=self._missing_servers(build))
            plan = build.plan or plan_from_answer(None, package)
            if on_plan is not None:
                on_plan(plan)
            why = await _approval(self.settings.approval, code, plan, package, state, approve, calls_servers)
        except BaseException:
            await run.discard()
            raise
        if why is not None:
            await run.discard()
            return _refused(why, plan, build, start)
        return await run.launch(build, plan, start)


def _early_unless_held(
    run: Launching, settings: ApprovalConfig, state: ToolState, calls_servers: bool
) -> Callable[[Plan], None]:
    """What the build tells once the code type-checked: the run's sandbox is set up while its
    program links, unless the approve step may ask someone first (that can take minutes)."""

    def linking(plan: Plan) -> None:
        covered = expand_plan(plan, state.saved_programs)
        if not calls_servers or not held_for(settings, covered, state.infos, exempt_server=SAVED_SERVER):
            run.start_early()

    return linking


def _refused(why: str | AskFirst, plan: Plan, build: BuildResult, start: float) -> RunResult:
    """The answer to a program the approve step holds: why, or the request the client must answer."""
    asks = why.request if isinstance(why, AskFirst) else None
    return RunResult(
        False, "approval", stderr=refusal(asks, "the client is asked first") if asks else str(why),
        plan=plan.as_json(), build_ms=build.duration_ms, build_mode=build.mode, cached_binary=build.cached,
        duration_ms=(time.monotonic() - start) * 1000, asks=asks,
    )  # fmt: skip


async def _approval(
    settings: ApprovalConfig, code: str, plan: Plan, package: Package, state: ToolState, approve: Approver | None,
    calls_servers: bool = True,
) -> str | AskFirst | None:  # fmt: skip
    """The approve step over one tool set: None when the program may run, else why not (or
    that the client must be asked first); a program that calls no server (a replay, a dry run) may."""
    if not calls_servers:
        return None
    # What approving it means: the tools the saved programs it calls can reach count too.
    covered = expand_plan(plan, state.saved_programs)

    def request_for(held: tuple[str, ...]) -> ApprovalRequest:
        # The hash covers the saved programs' code too: an approval names exactly what runs.
        approved = approved_text(code, covered, state.saved_programs, held)
        return ApprovalRequest(program_hash(approved, package), code, held, covered)

    return await approval(settings, covered, state.infos, request_for, approve, exempt_server=SAVED_SERVER)
