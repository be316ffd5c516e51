"""The model view: the Go declarations a model reads, separate from the compiled bindings.

The bindings (:mod:`gocode.program.render`) carry JSON tags, methods and fallbacks; the view carries
only what a programmer needs to call the tools, in the fewest tokens: no struct tags, a
field's description as a trailing comment (dropped when it only restates the name), one
``const ( … )`` block per enum, each tool under a one-line header naming its server, and the
tools as ``func`` declarations. Every name in the view is a name the program compiled for a
call declares (``main.go`` aliases each type, constant and function of the bindings), and
each structurally identical type is declared once (:func:`gocode.schema.builder.build_package`).

Three tiers, from most to least detailed: :func:`render_full` (every declaration),
:func:`render_index` (per server one line per tool: compact signature and first sentence)
and :func:`render_names` (per server a tool count and as many names as a budget allows).
:func:`render_funcs` gives the full declarations of some tools with every type they need,
for search answers. Pure functions of the IR.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping

from gocode.schema.doctext import one_line
from gocode.schema.ir import (
    PTR_HELPER,
    Decl,
    EnumDecl,
    Field,
    Package,
    StructDecl,
    ToolFunc,
    TupleDecl,
    TypeDecl,
    UnionDecl,
)
from gocode.schema.media import RT_CONTENT, RT_MEDIA
from gocode.schema.names import IDENTIFIER

# Longest comment a view line carries; descriptions past it end with "…".
DOC_LIMIT = 1500
# In an input struct, the fields after this line may be left zero; those before it are required.
OPTIONAL_MARK = "// optional:"


# --- comments -----------------------------------------------------------------------------------


def _text(lines: Iterable[str], name: str = "") -> str:
    """Doc lines as one line, without the leading declared name the bindings' doc starts with."""
    text = one_line(" ".join(lines), DOC_LIMIT)
    if name and text.startswith(name + " "):
        text = text[len(name) + 1 :]
    return text


def _comment(text: str) -> str:
    return f"// {text}\n" if text else ""


# A server's note (config ``note``): its longest, in characters, once made one line.
NOTE_CHARS = 300
_HEADER = "// ===== server "


def header(server: str, count: int, note: str = "") -> str:
    """The header above a server's declarations: a line naming it, then each line of its note
    (what the config and the server said of it), without control characters, bounded."""
    noun = "tool" if count == 1 else "tools"
    said = [one_line(line, NOTE_CHARS) for line in note.split("\n")[:2]]
    return f"{_HEADER}{one_line(server, 200)} ({count} {noun}) =====\n" + "".join(f"// {s}\n" for s in said if s)


def first_sentence(text: str) -> str:
    text = one_line(text, DOC_LIMIT)
    m = re.search(r"(?<=[.!?])\s", text)
    return text[: m.start()] if m else text


# --- declarations -------------------------------------------------------------------------------


def _field_comment(f: Field, enums: dict[str, str]) -> str:
    # An enum's description is on its type already.
    desc = "" if enums.get(f.type.lstrip("*[]")) == f.desc else f.desc
    notes = "; ".join(f.notes)
    if not desc:
        return notes
    return f"{desc} ({notes})" if notes else desc


def _columns(rows: list[tuple[str, str, str]]) -> list[str]:
    """``name type // comment`` rows aligned as gofmt aligns a struct's fields: names across
    all rows; types across each run of consecutive rows that carry a comment."""
    wn = max(len(n) for n, _, _ in rows)
    widths = [0] * len(rows)
    i = 0
    while i < len(rows):
        j = i
        while j < len(rows) and rows[j][2]:
            j += 1
        for k in range(i, j):
            widths[k] = max(len(t) for _, t, _ in rows[i:j])
        i = max(j, i + 1)
    return [
        f"\t{n.ljust(wn)} {t.ljust(wt)} // {c}" if c else f"\t{n.ljust(wn)} {t}"
        for (n, t, c), wt in zip(rows, widths, strict=True)
    ]


Row = tuple[str, str, str]  # field name, type, comment


def _struct(name: str, doc: str, rows: list[Row], optional: list[Row] | None = None) -> str:
    """A struct; ``optional`` rows, if any, follow an ``// optional:`` line."""
    if not rows and not optional:
        return f"{_comment(doc)}type {name} struct{{}}\n"
    lines = _columns(rows) if rows else []
    if optional:
        lines += [f"\t{OPTIONAL_MARK}", *_columns(optional)]
    return f"{_comment(doc)}type {name} struct {{\n" + "\n".join(lines) + "\n}\n"


