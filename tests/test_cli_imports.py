"""``gocode --help`` and every subcommand's ``--help`` import nothing heavy.

A command imports the MCP SDK, pydantic, the search models and the rest inside its function;
its module and the group load only click and a few small modules. The fast lane follows the
module-level imports from the command modules through the package (and every import in
``gocode/cli/app.py`` and ``gocode/cli/common.py``, which run for every command); the full lane runs the help of every
command in a fresh interpreter and looks at what it loaded. Both fail when an import brings in
one of the heavy packages below. No timing: ``bench/cli.py`` measures the time.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from gocode.cli.app import COMMANDS, LazyGroup, command_paths, main

ROOT = Path(__file__).resolve().parent.parent
# The group and what every command shares: their function-level imports run for every command too.
RUN_FOR_EVERY_COMMAND = ("gocode.cli.app", "gocode.cli.common")

# Top-level packages that cost tens to hundreds of milliseconds to import, or pull in such.
HEAVY = {
    "mcp",
    "mcp_types",
    "pydantic",
    "pydantic_core",
    "httpx",
    "httpx2",
    "httpcore",
    "anyio",
    "starlette",
    "sse_starlette",
    "uvicorn",
    "yaml",
    "jinja2",
    "jsonschema",
    "tenacity",
    "prometheus_client",
    "tantivy",
    "bpe_openai",
    "numpy",
    "onnxruntime",
    "tokenizers",
    "rich",
    "openai",
    "anthropic",
    "asyncio",
    "ssl",
}

# Runs the given command lines' --help in this interpreter and prints the modules then loaded.
PROBE = """
import json, sys
from gocode.cli import main
for args in json.loads(sys.argv[1]):
    try:
        main([*args, "--help"], prog_name="gocode", standalone_mode=False)
    except SystemExit:
        pass
print(json.dumps(sorted(sys.modules)))
"""


def loaded_after_help(*command_lines: list[str]) -> set[str]:
    """The modules a fresh interpreter holds after printing the help of each command line."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(list(command_lines))],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return set(json.loads(proc.stdout.splitlines()[-1]))


