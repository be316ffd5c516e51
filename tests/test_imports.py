"""The package's imports flow one way: no module imports a later stage, and no import circles.

The stages, lowest first (a module may import its own stage or an earlier one):

0. base: ``errors``, ``resources``, ``config``, ``toolset``, ``paths``, ``files``
1. ``mcp``: the client side (discovery, listing, stdio, upstream sessions, caches, the loopback)
2. ``schema``: JSON Schema → the Go IR, names
3. ``view``: what the model reads
4. ``search``: finding tools (the analyser, BM25, embeddings, the learned ranking, the search tool)
5. ``program``: the model's code, diagnostics, rendering
6. ``compile``: the module cache, compiling and linking, the cache's housekeeping
7. ``run``: the runner and the sandbox
8. ``tools``: tools that are not MCP servers
9. the facade: ``codemode``, ``toolbox`` (``results``, ``blocking``), the route table (``routes``), ``operations``,
   ``tool_formats``, ``calling``, ``execution`` and the package's public names
10. what is built on the facade: ``serve``, ``agent``, ``integrations``, ``smoke``/``junit``, ``demo``
11. ``cli``

Every import counts: module level, inside functions, under ``TYPE_CHECKING``, and in a module
that imports by name (``importlib.import_module``: the package's lazy public names, the CLI's
lazy commands) every string that names one of the package's modules (``gocode.x.y`` or
``gocode.x.y:attr``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.fast

ROOT = Path(__file__).resolve().parent.parent

STAGES: dict[str, int] = {
    "gocode.errors": 0,
    "gocode.resources": 0,
    "gocode.config": 0,
    "gocode.toolset": 0,
    "gocode.paths": 0,
    "gocode.files": 0,
    "gocode.terminal": 0,
    "gocode.mcp": 1,
    "gocode.schema": 2,
    "gocode.view": 3,
    "gocode.search": 4,
    "gocode.program": 5,
    "gocode.compile": 6,
    "gocode.run": 7,
    "gocode.tools": 8,
    "gocode": 9,
    "gocode.codemode": 9,
    "gocode.toolbox": 9,
    "gocode.results": 9,
    "gocode.blocking": 9,
    "gocode.tool_formats": 9,
    "gocode.calling": 9,
    "gocode.routes": 9,
    "gocode.operations": 9,
    "gocode.execution": 9,
    "gocode.serve": 10,
    "gocode.agent": 10,
    "gocode.integrations": 10,
    "gocode.smoke": 10,
    "gocode.junit": 10,
    "gocode.demo": 10,
    "gocode.cli": 11,
}


def modules(root: Path) -> dict[str, Path]:
    """Every module of the package under ``root``, by dotted name (a package by its own name)."""
    out = {}
    for path in sorted((root / "gocode").rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def stage(module: str) -> int | None:
    """The stage of the longest table entry that is the module or one of its packages."""
    if module == "gocode":
        return STAGES[module]
    parts = module.split(".")
    for n in range(len(parts), 1, -1):  # a new top-level module is in no stage until added
        if (found := STAGES.get(".".join(parts[:n]))) is not None:
            return found
    return None


def imports(module: str, path: Path, known: dict[str, Path]) -> list[tuple[str, int]]:
    """The package's modules ``module`` imports (anywhere in it), with the line of each import."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    by_name = any(isinstance(n, ast.Attribute) and n.attr == "import_module" for n in ast.walk(tree))
    out = []
    for node in ast.walk(tree):
        if by_name and isinstance(node, ast.Constant) and isinstance(node.value, str):
            named = node.value.split(":")[0]
            if "." in named and named in known:
                out.append((named, node.lineno))
        elif isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names if a.name.split(".")[0] == "gocode"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "gocode":
                continue
            for alias in node.names:  # `from gocode.search import index` imports the module gocode.search.index
                sub = f"{target}.{alias.name}"
                out.append((sub if sub in known else target, node.lineno))
    return out


def violations(root: Path) -> list[str]:
    known = modules(root)
    problems = []
    graph: dict[str, set[str]] = {m: set() for m in known}
    for module, path in known.items():
        here = stage(module)
        if here is None:
            problems.append(f"{module} is in no stage: add it to STAGES in tests/test_imports.py")
            continue
        for target, line in sorted(set(imports(module, path, known))):
            if target == module:
                continue
            graph[module].add(target)
            there = stage(target)
            if there is not None and there > here:
                problems.append(
                    f"{path.relative_to(root)}:{line}: {module} (stage {here}) imports {target} (later stage {there})"
                )
    problems += [f"import circle: {' -> '.join(c)}" for c in cycles(graph)]
    return problems


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One circle through each strongly connected group of modules (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(group)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [circle(graph, set(g)) for g in groups]


def circle(graph: dict[str, set[str]], group: set[str]) -> list[str]:
    """A path from the group's first module back to itself, inside the group (breadth first)."""
    start = min(group)
    paths = {start: [start]}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph[v] & group):
            if w == start:
                return [*paths[v], start]
            if w not in paths:
                paths[w] = [*paths[v], w]
                queue.append(w)
    return sorted(group)


def test_imports_flow_one_way():
    assert violations(ROOT) == []


def test_the_check_names_a_later_stage_import_and_a_circle(tmp_path):
    pkg = tmp_path / "gocode"
    (pkg / "schema").mkdir(parents=True)
    (pkg / "program").mkdir()
    for d in (pkg, pkg / "schema", pkg / "program"):
        (d / "__init__.py").write_text("")
    (pkg / "schema" / "builder.py").write_text("def f():\n    from gocode.program.render import x\n")
    (pkg / "program" / "render.py").write_text("from gocode.schema import builder\n")
    # By name, as the lazy public names are: the string is the import; a key that merely looks
    # like a module name in a module that imports nothing by name is not.
    (pkg / "program" / "plan.py").write_text(
        'import importlib\nWHERE = {"x": "gocode.run"}\nimportlib.import_module(WHERE["x"])\n'
    )
    (pkg / "run").mkdir()
    (pkg / "run" / "__init__.py").write_text("")
    (pkg / "schema" / "names.py").write_text('KEY = "gocode.run"\n')
    (pkg / "schema" / "kept.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import gocode.run\n"
    )
    (pkg / "schema" / "lazy.py").write_text(
        'import importlib\n\nWHERE = {"x": "gocode.program.plan:x"}\nimportlib.import_module(WHERE["x"])\n'
    )
    found = violations(tmp_path)
    assert found == [
        "gocode/program/plan.py:2: gocode.program.plan (stage 5) imports gocode.run (later stage 7)",
        "gocode/schema/builder.py:2: gocode.schema.builder (stage 2) imports gocode.program.render (later stage 5)",
        "gocode/schema/kept.py:3: gocode.schema.kept (stage 2) imports gocode.run (later stage 7)",
        "gocode/schema/lazy.py:3: gocode.schema.lazy (stage 2) imports gocode.program.plan (later stage 5)",
        "import circle: gocode.program.render -> gocode.schema.builder -> gocode.program.render",
    ]