def _unsaid(rows: list[Row], said: set[Row] | None) -> list[Row]:
    """Rows whose comment was said already (the same field, type and comment earlier in the
    same server) lose the comment: repeated parameters, like a ``path`` or a ``project_id`` on
    every tool, are explained once."""
    if said is None:
        return rows
    out = []
    for row in rows:
        out.append((row[0], row[1], "") if row[2] and row in said else row)
        said.add(row)
    return out


def render_decl(
    d: Decl,
    inputs: frozenset[str] = frozenset(),
    enums: dict[str, str] | None = None,
    said: set[Row] | None = None,
) -> str:
    """One declaration as the model reads it. Structs in ``inputs`` (reachable from a tool's
    input) list their required fields first and the optional ones after an ``// optional`` line.
    ``said``, when given, collects the struct fields shown so far (see :func:`_unsaid`)."""
    doc = _text(d.doc, d.name)
    enums = enums or {}
    if isinstance(d, StructDecl):
        rows = _unsaid([(f.name, f.type, _field_comment(f, enums)) for f in d.fields], said)
        if d.name not in inputs:
            return _struct(d.name, doc, rows)
        required = [r for r, f in zip(rows, d.fields, strict=True) if not f.optional]
        optional = [r for r, f in zip(rows, d.fields, strict=True) if f.optional]
        return _struct(d.name, doc, required, optional)
    if isinstance(d, EnumDecl):
        return f"{_comment(doc)}type {d.name} {d.base} // {enum_values(d)}\n"
    if isinstance(d, UnionDecl):
        return _struct(d.name, doc, [(v.name, v.type, "") for v in d.variants])
    if isinstance(d, TupleDecl):
        rows = [(f.name, f.type, "") for f in d.items] + ([("Rest", d.rest, "")] if d.rest else [])
        return _struct(d.name, doc, rows)
    if d.type == RT_CONTENT:
        rows = [
            ("Text", "string", "the text parts, joined by newlines"),
            ("Media", "[]Media", "images, audio, binary resources"),
            ("Parts", "[]ContentPart", "every part in order, links' URIs for readResource"),
        ]
        return _struct(d.name, doc, rows)
    if d.type == RT_MEDIA:
        return _struct(d.name, doc, [("MIMEType", "string", ""), ("Data", "[]byte", "")])
    assert isinstance(d, TypeDecl)
    return f"{_comment(doc)}type {d.name} {'= ' if d.alias else ''}{d.type}\n"


def enum_values(d: EnumDecl) -> str:
    """An enum's values as the literals a program writes (``"a", "b"``).

    The literals cost a fraction of a ``const`` block's named constants (about a fifth of the
    tokens per value). The constants are still declared, hidden, for code that guesses them,
    and a literal that is not one of the values is a compile error (the type check)."""
    return ", ".join(v.literal for v in d.values)


def signature(f: ToolFunc) -> str:
    params = "context.Context" + (f", {f.input_type}" if f.input_type else "")
    return f"func {f.name}({params}) ({f.output_type}, error)"


# Comment lines per (server, tool) on what its results looked like (gocode.mcp.shapes).
Shapes = Mapping[tuple[str, str], list[str]]


def merged_comments(*parts: Shapes) -> dict[tuple[str, str], list[str]]:
    """Comment lines per tool from several sources, in the order given."""
    out: dict[tuple[str, str], list[str]] = {}
    for part in parts:
        for key, lines in part.items():
            out[key] = [*out.get(key, ()), *lines]
    return out


def render_func(f: ToolFunc, shapes: Shapes | None = None) -> str:
    said = () if f.companion else (shapes or {}).get((f.server, f.tool)) or ()  # on the tool's own function
    seen = "".join(f"// {line}\n" for line in said)
    return f"{_comment(_text(f.doc, f.name))}{seen}{signature(f)}\n"


def with_companions(pkg: Package, funcs: Iterable[ToolFunc]) -> list[ToolFunc]:
    """``funcs``, each tool's typed companion right after it (shown wherever the tool is)."""
    out: list[ToolFunc] = []
    for f in funcs:
        if f.companion:
            continue
        out.append(f)
        if (c := pkg.companion_of(f)) is not None:
            out.append(c)
    return out


def _refs(expr: str) -> set[str]:
    return set(IDENTIFIER.findall(expr))


def _decl_refs(d: Decl, media: str = "") -> set[str]:
    if isinstance(d, StructDecl):
        return {n for f in d.fields for n in _refs(f.type)}
    if isinstance(d, UnionDecl):
        return {n for v in d.variants for n in _refs(v.type)}
    if isinstance(d, TupleDecl):
        return {n for f in d.items for n in _refs(f.type)} | _refs(d.rest or "")
    if isinstance(d, TypeDecl):
        return {media} if d.type == RT_CONTENT else _refs(d.type)
    return set()