def module_level_imports(path: Path) -> list[tuple[str, int]]:
    """(module, line) of each import that runs when the module is imported: not inside a
    function or class, not under ``if TYPE_CHECKING:``. Relative imports are not used here."""
    found: list[tuple[str, int]] = []

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.Import):
                found.extend((a.name, node.lineno) for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.append((node.module, node.lineno))
                found.extend((f"{node.module}.{a.name}", node.lineno) for a in node.names)
            elif isinstance(node, ast.If):
                if "TYPE_CHECKING" not in ast.unparse(node.test):  # `TYPE_CHECKING`, `typing.TYPE_CHECKING`
                    visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
                for handler in node.handlers:
                    visit(handler.body)
                visit(node.orelse)
                visit(node.finalbody)

    visit(ast.parse(path.read_text(encoding="utf-8")).body)
    return found


def every_import(path: Path) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.extend((a.name, node.lineno) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.append((node.module, node.lineno))
            out.extend((f"{node.module}.{a.name}", node.lineno) for a in node.names)
    return out


def source_of(module: str) -> Path | None:
    base = ROOT.joinpath(*module.split("."))
    for path in (base / "__init__.py", base.with_suffix(".py")):
        if path.is_file():
            return path
    return None


def heavy_imports_at_help(roots: list[str]) -> list[str]:
    """Each heavy package reached from ``roots`` through the package's module-level imports,
    as the chain of imports that reaches it."""
    problems: list[str] = []
    seen: set[str] = set()
    queue: list[tuple[str, list[str]]] = [(m, [m]) for m in roots]
    while queue:
        module, chain = queue.pop(0)
        if module in seen:
            continue
        seen.add(module)
        path = source_of(module)
        if path is None:
            continue
        parts = module.split(".")  # importing a.b.c runs a/__init__ and a/b/__init__ first
        queue.extend((".".join(parts[:n]), chain) for n in range(1, len(parts)))
        found = every_import(path) if module in RUN_FOR_EVERY_COMMAND else module_level_imports(path)
        for target, line in found:
            top = target.split(".")[0]
            if top in HEAVY:
                problems.append(f"{' -> '.join(chain)} -> {target} ({path.relative_to(ROOT)}:{line})")
            elif top == "gocode":
                queue.append((target, [*chain, target]))
    return sorted(set(problems))


@pytest.mark.fast
def test_command_modules_import_nothing_heavy_at_module_level() -> None:
    roots = ["gocode.cli", *RUN_FOR_EVERY_COMMAND, *sorted({v.split(":")[0] for v in COMMANDS.values()})]
    assert heavy_imports_at_help(roots) == []


@pytest.mark.fast
def test_the_static_check_follows_the_package_and_skips_type_checking(tmp_path: Path, monkeypatch) -> None:
    pkg = tmp_path / "gocode"
    (pkg / "cli").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "cli" / "__init__.py").write_text("")
    (pkg / "lower.py").write_text("import typing\nif typing.TYPE_CHECKING:\n    import numpy\nimport yaml\n")
    (pkg / "cli" / "cmd.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import mcp\n"
        "from gocode import lower\n\ndef run():\n    import pydantic\n"
    )
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert heavy_imports_at_help(["gocode.cli.cmd"]) == ["gocode.cli.cmd -> gocode.lower -> yaml (gocode/lower.py:4)"]


def test_no_help_imports_a_heavy_package() -> None:
    loaded = loaded_after_help(*command_paths())
    heavy = sorted(m for m in loaded if m.split(".")[0] in HEAVY)
    assert heavy == [], f"--help imported {heavy}: import these inside the command functions"


def test_a_commands_help_loads_only_that_commands_module() -> None:
    loaded = loaded_after_help(["exec"])
    commands = sorted(m for m in loaded if m.startswith("gocode.cli."))
    assert commands == ["gocode.cli.app", "gocode.cli.common", "gocode.cli.execute"]


@pytest.mark.fast
def test_the_group_names_every_command_its_modules_define() -> None:
    ctx = click.Context(main)
    assert isinstance(main, LazyGroup)
    for name in COMMANDS:
        cmd = main.get_command(ctx, name)
        assert cmd is not None and cmd.name == name
    # A command defined in a module under gocode/cli but missing from COMMANDS would never run.
    reachable = {id(main.get_command(ctx, name)) for name in COMMANDS}
    for path in sorted((ROOT / "gocode" / "cli").glob("*.py")):
        module = sys.modules.get(f"gocode.cli.{path.stem}")
        for attr, value in vars(module or object).items():
            if isinstance(value, click.Command) and value is not main and not _subcommand(value):
                assert id(value) in reachable, f"gocode.cli.{path.stem}:{attr} is not in gocode.cli.app.COMMANDS"


def _subcommand(cmd: click.Command) -> bool:
    ctx = click.Context(main)
    for name in COMMANDS:
        group = main.get_command(ctx, name)
        if isinstance(group, click.Group) and cmd in group.commands.values():
            return True
    return False


# Runs gocode commands in this interpreter and prints the modules then loaded.
RUN = """
import json, sys
from gocode.cli import main
for args in json.loads(sys.argv[1]):
    try:
        main(args, prog_name="gocode", standalone_mode=False)
    except SystemExit:
        pass
print(json.dumps(sorted(sys.modules)))
"""

# What talking to a server needs, and showing kept listings must not load.
SDK = {"mcp", "mcp_types", "httpx", "httpx2", "anyio", "starlette", "uvicorn"}


def test_showing_kept_listings_does_not_load_the_mcp_sdk(tmp_path: Path) -> None:
    from gocode.config import parse_config
    from gocode.mcp.cache import RecentListings
    from gocode.mcp.listing import Listing

    config_path = tmp_path / "gocode.json"
    config_path.write_text(json.dumps({"mcpServers": {"w": {"command": str(tmp_path / "no-such-server")}}}))
    config = parse_config(config_path.read_text(), str(config_path))
    tools = [{"name": "get_weather", "description": "Weather in a city.", "inputSchema": {"type": "object"}}]
    RecentListings(tmp_path / "cache" / "recent-tool-lists").save(
        "w", config.mcp_servers["w"], Listing(tools=tools), "2025-11-25", "w 1.0"
    )
    c = ["-c", str(config_path)]
    lines = [["list", *c], ["describe", *c, "get_weather"], ["search", *c, "weather"]]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GOCODE_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("GOCODE_RECENT_LISTINGS", None)  # the kept listings under that cache, as a user has them
    env["GOCODE_SEMANTIC_SEARCH"] = "0"  # the embedding models are search's own, not the SDK
    proc = subprocess.run(
        [sys.executable, "-c", RUN, json.dumps(lines)], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert "starting" not in proc.stderr and proc.stderr.count("as listed up to") == 3, proc.stderr
    loaded = set(json.loads(proc.stdout.splitlines()[-1]))
    assert sorted(m for m in loaded if m.split(".")[0] in SDK) == []
