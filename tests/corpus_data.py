"""The schema corpus: hand-written cases (tests/corpus/cases, one per row of docs/go-mapping.md)
and real servers' tool lists (tests/corpus/real, snapshots of tools/list). Each file holds
{"server", "tools": [MCP Tool JSON]}; a tool may name another server with "_server"."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from gocode.schema.builder import build_package
from gocode.schema.ir import Package
from gocode.toolset import ServerTools, ToolInfo, ToolSet

CORPUS = Path(__file__).resolve().parent / "corpus"
GOLDEN = CORPUS / "golden"


def corpus_files() -> list[Path]:
    return sorted(CORPUS.glob("cases/*.json")) + sorted(CORPUS.glob("real/*.json"))


def corpus_id(path: Path) -> str:
    return f"{path.parent.name}-{path.stem}"


def load(path: Path, server_prefix: str = "") -> ToolSet:
    data = json.loads(path.read_text(encoding="utf-8"))
    servers: dict[str, list[ToolInfo]] = {}
    for t in data["tools"]:
        server = server_prefix + t.get("_server", data["server"])
        info = ToolInfo(
            server,
            t["name"],
            t.get("description") or "",
            t.get("inputSchema", {}),
            t.get("outputSchema"),
            t.get("title"),
        )
        servers.setdefault(server, []).append(info)
    return ToolSet(tuple(ServerTools(name, tuple(tools)) for name, tools in servers.items()))


def load_all() -> ToolSet:
    """Every corpus file at once, each under its own server names (as one big configuration)."""
    servers: list[ServerTools] = []
    for path in corpus_files():
        prefix = corpus_id(path).replace("-", "_") + "_"
        servers.extend(load(path, prefix).servers)
    return ToolSet(tuple(servers))


@functools.cache
def all_package() -> Package:
    """The Go package of :func:`load_all`, built once per test session (it is immutable)."""
    return build_package(load_all())


def schemas(path: Path) -> list[tuple[str, str, Any]]:
    """(tool, "input"/"output", schema) for every object schema in a corpus file."""
    data = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for t in data["tools"]:
        for kind, key in (("input", "inputSchema"), ("output", "outputSchema")):
            if isinstance(t.get(key), dict):
                out.append((t["name"], kind, t[key]))
    return out