def _closure(decls: dict[str, Decl], roots: Iterable[str]) -> set[str]:
    """The declared names reachable from ``roots`` through field and element types."""
    seen: set[str] = set()
    media = next((n for n, d in decls.items() if isinstance(d, TypeDecl) and d.type == RT_MEDIA), "")
    todo = [r for r in roots if r in decls]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(n for n in _decl_refs(decls[name], media) if n in decls and n not in seen)
    return seen


def _inputs(pkg: Package, decls: dict[str, Decl]) -> frozenset[str]:
    return frozenset(_closure(decls, (f.input_type for f in pkg.funcs if f.input_type)))


def _ptr_doc() -> str:
    return f"// {PTR_HELPER}(v) returns &v, for optional pointer fields and union members.\nfunc {PTR_HELPER}[T any](v T) *T\n"


def _group(funcs: Iterable[ToolFunc], *, ranked: bool = False) -> list[tuple[str, list[ToolFunc]]]:
    """Tools by server, in first-seen order; ``ranked`` keeps their order instead, a server's
    header repeated where another server's tool comes between (search answers are ranked)."""
    if ranked:
        return [(server, list(run)) for server, run in itertools.groupby(funcs, key=lambda f: f.server)]
    groups: dict[str, list[ToolFunc]] = {}
    for f in funcs:
        groups.setdefault(f.server, []).append(f)
    return list(groups.items())


# A names tier with no names lists its servers several to a line: a line per server costs about
# three more o200k tokens each ("// ", " tools", the newline), 600 at 200 servers.
_SERVERS_LINE_CHARS = 100

# --- tiers --------------------------------------------------------------------------------------


def render_funcs(
    pkg: Package,
    funcs: Iterable[ToolFunc],
    *,
    ranked: bool = False,
    shapes: Shapes | None = None,
    about: Mapping[str, str] | None = None,
    declared: set[str] | None = None,
) -> str:
    """Full declarations of ``funcs`` (tools of ``pkg``), each type they need declared once,
    grouped by server (``ranked``: in the given order; ``about``: a note per server, under its
    header): what the full view or a search answer shows. ``declared``: the types (and helpers)
    shown earlier in the same text, left out here and added to."""
    chosen = with_companions(pkg, funcs)
    decls = {d.name: d for d in pkg.decls if not (isinstance(d, TypeDecl) and d.hidden)}
    roots = [t for f in chosen for t in (f.input_type, f.output_type) if t]
    needed = _closure(decls, [n for r in roots for n in _refs(r)])
    inputs = _inputs(pkg, decls)
    enums = {d.name: _text(d.doc, d.name) for d in pkg.decls if isinstance(d, EnumDecl)}
    position = {d.name: i for i, d in enumerate(pkg.decls)}
    shown: set[str] = set() if declared is None else declared
    blocks: list[str] = []
    if pkg.uses_ptr() and any(_uses_ptr(decls[n]) for n in needed) and _PTR not in shown:
        shown.add(_PTR)
        blocks.append(_ptr_doc())
    for server, group in _group(chosen, ranked=ranked):
        blocks.append(header(server, sum(not f.companion for f in group), (about or {}).get(server, "")).rstrip("\n"))
        said: set[Row] = set()
        for f in group:
            # A tool's types come right before it, unless an earlier tool shown already needed them.
            mine = _closure(decls, [n for t in (f.input_type, f.output_type) if t for n in _refs(t)]) - shown
            for name in sorted(mine, key=position.__getitem__):
                shown.add(name)
                blocks.append(render_decl(decls[name], inputs, enums, said))
            blocks.append(render_func(f, shapes))
    return _join(blocks)


_PTR = "func ptr"  # the helper, among the types shown (no type name has a space)


def _uses_ptr(d: Decl) -> bool:
    if isinstance(d, UnionDecl):
        return True
    return isinstance(d, StructDecl) and any(f.type.startswith("*") for f in d.fields)


def _join(blocks: list[str]) -> str:
    """The blocks, each ending in a newline, a blank line between them except after a server header."""
    parts: list[str] = []  # joined once at the end: appending to one string copies it each time
    for b in blocks:
        if parts and not parts[-1].startswith(_HEADER):
            parts.append("\n")
        parts.append(b if b.endswith("\n") else b + "\n")
    return "".join(parts)


def render_full(pkg: Package, shapes: Shapes | None = None, about: Mapping[str, str] | None = None) -> str:
    """Every declaration of the tool set, grouped by server (``shapes``: learned results as
    comments; ``about``: a note per server)."""
    return render_funcs(pkg, pkg.funcs, shapes=shapes, about=about)


# What the index tier's line says of a tool's input: at most this many fields, enums of at
# most this many values, each value and default at most this long (else left to search).
SUMMARY_FIELDS = 4
SUMMARY_ENUM_VALUES = 4
SUMMARY_VALUE_CHARS = 16


