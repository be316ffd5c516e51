"""Compile errors as the model should read them (pure functions, no I/O).

Messages come from Go's parser and type checker at the model's positions. Here they lose
every trace of the generated program (the bindings' package, the generated file, renamed
entry points), and an error that names something close to a tool or one of its types
teaches: ``did you mean getCurrentTime?`` and the declaration the model needs.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from gocode.program.diagnostics import Diagnostic
from gocode.schema.ir import EnumDecl, Package, ToolFunc, TypeDecl
from gocode.schema.names import IDENTIFIER
from gocode.view.modelview import enum_values, render_funcs

_SCRUB = [
    (re.compile(r"gocodews/tools/t[0-9a-f]+\."), ""),
    (re.compile(r"\b(?:gocodetools|tools)\.(?=[A-Za-z_])"), ""),
    (re.compile(r"\bgocodeModelMain\b"), "main"),
    (re.compile(r"\bgocodeModelRun\b"), "Run"),
    (re.compile(r"\bgocode(?:fmt|os|runtime|rt)\."), ""),
]
_UNDEFINED = re.compile(r"undefined: ([A-Za-z_][\w.]*)|name (\w+) not exported by package (\w+)")
_MAX_BLOCKS = 2


def scrub(text: str) -> str:
    for pattern, repl in _SCRUB:
        text = pattern.sub(repl, text)
    return text


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _selector_at(source: str, d: Diagnostic) -> str:
    """The dotted name the model wrote at a diagnostic's position (``weather.get_weather``)."""
    lines = source.split("\n")
    if not 0 < d.line <= len(lines) or d.column <= 0:
        return ""
    m = re.match(r"[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*", lines[d.line - 1][d.column - 1 :])
    return m.group() if m else ""


def _tool_for(name: str, pkg: Package) -> ToolFunc | None:
    """The tool a misnamed reference most likely means, or None when none is close enough."""
    want = _norm(name)
    if not want:
        return None
    keys: dict[str, ToolFunc] = {}
    for f in pkg.funcs:
        server = f.server
        for k in (f.name, f.exported, f.tool, f"{server}{f.tool}", f"{server}{f.name}"):
            keys.setdefault(_norm(k), f)
    if want in keys:
        return keys[want]
    close = difflib.get_close_matches(want, list(keys), n=2, cutoff=0.8)
    if len(close) == 1 or (close and keys[close[0]] is keys[close[-1]]):
        return keys[close[0]]
    return None


def _same_tool(name: str, pkg: Package) -> list[ToolFunc]:
    """Every tool a name could mean by its tool name alone, across servers: when more than one,
    the name is ambiguous and a did-you-mean lists them all, each with its server."""
    want = _norm(name)
    return [f for f in pkg.tool_funcs if want and want in (_norm(f.tool), _norm(f.exported))]


def _names_in(pkg: Package) -> dict[str, ToolFunc]:
    """Type and enum-constant names → the tool that declares them."""
    out: dict[str, ToolFunc] = {}
    for f in pkg.funcs:
        for d in f.decls:
            out.setdefault(d.name, f)
            if isinstance(d, EnumDecl):
                for v in d.values:
                    out.setdefault(v.name, f)
    return out


def _enum_for(name: str, pkg: Package) -> tuple[EnumDecl, ToolFunc] | None:
    """The enum a made-up constant belongs to by its name (``UnitKelvin`` → ``Unit``), also
    under a hidden alias (``ListMergeRequestsInputSortUp`` → the enum Sort is declared as)."""
    enums = {d.name: (d, f) for f in pkg.funcs for d in f.decls if isinstance(d, EnumDecl)}
    best: tuple[str, tuple[EnumDecl, ToolFunc]] | None = None
    for f in pkg.funcs:
        for d in f.decls:
            target = d.name if isinstance(d, EnumDecl) else d.type if isinstance(d, TypeDecl) else ""
            fits = target in enums and name.startswith(d.name) and name != d.name
            if fits and (best is None or len(d.name) > len(best[0])):
                best = (d.name, enums[target])
    return best[1] if best else None


def _declaration(pkg: Package, f: ToolFunc) -> str:
    # The model view, with every type the tool needs (shared types live with other tools).
    return render_funcs(pkg, [f]).strip()


def _without_cascades(diags: Sequence[Diagnostic]) -> list[Diagnostic]:
    """Drops errors that only follow from an earlier one on the same line: go/types hides most,
    but ``must(undefinedName(ctx, in))`` also says "not enough arguments in call to must …
    have (unknown type)", which sends a model after the wrong fix."""
    out: list[Diagnostic] = []
    for d in diags:
        follows = any(e.file == d.file and e.line == d.line for e in out)
        if follows and "(unknown type)" in d.message:
            continue
        out.append(d)
    return out


def explain(diags: Sequence[Diagnostic], pkg: Package, source: str) -> str:
    """The answer for compile errors: one line per error, then what the model needs to fix them."""
    lines: list[str] = []
    blocks: list[ToolFunc] = []
    owners = _names_in(pkg)
    tool_names = {f.name for f in pkg.funcs}

    def want(f: ToolFunc) -> None:
        if f not in blocks:
            blocks.append(f)

    # A type shared by several tools is declared with the first; the tool the program calls
    # that uses it is the one to show.
    called = [f for f in pkg.funcs if re.search(rf"\b{re.escape(f.name)}\s*\(", source)]
    uses = {f.name: set(IDENTIFIER.findall(_declaration(pkg, f))) for f in called[:_MAX_BLOCKS]}

    def owner(name: str) -> ToolFunc:
        return next((f for f in called if name in uses.get(f.name, ())), owners[name])

    for d in _without_cascades(diags):
        msg = scrub(d.message)
        hint = ""
        m = _UNDEFINED.search(msg)
        if m and m.group(1) == "ctx":
            hint = " (ctx is Run's parameter: pass it to your function as its first argument)"
        elif m:
            written = _selector_at(source, d) or m.group(1) or m.group(2)
            parts = written.split(".")
            tried = [written, parts[-1]] if len(parts) > 1 else [written]
            for cand in tried:
                if cand in tool_names:
                    continue
                if len(same := _same_tool(cand, pkg)) > 1:
                    listed = " or ".join(f"{f.name} ({f.server}.{f.tool})" for f in same)
                    hint = f" (did you mean {listed}?)"
                    for one in same:
                        want(one)
                    break
                f = _tool_for(cand, pkg)
                if f is not None:  # a qualified name is answered with the server the tool is on
                    where = f" ({f.server}.{f.tool})" if len(parts) > 1 else ""
                    hint = f" (did you mean {f.name}{where}?)"
                    want(f)
                    break
                enum = _enum_for(cand, pkg)
                if enum is not None:
                    d_enum, _ = enum
                    hint = f" ({d_enum.name} is one of {enum_values(d_enum)})"
                    want(owner(d_enum.name))
                    break
                close = difflib.get_close_matches(cand, list(owners), n=1, cutoff=0.75)
                if close:
                    hint = f" (did you mean {close[0]}?)"
                    want(owner(close[0]))
                    break
        for ident in IDENTIFIER.findall(msg):
            if ident in owners and not m:
                want(owner(ident))
        where = f"{d.file}:{d.line}:{d.column}: " if d.file and not d.file.startswith("gocode_") else ""
        lines.append(f"{where}{msg}{hint}")
    text = "\n".join(lines)
    shown = blocks[:_MAX_BLOCKS]
    if shown:
        text += "\n\nThe declarations involved:\n\n" + render_funcs(pkg, shown).strip()
    return text
