"""Saved programs: Go code the model (or a user) kept, offered again as a tool of its own.

A saved program is ordinary ``execute_go_code`` code that declares its input as a struct named
``Input`` and reads it from ``in``::

    type Input struct {
        Repo  string `json:"repo" desc:"path of the repository"`
        Count int    `json:"count,omitempty"`
    }
    out := must(gitLog(ctx, GitLogInput{RepoPath: in.Repo, MaxCount: in.Count}))
    fmt.Println(out)

gocode adds ``var in = gocodert.Input...[Input](…)`` (go_templates/rt/input.go) and builds it;
the tool's input schema comes from the built program itself (reflection over ``Input``: json
tags name the properties, ``omitempty`` or a pointer makes one optional, a ``desc`` tag
describes it), so only code that type-checks is ever saved. A program is stored under the
state directory as ``saved/NAME/program.go`` and ``saved/NAME/tool.json``; a name taken by a
tool or by another saved program is refused unless the caller asks to replace it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from gocode.compile.workspace import Workspace
from gocode.errors import GocodeError
from gocode.paths import cache_dir, state_dir
from gocode.program.modelcode import split_code
from gocode.run.runner import run_program
from gocode.schema.ir import Package
from gocode.schema.names import go_string

SAVED_DIR = "saved"
NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
_INPUT_DECL = re.compile(r"^\s*type\s+Input\s+struct\b", re.M)
_SCHEMA_TIMEOUT = 30.0


class SavedProgramError(GocodeError):
    """A program that cannot be saved, built or found (the message says why)."""


@dataclass(frozen=True)
class SavedProgram:
    name: str
    description: str
    input_schema: dict[str, Any]
    source: str

    def tool(self) -> dict[str, Any]:
        """The MCP tool definition it is offered as."""
        return {"name": self.name, "description": self.description, "inputSchema": self.input_schema}


def saved_root() -> Path:
    return (state_dir() or cache_dir()) / SAVED_DIR


def with_input(source: str, raw_input: str | None) -> str:
    """The program with ``in`` declared: from ``raw_input`` (JSON), or at run time when None."""
    call = "gocodert.Input[Input]()" if raw_input is None else f"gocodert.InputFrom[Input]({go_string(raw_input)})"
    # The function keeps `in` at package level: a var nothing hoisted refers to would stay in
    # Run, after the statements that read it.
    return f"{source.rstrip()}\n\nvar in = {call}\n\nfunc gocodeInput() Input {{ return in }}\n"


def standalone(source: str, servers: dict[str, dict[str, Any]]) -> str:
    """The program as a standalone binary: its input at run time, its config's servers built in
    (used when GOCODE_SERVERS is not set)."""
    defaults = f"\nfunc init() {{ gocodert.SetDefaultServers({go_string(json.dumps(servers))}) }}\n"
    return with_input(source, None) + defaults


class SavedStore:
    """The saved programs in one directory (default: ``saved`` in the state or cache directory)."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root or saved_root()

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
        return SavedProgram(name, meta.get("description", ""), meta.get("inputSchema") or {}, source)

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
        meta = {k: v for k, v in asdict(program).items() if k != "source"}
        (tmp / "tool.json").write_text(
            json.dumps({"name": meta["name"], "description": meta["description"], "inputSchema": meta["input_schema"]})
        )
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


async def derive(workspace: Workspace, package: Package, name: str, source: str, description: str = "") -> SavedProgram:
    """Build the program and ask it for its input schema; raises with the compiler's messages."""
    if not _INPUT_DECL.search(source):
        raise SavedProgramError(
            "a saved program declares its input as `type Input struct {…}` and reads it from `in` "
            "(a struct with no fields for none)"
        )
    if not workspace.ready:
        workspace.ensure()
    build = await workspace.build(package, split_code(with_input(source, "{}")))
    if not build.ok or build.binary is None:
        raise SavedProgramError(f"the program does not build:\n{build.output.strip()}")
    env = {"GOCODE_INPUT_SCHEMA": "1", "GOCODE_SERVERS": "{}", "PATH": os.environ.get("PATH", "")}
    run = await run_program(build.binary, env, Path.cwd(), timeout=_SCHEMA_TIMEOUT, max_output=1 << 20)
    try:
        schema = json.loads(run.output)
    except ValueError:
        raise SavedProgramError(f"the program did not report its input schema: {run.stderr.strip()}") from None
    first = source.strip().splitlines()[0] if source.strip() else ""
    doc = description or (first[2:].strip() if first.startswith("//") else f"Saved program {name}.")
    return SavedProgram(name, doc, schema, source)


async def build_binary(
    workspace: Workspace, package: Package, program: SavedProgram, servers: dict[str, Any], out: Path
) -> Path:
    """Write a static binary of ``program`` to ``out`` that runs without gocode."""
    if not workspace.ready:
        workspace.ensure()
    build = await workspace.build(package, split_code(standalone(program.source, servers)))
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
