"""Saved programs: Go code the model (or a user) kept, offered again as a tool of its own.

A saved program is ordinary ``execute_go_code`` code that declares its input as a struct named
``Input`` and reads it from ``in``::

    type Input struct {
        Repo  string `json:"repo" desc:"path of the repository"`
        Count int    `json:"count,omitempty"`
    }
    out := must(gitLog(ctx, GitLogInput{RepoPath: in.Repo, MaxCount: in.Count}))
    fmt.Println(out)

gocode adds ``var in = gocodert.Input...[Input](…)`` (go_templates/rt/input.go) and builds it,
so only code that builds is ever saved; the tool's input schema is read from the declaration of
``Input`` by the Go type checker (go_templates/gofix/schema.go: json tags name the properties,
``omitempty`` or a pointer makes one optional, a ``desc`` tag describes it). Saving runs none of
the program: its code runs only when it is called, confined like any run. A program that also declares
``type Output struct`` hands its answer to ``result(Output{…})``, and the tool has that output
schema (a typed result in Go); without one, what it printed is its answer. A program is stored
under the state directory as ``saved/NAME/program.go`` and ``saved/NAME/tool.json``; a name
taken by a tool or by another saved program is refused unless the caller asks to replace it.

Each config and model has its own saved programs: they live under
``saved/m-<key>/`` (:func:`store_key`: a hash of the config file's resolved path and the model
ref), so one model never sees, lists, calls or replaces another's, nor a model of another
project's config that has the same name. Models that set the same ``codeMode.savedProgramsShare``
name share ``saved/shared-<name>/`` instead. Programs saved before this (``saved/NAME/``) are
offered to no one until an operator moves them to one model (:func:`adopt_legacy`,
``gocode saved --adopt``).

The saved programs are also tools of the virtual server ``saved`` (:data:`SAVED_SERVER`): typed
Go functions a later program calls like any tool, answered by :class:`SavedCalls` through the
loopback endpoint. What each one can call (its static plan, and the definitions of those tools
when it was saved) is kept beside it: a program calling it needs approval for the tools it can
reach, a call after those tools changed is refused naming what differs, and a saved program
that would reach itself is refused when saved and when called.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gocode.compile.modcache import ModuleCache
from gocode.config import Config
from gocode.errors import SavedProgramError
from gocode.paths import cache_dir, state_dir
from gocode.program.code import ModelCode
from gocode.program.plan import Plan
from gocode.schema.ir import Package
from gocode.schema.names import go_string
from gocode.toolset import ServerTools, ToolInfo

if TYPE_CHECKING:  # the SDK loads with the first call: showing tools (gocode list) needs none
    import mcp_types as types
    from mcp.shared.dispatcher import ProgressFnT

    from gocode.mcp.backchannel import Caller

SAVED_DIR = "saved"
NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
# Indentation only before `type` (not \s*, which rescans every blank line below each line start:
# quadratic in a source of blank lines).
_INPUT_DECL = re.compile(r"^[ \t]*+type\s++Input\s++struct\b", re.M)
_OUTPUT_DECL = re.compile(r"^[ \t]*+type\s++Output\s++struct\b", re.M)
# Where a saved program run as a tool reads its input (go_templates/rt/input.go: EnvInput).
INPUT_ENV = "GOCODE_INPUT"
# The server name saved programs are Go functions of: `saved.last_commits` for callTool.
SAVED_SERVER = "saved"
# How deep saved programs may call each other (a program calling one calling one …).
MAX_DEPTH = 4


@dataclass(frozen=True)
class SavedProgram:
    name: str
    description: str
    input_schema: dict[str, Any]
    source: str
    output_schema: dict[str, Any] | None = None  # declared `type Output struct`: its result() value
    # What it can call, as server.tool (its static plan when saved), and why it may call any tool.
    calls: tuple[str, ...] = ()
    any_tool: tuple[str, ...] = ()
    # The definitions of the tools it calls, as they were when it was saved (server.tool -> schemas).
    uses: dict[str, dict[str, Any]] | None = None

    def tool(self) -> dict[str, Any]:
        """The MCP tool definition it is offered as."""
        out = {"name": self.name, "description": self.description, "inputSchema": self.input_schema}
        return out | ({"outputSchema": self.output_schema} if self.output_schema is not None else {})

    def info(self) -> ToolInfo:
        """It as a tool of the ``saved`` server (a typed Go function)."""
        return ToolInfo(
            SAVED_SERVER, self.name, self.description, self.input_schema, self.output_schema, definition=self.tool()
        )

    def meta(self) -> dict[str, Any]:
        """What tool.json keeps."""
        return self.tool() | {"calls": list(self.calls), "anyTool": list(self.any_tool), "uses": self.uses}


def saved_root() -> Path:
    """Where every store lives (the per-model stores are directories in it)."""
    return (state_dir() or cache_dir()) / SAVED_DIR


def store_key(config: Config, model: str | None) -> str:
    """The directory of one config and model's saved programs: ``m-`` and a hash of the config
    file's resolved path and the model ref (``defaults.model`` when None); ``shared-NAME`` for
    models that set ``savedProgramsShare: NAME``. Neither is a program name (those have no ``-``)."""
    share = config.code_mode_for(model).saved_programs_share
    if share is not None:
        return f"shared-{share}"
    # A config read from a file is that file however it was named; one built in memory is its source label.
    where = config.source if config.source.startswith("<") else str(Path(config.source).resolve())
    ref = model or config.defaults.model or ""
    return "m-" + hashlib.sha256(f"{where}\0{ref}".encode()).hexdigest()[:24]


def legacy_names() -> list[str]:
    """The programs kept before stores were per model, which no model is offered."""
    return SavedStore(saved_root()).names()


def adopt_legacy(store: SavedStore) -> tuple[list[str], list[str]]:
    """Move the programs kept before stores were per model (``saved/NAME``) into ``store``:
    (moved, left because ``store`` has a program of that name). An operator's choice, made once:
    a moved program is no longer anyone else's."""
    legacy = SavedStore(store.root.parent)
    moved, left = [], []
    for name in legacy.names():
        if name in store.names():
            left.append(name)
            continue
        store.root.mkdir(parents=True, exist_ok=True)
        os.replace(legacy.root / name, store.root / name)
        moved.append(name)
    return moved, left