def _short(value: str) -> str | None:
    """A value as the summary shows it (a string unquoted), or None when too long or not one line."""
    if value.startswith('"') and value.endswith('"') and len(value) >= 2:
        value = value[1:-1]
    ok = value and len(value) <= SUMMARY_VALUE_CHARS and value.isprintable() and not any(c in value for c in "|,;{}")
    return value if ok else None


def _enum_values(decl: Decl | None) -> str | None:
    if not isinstance(decl, EnumDecl) or not 0 < len(decl.values) <= SUMMARY_ENUM_VALUES:
        return None
    values = [_short(v.literal) for v in decl.values]
    return "|".join(v for v in values if v) if all(values) else None


def input_summary(f: ToolFunc, decls: Mapping[str, Decl]) -> str:
    """What decides a call, inside the index tier's ``Input{…}``: the required fields, with a
    short enum's values (``Currency: dollar|euro``), then optional fields whose default
    changes results (``Limit=20``). Empty when the input has none of them."""
    struct = decls.get(f.input_type or "")
    if not isinstance(struct, StructDecl):
        return ""
    parts: list[str] = []
    defaults: list[str] = []  # after the required fields: those are what a call cannot leave out
    for fld in struct.fields:
        if fld.optional:
            default = next((n.removeprefix("default ") for n in fld.notes if n.startswith("default ")), None)
            value = _short(default) if default is not None else None
            if value is not None:
                defaults.append(f"{fld.name}={value}")
            continue
        values = _enum_values(decls.get(fld.type.lstrip("*")))
        parts.append(f"{fld.name}: {values}" if values else fld.name)
    parts += defaults
    if len(parts) > SUMMARY_FIELDS:
        parts = [*parts[:SUMMARY_FIELDS], "…"]
    return "; ".join(parts)


def index_line(f: ToolFunc, notes: Shapes | None = None, decls: Mapping[str, Decl] | None = None) -> str:
    """``name(Input{Field; Kind: a|b; Limit=20}) Output // first sentence``: a tool in one line
    for the index tier (``notes``' first line for it, e.g. that it needs approval, before the
    sentence; ``decls``: the package's declarations by name, for the input's summary)."""
    summary = input_summary(f, decls) if decls is not None and not f.companion else ""
    sig = f"{f.name}({f.input_type or ''}{'{' + summary + '}' if summary else ''}) {f.output_type}"
    if f.companion:
        return sig  # under its tool's line, which says what it does
    said = (notes or {}).get((f.server, f.tool)) or ()
    desc = " ".join([*said[:1], first_sentence(_text(f.doc, f.name))]).strip()
    return f"{sig} // {desc}" if desc else sig


def render_index(pkg: Package, notes: Shapes | None = None, about: Mapping[str, str] | None = None) -> str:
    """Per server, one line per tool: its compact signature (with what decides a call: see
    :func:`input_summary`) and its description's first sentence."""
    blocks = []
    decls = {d.name: d for d in pkg.decls}
    for server, group in _group(pkg.tool_funcs):
        lines = "".join(index_line(f, notes, decls) + "\n" for f in with_companions(pkg, group))
        blocks.append(header(server, len(group), (about or {}).get(server, "")) + lines)
    return "\n".join(blocks)


def render_names(pkg: Package, per_server: int | None = None) -> str:
    """Per server its tool count and at most ``per_server`` function names (all when None); with
    none, only the servers and their counts, several to a line (the cheapest list of servers)."""
    groups = _group(pkg.tool_funcs)
    if per_server == 0:
        return _wrap_servers([f"{one_line(server, 200)} ({len(group)})" for server, group in groups])
    lines = []
    for server, group in groups:
        names = [f.name for f in group]
        shown = names if per_server is None else names[:per_server]
        more = len(names) - len(shown)
        listed = ", ".join(shown) + (f", … {more} more" if more and shown else "")
        noun = "tool" if len(names) == 1 else "tools"
        lines.append(f"// {one_line(server, 200)} ({len(names)} {noun}){': ' + listed if listed else ''}")
    return "\n".join(lines) + ("\n" if lines else "")


def _wrap_servers(items: list[str], width: int = _SERVERS_LINE_CHARS) -> str:
    """``server (tools)`` items comma-separated, under a heading, in lines of about ``width``."""
    if not items:
        return ""
    lines, line = [], "// servers (tools):"
    for item in items:
        if len(line) + len(item) + 2 > width and not line.endswith(":"):
            lines.append(line + ",")
            line = "//"
        line += " " + item if line.endswith(":") or line == "//" else ", " + item
    return "\n".join([*lines, line]) + "\n"
