"""One declaration per shape: identical types across tools share one name, the earliest tool's
(in the order tools take names, :meth:`gocode.toolset.ToolSet.by_seniority`), so a tool added
later never renames an earlier one's types; the later tool keeps its own names as hidden aliases,
and so does the name earlier gocode versions gave the shared type."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from gocode.schema.doctext import doc_text
from gocode.schema.ir import Decl, EnumDecl, EnumValue, Source, StructDecl, ToolFunc, TupleDecl, TypeDecl, UnionDecl
from gocode.schema.names import (
    IDENTIFIER,
    Registry,
)


def _subst(expr: str, names: dict[str, str]) -> str:
    return IDENTIFIER.sub(lambda m: names.get(m.group(0), m.group(0)), expr)


def _rename(d: Decl, names: dict[str, str]) -> Decl:
    """``d`` with the type names it refers to replaced (its own name stays)."""
    if isinstance(d, StructDecl):
        fields = tuple(replace(f, type=_subst(f.type, names)) for f in d.fields)
        return replace(d, fields=fields)
    if isinstance(d, TypeDecl):
        return d if d.type.startswith("gocodert.") else replace(d, type=_subst(d.type, names))
    if isinstance(d, UnionDecl):
        return replace(d, variants=tuple(replace(v, type=_subst(v.type, names)) for v in d.variants))
    if isinstance(d, TupleDecl):
        items = tuple(replace(f, type=_subst(f.type, names)) for f in d.items)
        return replace(d, items=items, rest=None if d.rest is None else _subst(d.rest, names))
    return d


def _shape(d: Decl) -> tuple[Any, ...]:
    """What makes two declarations interchangeable: everything but their names, doc comments
    and sources (the declaration's own name inside it stands for itself)."""
    me = {d.name: "\x00"}
    if isinstance(d, StructDecl):
        return ("struct", tuple(replace(f, type=_subst(f.type, me), doc=()) for f in d.fields))
    if isinstance(d, EnumDecl):
        return ("enum", d.base, tuple(v.literal for v in d.values))
    if isinstance(d, TypeDecl):
        return ("type", d.type if d.type.startswith("gocodert.") else _subst(d.type, me))
    if isinstance(d, UnionDecl):
        return ("union", tuple(replace(v, type=_subst(v.type, me)) for v in d.variants))
    return ("tuple", tuple(replace(f, type=_subst(f.type, me)) for f in d.items), d.rest and _subst(d.rest, me))


def dedupe_types(funcs: list[ToolFunc]) -> list[ToolFunc]:
    """Declare each structurally identical type once, across tools and servers: later copies
    are dropped and every reference (fields, functions) names the first. Repeated until
    nothing changes, since merging two element types can make their containers identical."""
    # An enum's description is its field's; shared by fields that say different things, it
    # belongs on none: the type keeps no comment, each field shows its own.
    undocumented: set[str] = set()
    while True:
        first: dict[tuple[Any, ...], Decl] = {}
        merged: dict[str, str] = {}
        for f in funcs:
            for d in f.decls:
                key = _shape(d)
                if key in first:
                    merged[d.name] = first[key].name
                    if isinstance(d, EnumDecl) and doc_text(d) != doc_text(first[key]):
                        undocumented.add(first[key].name)
                else:
                    first[key] = d
        if not merged:
            break
        funcs = [
            replace(
                f,
                decls=tuple(_rename(d, merged) for d in f.decls if d.name not in merged),
                input_type=f.input_type and _subst(f.input_type, merged),
                output_type=_subst(f.output_type, merged),
            )
            for f in funcs
        ]
    if undocumented:
        funcs = [
            replace(f, decls=tuple(replace(d, doc=()) if d.name in undocumented else d for d in f.decls)) for f in funcs
        ]
    return funcs


def keep_tool_type_names(before: list[ToolFunc], after: list[ToolFunc]) -> list[ToolFunc]:
    """A tool whose input or output type was merged into a shared one keeps its own name as a
    hidden alias (``type ReadTextFileInput = ReadFileInput``): the view shows only the shared
    type, but a program that guesses the name from the tool's still compiles."""
    declared = {d.name for f in after for d in f.decls}
    out = []
    for old, new in zip(before, after, strict=True):
        aliases = []
        for was, now in ((old.input_type, new.input_type), (old.output_type, new.output_type)):
            if was and now and was != now and was not in declared and now in declared:
                declared.add(was)
                aliases.append(TypeDecl(was, (), now, Source(new.server, new.tool), hidden=True))
        out.append(replace(new, decls=new.decls + tuple(aliases)) if aliases else new)
    return out


def former_shared_name(fields: Sequence[str], role: str, owners: Sequence[str]) -> str | None:
    """The name gocode gave a type several tools share before names stopped moving: one or two
    fields named it (``RepoPathInput``, ``PathInput``), else the shortest of its tools' own
    names, the first of those in display order (``GetPullRequestInput``). ``role`` is
    ``Input`` or ``Output``; None when the rule gave no name of its own (no fields, no tools)."""
    if len(fields) > 2:
        return min(owners, key=len) if owners else None
    return "".join(fields) + role if fields else None


def keep_former_shared_names(
    before: list[ToolFunc], after: list[ToolFunc], types: Registry, shown: Callable[[ToolFunc], int]
) -> list[ToolFunc]:
    """A shared input or output type keeps the name earlier gocode versions gave it
    (:func:`former_shared_name`) as a hidden alias, declared with the type, so code written
    then (saved programs, recorded plays) still compiles. Only a name nothing else in the
    package has: it never takes a name from a type, function or constant."""
    users: Counter[str] = Counter()
    role: dict[str, str] = {}
    owners: dict[str, list[str]] = {}  # shared type -> its tools' own type names, in display order
    for old, new in sorted(zip(before, after, strict=True), key=lambda pair: shown(pair[1])):
        for now, suffix, was in (
            (new.input_type, "Input", old.input_type),
            (new.output_type, "Output", old.output_type),
        ):
            if now:
                users[now] += 1
                role.setdefault(now, suffix)
                if was:
                    owners.setdefault(now, []).append(was)
    taken = Registry(
        types.reserved
        | {f.exported for f in after}
        | {d.name for f in after for d in f.decls}
        | {v.name for f in after for d in f.decls if isinstance(d, EnumDecl) for v in d.values}
    )
    aliases: dict[str, TypeDecl] = {}  # the shared type's name -> its alias
    for f in after:
        for d in f.decls:
            if not isinstance(d, StructDecl) or users[d.name] < 2 or not owners[d.name][0].endswith(role[d.name]):
                continue
            wanted = former_shared_name([fld.name for fld in d.fields], role[d.name], owners[d.name])
            if wanted and taken.take(wanted):
                aliases[d.name] = TypeDecl(wanted, (), d.name, d.source, hidden=True)
    if not aliases:
        return after
    return [
        replace(f, decls=f.decls + tuple(aliases[d.name] for d in f.decls if d.name in aliases))
        if any(d.name in aliases for d in f.decls)
        else f
        for f in after
    ]


def guessed_field_types(funcs: list[ToolFunc], types: Registry) -> list[ToolFunc]:
    """A field's named type is called ``<Struct><Field>`` (``<Struct><Field>Item`` for a slice's
    element) unless it is shared with another field, which named it (gitlab's ``Sort`` typed
    ``ListPullRequestsInputDirection``), or comes from ``$defs`` (``Unit``). A program that
    guesses the usual name still compiles: it is declared hidden, as an alias, with an enum's
    constants under the guessed name too (``ListMergeRequestsInputSortDesc``)."""
    named = {d.name: d for f in funcs for d in f.decls if not (isinstance(d, TypeDecl) and d.hidden)}
    # Names declared now (a type merged into a shared one left its name claimed but free).
    taken = Registry(
        types.reserved
        | {f.exported for f in funcs}
        | {d.name for f in funcs for d in f.decls}
        | {v.name for f in funcs for d in f.decls if isinstance(d, EnumDecl) for v in d.values}
    )
    out = []
    for f in funcs:
        extra: list[Decl] = []
        for d in f.decls:
            if not isinstance(d, StructDecl):
                continue
            for fld in d.fields:
                target = fld.type.lstrip("*")
                guess = d.name + fld.name
                if target.startswith("[]"):
                    target, guess = target[2:].lstrip("*"), guess + "Item"
                decl = named.get(target)
                if decl is None or guess == target or not taken.take(guess):
                    continue
                consts: list[EnumValue] = []
                if isinstance(decl, EnumDecl):
                    for v in decl.values:
                        suffix = v.name[len(decl.name) :] if v.name.startswith(decl.name) else ""
                        if suffix and taken.take(guess + suffix):
                            consts.append(EnumValue(guess + suffix, v.literal))
                extra.append(TypeDecl(guess, (), target, decl.source, hidden=True, consts=tuple(consts)))
        out.append(replace(f, decls=f.decls + tuple(extra)) if extra else f)
    return out


# --- results with non-text parts ----------------------------------------------------------------