def with_input(source: str, raw_input: str | None) -> str:
    """The program with ``in`` declared: from ``raw_input`` (JSON), or at run time when None."""
    call = "gocodert.Input[Input]()" if raw_input is None else f"gocodert.InputFrom[Input]({go_string(raw_input)})"
    # The function keeps `in` at package level: a var nothing hoisted refers to would stay in
    # Run, after the statements that read it.
    return f"{source.rstrip()}\n\nvar in = {call}\n\nfunc gocodeInput() Input {{ return in }}\n"


def standalone(program: SavedProgram, servers: dict[str, dict[str, Any]]) -> str:
    """The program as a standalone binary: its input at run time (``--help`` prints
    :func:`usage`), its result() value printed, its config's servers built in (used when
    GOCODE_SERVERS is not set)."""
    code = f"{program.source.rstrip()}\n\nvar in = gocodert.StandaloneInput[Input]({go_string(usage(program))})\n"
    defaults = f"\nfunc init() {{ gocodert.SetDefaultServers({go_string(json.dumps(servers))}) }}\n"
    return code + "\nfunc gocodeInput() Input { return in }\n" + defaults


def usage(program: SavedProgram) -> str:
    """What a built binary's ``--help`` prints: what it does, its input's fields (from the input
    schema) and how to give them, and where its output goes."""
    schema = program.input_schema
    found = schema.get("properties")
    props: dict[str, Any] = found if isinstance(found, dict) else {}
    required = set(schema.get("required") or ())
    lines = [f"Usage: {program.name} [INPUT_JSON]", "", program.description.strip(), ""]
    if props:
        lines.append("Input (a JSON object; unknown fields are refused):")
        width = max(len(str(k)) for k in props)
        for key, prop in props.items():
            kind = _kind(prop) + ("" if key in required else ", optional")
            doc = prop.get("description", "") if isinstance(prop, dict) else ""
            lines.append(f"  {key:<{width}}  {kind}" + (f" — {doc}" if doc else ""))
    else:
        lines.append("Input: none ({}).")
    example = json.dumps({k: _example(props[k]) for k in props if k in required}, ensure_ascii=False)
    lines += [
        "",
        f"The input is the JSON in ${INPUT_ENV}, else the first argument, else {{}}:",
        f"  {program.name} '{example}'",
        "Bad input exits 2.",
        "",
        "Output: what the program prints, on stdout; then the value it gives result(), as one line of JSON.",
        "It starts (or dials) the servers it was built with; $GOCODE_SERVERS (JSON) overrides them.",
        "It runs unconfined: no sandbox, no approvals.",
        "",
    ]
    # The description and field docs are the model's text: no control character reaches the terminal.
    return _CONTROL.sub("?", "\n".join(lines))


_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def _kind(prop: Any) -> str:
    """A property's type as a reader writes it: ``string``, ``array of integer``, ``one of "a", "b"``."""
    if not isinstance(prop, dict):
        return "any"
    if isinstance(prop.get("enum"), list):
        return "one of " + ", ".join(json.dumps(v) for v in prop["enum"])
    kind = prop.get("type")
    if isinstance(kind, list):
        kind = " or ".join(str(k) for k in kind if k != "null")
    if kind == "array":
        return f"array of {_kind(prop.get('items'))}"
    if isinstance(prop.get("format"), str):
        return f"{kind or 'string'} ({prop['format']})"
    return str(kind) if kind else "any"


def _example(prop: Any) -> Any:
    kind = prop.get("type") if isinstance(prop, dict) else None
    if isinstance(prop, dict) and isinstance(prop.get("enum"), list) and prop["enum"]:
        return prop["enum"][0]
    samples: dict[str, Any] = {"string": "...", "integer": 1, "number": 1.5, "boolean": True, "array": [], "object": {}}
    return samples.get(kind) if isinstance(kind, str) else None


class SavedStore:
    """The saved programs in one directory (:meth:`for_model`: one config and model's)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @classmethod
    def for_model(cls, config: Config, model: str | None) -> SavedStore:
        return cls(saved_root() / store_key(config, model))

    def names(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if NAME.match(p.name) and (p / "tool.json").is_file())

    def load(self, name: str) -> SavedProgram:
        d = self.root / name
        if not NAME.match(name) or not (d / "tool.json").is_file():
            known = ", ".join(self.names()) or "none"
            raise SavedProgramError(f"no saved program {name!r} (saved: {known})")
        try:
            meta = json.loads((d / "tool.json").read_text(encoding="utf-8"))
            source = (d / "program.go").read_text(encoding="utf-8")
        except (OSError, ValueError) as exc:
            raise SavedProgramError(f"saved program {name!r} is unreadable: {exc}") from None
        uses = meta.get("uses")
        return SavedProgram(
            name,
            meta.get("description", ""),
            meta.get("inputSchema") or {},
            source,
            meta.get("outputSchema"),
            tuple(meta.get("calls") or ()),
            # Saved before plans were kept: nothing is known about what it calls.
            tuple(meta.get("anyTool") or (() if "calls" in meta else ("saved without its plan; save it again",))),
            uses if isinstance(uses, dict) else None,
        )

    def all(self) -> list[SavedProgram]:
        out = []
        for n in self.names():
            try:
                out.append(self.load(n))
            except SavedProgramError:
                continue  # a damaged entry is reported when asked for by name, never offered
        return out

    def store(self, program: SavedProgram, *, replace: bool = False) -> None:
        d = self.root / program.name
        if d.exists() and not replace:
            raise SavedProgramError(
                f"a saved program named {program.name!r} exists; pass replace (--force) to overwrite it"
            )
        self.root.mkdir(parents=True, exist_ok=True)
        # Written beside, then swapped in: a failure leaves the old program whole.
        tmp = Path(tempfile.mkdtemp(prefix=f".{program.name}-", dir=self.root))
        (tmp / "program.go").write_text(program.source, encoding="utf-8")
        (tmp / "tool.json").write_text(json.dumps(program.meta()))
        if d.exists():
            old = d.with_name(f".{program.name}-old")
            shutil.rmtree(old, ignore_errors=True)
            os.replace(d, old)
            os.replace(tmp, d)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, d)


def check_name(name: str, taken: set[str]) -> None:
    if not NAME.match(name):
        raise SavedProgramError(
            f"bad saved program name {name!r}: lowercase letters, digits and _, starting with a letter, up to 64"
        )
    if name in taken:
        raise SavedProgramError(f"the name {name!r} is taken by a tool; choose another")


async def derive(
    modcache: ModuleCache,
    package: Package,
    name: str,
    source: str,
    description: str = "",
    tools: dict[tuple[str, str], ToolInfo] | None = None,
    saved: dict[str, SavedProgram] | None = None,
    timeout: float | None = None,
) -> SavedProgram:
    """Build the program and read its input (and output) schema from its declarations; raises
    with the compiler's messages. Nothing of the program runs. ``tools``: the tool set's
    definitions, kept for the tools it calls; ``saved``: the other saved programs, to refuse
    one that would reach itself; ``timeout``: what its build may take (a run's timeout, when a
    model saves it: a program it could not run is not built for longer either)."""
    if not _INPUT_DECL.search(source):
        raise SavedProgramError(
            "a saved program declares its input as `type Input struct {…}` and reads it from `in` "
            "(a struct with no fields for none)"
        )
    if not modcache.ready:
        modcache.ensure()
    code = ModelCode(with_input(source, "{}"))
    build = await modcache.build(package, code, timeout=timeout)
    if build.timed_out is not None:
        raise SavedProgramError(f"{build.output} (codeMode.timeout), and was stopped")  # BuildTimeout's words
    if not build.ok or build.binary is None:
        raise SavedProgramError(f"the program does not build:\n{build.output.strip()}")
    plan = build.plan or Plan(any_tool=("the program could not be analysed",))
    loop = reaches(name, plan.names(), saved or {})
    if loop:
        raise SavedProgramError(f"{name!r} would call itself ({' → '.join(loop)}); a saved program cannot call itself")
    # Read from the declarations, never by running the program: nothing of it runs outside the sandbox.
    wanted = ("Input", "Output") if _OUTPUT_DECL.search(source) else ("Input",)
    try:
        schemas = await modcache.schemas(package, code, wanted)
    except ValueError as exc:
        raise SavedProgramError(f"the program's input schema could not be read: {exc}") from None
    if any(not isinstance(schemas.get(n), dict) for n in wanted):
        raise SavedProgramError(f"the program's {' and '.join(wanted)} must be package-level struct types")
    schema, output = schemas["Input"], schemas.get("Output")
    first = source.strip().splitlines()[0] if source.strip() else ""
    doc = description or (first[2:].strip() if first.startswith("//") else f"Saved program {name}.")
    known = tools or {}
    uses = {f"{s}.{t}": _schemas(known[(s, t)], (s, t) in plan.typed) for s, t in plan.tools if (s, t) in known}
    return SavedProgram(name, doc, schema, source, output, tuple(plan.names()), plan.any_tool, uses)


def _schemas(info: ToolInfo, typed: bool = False) -> dict[str, Any]:
    """What a program's use of a tool depends on: its declared schemas, and the result type
    learned from its results only for a program that calls the typed companion (``typed``)."""
    out = {"inputSchema": info.input_schema, "outputSchema": None if info.output_inferred else info.output_schema}
    if typed and info.output_inferred:
        out["typedOutput"] = info.output_schema
    return out


def reaches(name: str, calls: list[str] | tuple[str, ...], saved: Mapping[str, SavedProgram]) -> list[str]:
    """The chain through which a program named ``name`` calling ``calls`` would call itself
    (``[name, …, name]``), or ``[]`` when it cannot."""
    prefix = SAVED_SERVER + "."

    def walk(chain: list[str], calls: tuple[str, ...] | list[str]) -> list[str]:
        for call in calls:
            if not call.startswith(prefix):
                continue
            callee = call.removeprefix(prefix)
            if callee == name:
                return [*chain, callee]
            if callee in chain or callee not in saved:
                continue
            found = walk([*chain, callee], saved[callee].calls)
            if found:
                return found
        return []

    return walk([name], calls)


def expand_plan(plan: Plan, saved: Mapping[str, SavedProgram]) -> Plan:
    """``plan`` with every tool a saved program it calls can reach (through others too): what
    approving it means. A saved program that may call any tool makes the whole plan "any"."""
    tools = set(plan.tools)
    why = list(plan.any_tool)
    todo = [t for s, t in plan.tools if s == SAVED_SERVER]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen or name not in saved:
            continue
        seen.add(name)
        program = saved[name]
        why += [f"saved program {name}: {r}" for r in program.any_tool]
        for call in program.calls:
            server, _, tool = call.partition(".")
            tools.add((server, tool))
            if server == SAVED_SERVER:
                todo.append(tool)
    if tools == set(plan.tools) and len(why) == len(plan.any_tool):
        return plan
    return Plan(tuple(sorted(tools)), tuple(why), plan.unknown, sites=plan.sites)


def approved_text(code: str, reach: Plan, saved: Mapping[str, SavedProgram], held: tuple[str, ...]) -> str:
    """What an approval of ``code`` is for: its own code, the code of every saved program it can
    reach (``reach``: its plan expanded) and the tools it was held for. An approval given for one
    of these (a client's retry carries the hash) is not one for a program reaching other code."""
    reached = sorted(t for s, t in reach.tools if s == SAVED_SERVER and t in saved)
    parts = [code, *(f"saved.{n}\0{saved[n].source}" for n in reached), "\0".join(held)]
    return "\0\0".join(parts)


def differences(program: SavedProgram, tools: Mapping[tuple[str, str], ToolInfo]) -> list[str]:
    """How the tools ``program`` calls differ from when it was saved (empty: the same)."""
    if program.uses is None:
        return []
    out = []
    for call in program.calls:
        server, _, tool = call.partition(".")
        info = tools.get((server, tool))
        then = program.uses.get(call)
        if info is None:
            out.append(f"{call} is gone")
        elif then is not None:
            now = _schemas(info, "typedOutput" in then)
            out += [f"{call}: its {what} changed" for what, key in (("input schema", "inputSchema"),
                    ("output schema", "outputSchema"), ("learned result type", "typedOutput"))
                    if now.get(key) != then.get(key)]  # fmt: skip
    return out


def changed_text(program: SavedProgram, tools: Mapping[tuple[str, str], ToolInfo]) -> str | None:
    """Why ``program`` may not run against ``tools`` (the tools it calls changed since it was
    saved), or None when it may."""
    if not (changed := differences(program, tools)):
        return None
    return (
        f"saved program {program.name!r} was saved against other tools: {'; '.join(changed)}. "
        "Check it against the current declarations and save it again (replace) to use it"
    )


def listing(programs: list[SavedProgram]) -> ServerTools:
    """The saved programs as the tools of the ``saved`` server."""
    return ServerTools(SAVED_SERVER, tuple(p.info() for p in programs))


# Runs one saved program for a program's call: (program, arguments, chain of saved programs
# the call came through, timeout) -> the tool result.
RunSaved = Callable[[SavedProgram, dict[str, Any], tuple[str, ...], float], Awaitable["types.CallToolResult"]]


class SavedCalls:
    """The ``saved`` server of one run: a :class:`~gocode.mcp.provider.ToolProvider` that runs
    the saved program called, knowing which saved programs the run is inside (``chain``)."""

    def __init__(self, programs: list[SavedProgram], run: RunSaved, chain: tuple[str, ...] = ()) -> None:
        self.programs = {p.name: p for p in programs}
        self._listing = listing(programs)
        self._run = run
        self.chain = chain

    @property
    def name(self) -> str:
        return SAVED_SERVER

    @property
    def known_tools(self) -> ServerTools:
        return self._listing

    async def call(
        self,
        tool: str,
        arguments: dict[str, Any] | None,
        timeout: float,
        progress: ProgressFnT | None = None,
        caller: Caller | None = None,
    ) -> types.CallToolResult:
        program = self.programs.get(tool)
        if program is None:
            return error_text(f"no saved program {tool!r} (saved: {', '.join(self.programs) or 'none'})")
        if tool in self.chain:
            loop = " → ".join([*self.chain[self.chain.index(tool) :], tool])
            return error_text(f"saved program {tool!r} calls itself ({loop}); a saved program cannot call itself")
        if len(self.chain) >= MAX_DEPTH:
            return error_text(
                f"saved programs nest too deep ({' → '.join([*self.chain, tool])}): at most {MAX_DEPTH} levels"
            )
        return await self._run(program, arguments or {}, (*self.chain, tool), timeout)


def error_text(message: str) -> types.CallToolResult:
    import mcp_types as types

    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True)


async def build_binary(
    modcache: ModuleCache, package: Package, program: SavedProgram, servers: dict[str, Any], out: Path
) -> Path:
    """Write a static binary of ``program`` to ``out`` that runs without gocode."""
    inner = [c for c in program.calls if c.startswith(SAVED_SERVER + ".")]
    if inner:
        raise SavedProgramError(
            f"{program.name!r} calls other saved programs ({', '.join(inner)}), which only a gocode "
            "controller runs; a standalone binary cannot"
        )
    if not modcache.ready:
        modcache.ensure()
    build = await modcache.build(package, ModelCode(standalone(program, servers)))
    if not build.ok or build.binary is None:
        raise SavedProgramError(f"the program no longer builds against these tools:\n{build.output.strip()}")
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(build.binary, out)
    out.chmod(0o755)
    return out


SAVE_TOOL_NAME = "save_go_program"


def save_tool_definition() -> dict[str, Any]:
    return {
        "name": SAVE_TOOL_NAME,
        "description": (
            "Keep Go code that worked as a new tool `name`, offered on later turns. The code declares "
            '`type Input struct {…}` (json tags; a `desc:"…"` tag describes a field) and reads it from `in`.'
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "pattern": NAME.pattern},
                "code": {"type": "string"},
                "description": {"type": "string"},
                "replace": {"type": "boolean", "description": "overwrite a saved program of that name"},
            },
            "required": ["name", "code"],
            "additionalProperties": False,
        },
    }


@dataclass(frozen=True)
class SaveRequest:
    name: str
    code: str
    description: str = ""
    replace: bool = False

    @classmethod
    def parse(cls, arguments: dict[str, Any] | None) -> SaveRequest:
        args = arguments or {}
        extra = set(args) - {"name", "code", "description", "replace"}
        if extra:
            raise SavedProgramError(f"{SAVE_TOOL_NAME}: unknown arguments {sorted(extra)}")
        name, code, desc, replace = args.get("name"), args.get("code"), args.get("description", ""), args.get("replace")
        if not isinstance(name, str) or not isinstance(code, str):
            raise SavedProgramError(f"{SAVE_TOOL_NAME} needs string arguments `name` and `code`")
        if not isinstance(desc, str) or not isinstance(replace, bool | None):
            raise SavedProgramError(f"{SAVE_TOOL_NAME}: `description` is a string, `replace` a boolean")
        return cls(name, code, desc, bool(replace))
