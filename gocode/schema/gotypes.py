"""JSON Schema → a small Go intermediate representation (types, enums, unions, tool functions).

Pure and deterministic: the same :class:`~gocode.toolset.ToolSet` gives the same
:class:`Package`, whatever order the servers listed their tools in. Imports neither jinja2
nor mcp; :mod:`gocode.program.render` turns the IR into source.

Every schema maps to something that compiles, as precise as Go allows; docs/go-mapping.md
has the table. What Go cannot say exactly falls back to the nearest typed form with the
reason in the doc comment: unions become a struct with one pointer field per alternative,
tuples a struct with one field per position, and only schemas that allow anything (or an
unresolvable ``$ref``) become ``any``.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

from gocode.program.modelcode import STDLIB
from gocode.schema.names import (
    GO_KEYWORDS,
    GO_PREDECLARED,
    IDENTIFIER,
    Registry,
    camel,
    clean_text,
    comment_literal,
    export,
    go_string,
    pascal,
    words,
)
from gocode.toolset import ToolInfo, ToolSet

# The pointer helper the main package declares for optional fields and union alternatives.
PTR_HELPER = "ptr"
# Names the generated main package uses itself, plus every package name the model's code may
# have imported for it automatically; a tool function must not shadow them.
RESERVED_FUNC_NAMES = frozenset(
    {"ctx", "err", "main", "init", "Run", "gocodert", "gocodetools", "context", PTR_HELPER, *STDLIB}
    | {"searchTools", "callTool"}  # run-time search helpers (render.RUNTIME_ALIASES)
)
DESCRIPTION_LIMIT = 4000
FIELD_DOC_LIMIT = 600
# JSON kinds, as rt.Branch.Kind spells them.
SCALAR_KINDS = ("string", "integer", "number", "boolean")
_KIND_GO = {"string": "string", "integer": "int", "number": "float64", "boolean": "bool"}
_GO_KIND = {go: kind for kind, go in _KIND_GO.items()}
_KIND_FIELD = {
    "string": "String",
    "integer": "Int",
    "number": "Float",
    "boolean": "Bool",
    "array": "List",
    "object": "Object",
}
_STRUCTURAL_KEYS = frozenset(
    "type properties items prefixItems additionalProperties patternProperties enum const $ref anyOf oneOf allOf".split()
)


@dataclass(frozen=True)
class Source:
    """Where a declaration comes from, for messages and warnings."""

    server: str
    tool: str
    pointer: str = ""

    def __str__(self) -> str:
        where = f"{self.server}.{self.tool}"
        return f"{where} at {self.pointer}" if self.pointer else where


@dataclass(frozen=True)
class Field:
    """A struct field. ``optional`` fields are tagged ``omitzero``; ``fill`` is a Go literal
    the bindings send when a required field is left at its zero value (a ``const``)."""

    name: str
    json_name: str
    type: str
    doc: tuple[str, ...]
    optional: bool
    fill: tuple[str, str] | None = None  # (zero literal, value literal)
    # For the model view: the description (or title) on one line, empty when it only restates
    # the name; and the notes (default, format, bounds, "One of …") shown after it.
    desc: str = ""
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class StructDecl:
    name: str
    doc: tuple[str, ...]
    fields: tuple[Field, ...]
    source: Source

    @property
    def fills(self) -> tuple[tuple[Field, str, str], ...]:
        """(field, zero test, value) for what MarshalJSON fills in: required slices and maps go
        out as ``[]``/``{}`` when nil, never ``null`` (servers validate required arrays); a
        required ``const`` left empty goes out as its value."""
        out: list[tuple[Field, str, str]] = []
        for f in self.fields:
            if f.optional:
                continue
            if f.type.startswith(("[]", "map[")):
                out.append((f, "nil", f.type + "{}"))
            elif f.fill is not None:
                out.append((f, *f.fill))
        return tuple(out)


@dataclass(frozen=True)
class EnumValue:
    name: str
    literal: str


@dataclass(frozen=True)
class EnumDecl:
    name: str
    doc: tuple[str, ...]
    base: str
    values: tuple[EnumValue, ...]
    source: Source


@dataclass(frozen=True)
class TypeDecl:
    """``type Name <type>``: a defined type for a non-struct schema (map, slice, basic)."""

    name: str
    doc: tuple[str, ...]
    type: str
    source: Source
    # Declared for the program only, not shown to the model: a name a program may guess (a
    # tool's own Input/Output name, a field's type named for the field) kept as an alias of the
    # type declared under another name, with an enum's constants under the guessed name.
    hidden: bool = False
    consts: tuple[EnumValue, ...] = ()

    @property
    def alias(self) -> bool:
        """A second name for another declared type (``type A = B``), so B's methods stay."""
        return (self.type[:1].isupper() and self.type.isidentifier()) or self.type.startswith("gocodert.")


@dataclass(frozen=True)
class Variant:
    """One alternative of a union: a field ``name`` of ``type`` (a pointer, slice or map, so
    nil means "not this one"), chosen when decoding a JSON value of ``kind`` that has every
    ``required`` key and the ``consts`` (key → JSON literal, as a Go string literal)."""

    name: str
    type: str
    kind: str
    required: tuple[str, ...] = ()
    consts: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class UnionDecl:
    name: str
    doc: tuple[str, ...]
    variants: tuple[Variant, ...]
    source: Source


@dataclass(frozen=True)
class TupleDecl:
    """A JSON array with a type per position: fields ``Item0``…, then ``Rest`` if more may follow."""

    name: str
    doc: tuple[str, ...]
    items: tuple[Field, ...]
    rest: str | None
    source: Source


Decl = StructDecl | EnumDecl | TypeDecl | UnionDecl | TupleDecl


@dataclass(frozen=True)
class ToolFunc:
    """One tool as a Go function: ``name`` is what the model calls, ``exported`` its twin in the
    bindings package. ``input_type`` is None for a tool without input properties; ``structured``
    is False for a tool without ``outputSchema``, which returns its text as a ``string``."""

    name: str
    exported: str
    server: str
    tool: str
    doc: tuple[str, ...]
    input_type: str | None
    output_type: str
    structured: bool
    decls: tuple[Decl, ...]
    # A tool that returns images, audio or other non-text parts: output_type is MEDIA_TYPE.
    media: bool = False


@dataclass(frozen=True)
class Package:
    """The Go view of a tool set: per tool its declarations and function, in a stable order."""

    funcs: tuple[ToolFunc, ...]
    warnings: tuple[str, ...] = ()
    digest: str = ""

    @property
    def decls(self) -> tuple[Decl, ...]:
        return tuple(d for f in self.funcs for d in f.decls)

    def uses_json(self) -> bool:
        """Whether the bindings need encoding/json (a struct with a MarshalJSON method)."""
        return any(isinstance(d, StructDecl) and d.fills for d in self.decls)

    def uses_ptr(self) -> bool:
        """Whether a declaration has a pointer the model fills in (so ``ptr`` is offered)."""
        for d in self.decls:
            if isinstance(d, UnionDecl):
                return True
            if isinstance(d, StructDecl) and any(f.type.startswith("*") for f in d.fields):
                return True
        return False


# --- building ---------------------------------------------------------------------------------


@dataclass
class _ToolCtx:
    info: ToolInfo
    root: dict[str, Any]
    decls: list[Decl] = field(default_factory=list)
    in_progress: dict[str, str] = field(default_factory=dict)  # def pointer -> type expression
    inlining: set[str] = field(default_factory=set)  # refs being expanded in place (cycle guard)


class _Builder:
    def __init__(self) -> None:
        self.types = Registry({"Run", "ToolMatch"})
        self.warnings: list[str] = []
        # Identical $defs (same server, same name, same schema) are declared once.
        self.defs: dict[tuple[str, str, str], str] = {}
        # (Content, Media) type names when some tool returns non-text parts.
        self.media_names: tuple[str, str] | None = None
        self.media_declared = False

    def warn(self, src: Source, msg: str) -> None:
        self.warnings.append(f"{src}: {msg}")

    # Entry: one schema -> a Go type expression, declaring named types as needed.
    def type_of(
        self, ctx: _ToolCtx, schema: Any, hint: str, pointer: str, name: str | None = None
    ) -> tuple[str, list[str]]:
        """Returns (type expression, extra doc lines for the field using it). ``name``, when
        given, is already claimed and must be the declared type's name."""
        src = Source(ctx.info.server, ctx.info.name, pointer)
        if schema is True or schema == {} or schema is None:
            return "any", []
        if schema is False:
            return "any", ["(schema allows no value)"]
        if not isinstance(schema, dict):
            self.warn(src, f"schema is a {type(schema).__name__}, not an object; using any")
            return "any", []

        if "$ref" in schema:
            return self.ref(ctx, schema, hint, pointer)

        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list):
                if _constraints_only(schema[key]):  # e.g. "at least one of a or b": no new shape
                    rest = {k: v for k, v in schema.items() if k != key}
                    return self.type_of(ctx, rest, hint, pointer, name)
                branches = self.branches(ctx, schema, key, pointer)
                values = _listed_values(schema[key], [b for b, _ in branches])
                if values is not None and len(branches) > 1:
                    # Each alternative one value ({"const": "fast"} | {"const": "slow"}): an enum.
                    rest = {k: v for k, v in schema.items() if k != key}
                    meanings = _value_meanings([b for b, _ in branches])
                    if meanings:
                        rest["description"] = " ".join(filter(None, [_text(rest.get("description")), meanings]))
                    return self.type_of(ctx, {**rest, "enum": values}, hint, pointer, name)
                if len(branches) == 1:
                    inner, inner_ptr = branches[0]
                    return self.type_of(ctx, inner, hint, inner_ptr, name)
                if not branches:
                    return "any", ["Always null."]
                return self.union(ctx, schema, branches, hint, pointer, name)
        if "allOf" in schema:
            merged = self.merge_all_of(ctx, schema)
            if merged is not None:
                return self.type_of(ctx, merged, hint, pointer, name)
            return "any", ["All of several schemas (see the tool's JSON Schema)."]

        types = schema.get("type")
        if isinstance(types, list):
            non_null = list(dict.fromkeys(t for t in types if t != "null"))
            if len(non_null) == 1:
                types = non_null[0]
            elif not non_null:
                return "any", ["Always null."]
            else:
                branches = [({**schema, "type": t}, pointer) for t in non_null]
                return self.union(ctx, schema, branches, hint, pointer, name)
        if types is None:
            types = _infer_type(schema)

        if "const" in schema:
            return _basic_for_value(schema["const"]), [f"Always {_json(schema['const'])}."]
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            return self.enum(ctx, schema, hint, src, name)

        if types == "object":
            return self.object(ctx, schema, hint, pointer, name)
        if types == "array":
            return self.array(ctx, schema, hint, pointer, name)
        if types in _KIND_GO:
            return _KIND_GO[types], []
        if types == "null":
            return "any", ["Always null."]
        if types is not None:
            self.warn(src, f"unknown JSON type {types!r}; using any")
        return "any", []

    def ref(self, ctx: _ToolCtx, schema: dict[str, Any], hint: str, pointer: str) -> tuple[str, list[str]]:
        ref = schema["$ref"]
        src = Source(ctx.info.server, ctx.info.name, pointer)
        target = _resolve(ctx.root, ref) if isinstance(ref, str) else None
        if target is None:
            self.warn(src, f"cannot resolve $ref {ref!r}; using any")
            return "any", [f"Schema {_json(ref)} (unresolved)."]
        if ref in ctx.in_progress:  # recursion: refer to the type being declared
            return ctx.in_progress[ref], []
        def_name = ref.rsplit("/", 1)[-1] or "Root"
        if ref == "#" or not self.worth_naming(ctx, target):
            if ref in ctx.inlining:
                self.warn(src, f"$ref {ref!r} refers to itself without a named type; using any")
                return "any", []
            ctx.inlining.add(ref)
            try:
                return self.type_of(ctx, target, hint if ref == "#" else pascal(def_name), ref.lstrip("#"))
            finally:
                ctx.inlining.discard(ref)
        key = (ctx.info.server, def_name, json.dumps(target, sort_keys=True))
        if key in self.defs:
            return self.defs[key], []
        name = self.types.claim(pascal(def_name))
        self.defs[key] = name
        ctx.in_progress[ref] = "*" + name if _is_structlike(ctx, target) else name
        expr, notes = self.type_of(ctx, target, name, ref.lstrip("#"), name)
        del ctx.in_progress[ref]
        if expr != name:  # a slice, map or basic type: give it the name
            doc = _description(target) + notes
            ctx.decls.append(TypeDecl(name, _doc(name, doc), expr, Source(ctx.info.server, ctx.info.name, ref)))
        return name, []

    def worth_naming(self, ctx: _ToolCtx, schema: Any) -> bool:
        """Whether a ``$defs`` entry gets its own named type (rather than being inlined)."""
        if not isinstance(schema, dict):
            return False
        if _is_structlike(ctx, schema) or _has_enum(schema):
            return True
        kind = _kind_of(ctx.root, schema)
        return kind == "array" or (kind == "object" and isinstance(schema.get("additionalProperties"), dict))

    def branches(self, ctx: _ToolCtx, schema: dict[str, Any], key: str, pointer: str) -> list[tuple[Any, str]]:
        """The non-null alternatives of an anyOf/oneOf, nested ones flattened, the parent's
        own keywords (description, type, …) merged into each plain branch."""
        base = {k: v for k, v in schema.items() if k not in (key, "description", "title", "default", "examples")}
        out: list[tuple[Any, str]] = []
        for i, b in enumerate(schema[key]):
            bptr = f"{pointer}/{key}/{i}"
            if _is_null(b):
                continue
            if isinstance(b, dict) and set(b) <= {"anyOf", "oneOf", "description", "title"}:
                nested = "anyOf" if "anyOf" in b else "oneOf"
                if isinstance(b.get(nested), list) and not _constraints_only(b[nested]):
                    out.extend(self.branches(ctx, b, nested, bptr))
                    continue
            if isinstance(b, dict) and "$ref" not in b:
                b = {**base, **b}
            out.append((b, bptr))
        return out

    def union(
        self,
        ctx: _ToolCtx,
        schema: dict[str, Any],
        branches: list[tuple[Any, str]],
        hint: str,
        pointer: str,
        name: str | None,
    ) -> tuple[str, list[str]]:
        src = Source(ctx.info.server, ctx.info.name, pointer)
        kinds = [_kind_of(ctx.root, b) for b, _ in branches]
        listed = ", ".join(_describe_branch(b) for b, _ in branches)
        if None in kinds:  # an alternative that allows anything: the union does too
            return "any", [f"One of: {listed}."]
        # Scalars of one JSON kind cannot be told apart when decoding: one field per kind
        # (a number alternative absorbs integers).
        merged = ["number" if k == "integer" and "number" in kinds else k for k in kinds]
        counts = Counter(merged)
        kept: list[tuple[Any, str, str]] = []
        seen_scalar: set[str] = set()
        for (b, bptr), k in zip(branches, merged, strict=True):
            assert k is not None
            if k in SCALAR_KINDS:
                if k in seen_scalar:
                    continue
                seen_scalar.add(k)
                if counts[k] > 1:
                    b = {"type": k}
            kept.append((b, bptr, k))
        if len(kept) == 1:
            b, bptr, _ = kept[0]
            expr, notes = self.type_of(ctx, b, hint, bptr, name)
            return expr, [*notes, f"One of: {listed}."]
        name = name or self.types.claim(hint)
        fields = Registry()
        variants: list[Variant] = []
        for b, bptr, k in kept:
            vname = fields.claim(_variant_name(ctx.root, b, k))
            expr, _ = self.type_of(ctx, b, name + vname, bptr)
            if not expr.startswith(("*", "[]", "map[")) and expr != "any":
                expr = "*" + expr
            target = _resolve(ctx.root, b["$ref"]) if isinstance(b, dict) and isinstance(b.get("$ref"), str) else b
            required, consts = _object_keys(target) if k == "object" else ((), ())
            literals = tuple((key, go_string(json.dumps(v, separators=(",", ":")))) for key, v in consts)
            variants.append(Variant(vname, expr, k, required, literals))
        kinds_doc = ", ".join(v.name for v in variants)
        doc = [*_sentences(_description(schema)), f"One of {kinds_doc}: set exactly one field (none set is null)."]
        ctx.decls.append(UnionDecl(name, _doc(name, doc), tuple(variants), src))
        return name, []

    def enum(
        self, ctx: _ToolCtx, schema: dict[str, Any], hint: str, src: Source, name: str | None
    ) -> tuple[str, list[str]]:
        values = [v for v in schema["enum"] if v is not None]  # null: the field is nullable
        base = _common_basic(values)
        if not values or base == "bool":
            return base if values else "any", [f"One of {', '.join(_json(v) for v in schema['enum'])}."]
        if base == "any":
            return "any", [f"One of {', '.join(_json(v) for v in values)}."]
        name = name or self.types.claim(hint)
        consts = []
        for v in dict.fromkeys(values):  # keep order, drop duplicates
            if base == "string":
                cname, literal = name + (pascal(v) if v else "Empty"), go_string(v)
            else:
                cname, literal = name + _number_suffix(v), _number_literal(v)
            consts.append(EnumValue(self.types.claim(cname), literal))
        ctx.decls.append(EnumDecl(name, _doc(name, _description(schema)), base, tuple(consts), src))
        return name, []

    def object(
        self, ctx: _ToolCtx, schema: dict[str, Any], hint: str, pointer: str, name: str | None = None
    ) -> tuple[str, list[str]]:
        src = Source(ctx.info.server, ctx.info.name, pointer)
        props = schema.get("properties")
        if not isinstance(props, dict) or not props:
            return self.map_of(ctx, schema, hint, pointer)
        name = name or self.types.claim(hint)
        required = schema.get("required") if isinstance(schema.get("required"), list) else []
        missing = [r for r in required if isinstance(r, str) and r not in props]
        if missing:
            self.warn(src, f"required names not among the properties are ignored: {', '.join(missing)}")
        fields_reg = Registry()
        fields: list[Field] = []
        for prop, sub in props.items():
            if not _valid_tag_name(prop):
                self.warn(src, f"property {prop!r} cannot be named in a Go struct tag; it is left out")
                continue
            fname = fields_reg.claim(pascal(prop))
            expr, notes = self.type_of(ctx, sub, name + pascal(prop), f"{pointer}/properties/{_escape_ptr(prop)}")
            is_req = prop in required
            fill = _fill(ctx.root, sub) if is_req else None
            if not is_req and _needs_pointer(ctx.root, sub, expr):
                expr = "*" + expr
                notes = [*notes, f"Set with {PTR_HELPER}(v)."]
            doc = _field_doc(fname, prop, sub, notes, is_req)
            desc, view_notes = _field_view(prop, sub, notes)
            fields.append(Field(fname, prop, expr, doc, not is_req, fill, desc, view_notes))
        ctx.decls.append(StructDecl(name, _doc(name, _description(schema)), tuple(fields), src))
        return name, []

    def map_of(self, ctx: _ToolCtx, schema: dict[str, Any], hint: str, pointer: str) -> tuple[str, list[str]]:
        """An object without properties: a map of its additional (or pattern) property type."""
        extra = schema.get("additionalProperties")
        patterns = schema.get("patternProperties")
        if isinstance(patterns, dict) and patterns and extra in (None, False, True, {}):
            values = list(patterns.values())
            if extra not in (None, False):
                values.append(extra)
            if all(v == values[0] for v in values):
                elem, _ = self.type_of(ctx, values[0], hint + "Value", f"{pointer}/patternProperties")
                keys = ", ".join(_json(p) for p in patterns)
                return "map[string]" + elem.lstrip("*"), [f"Keys match {keys}."]
            return "map[string]any", [f"Keys match {', '.join(_json(p) for p in patterns)}."]
        if isinstance(extra, dict) and extra:
            elem, _ = self.type_of(ctx, extra, hint + "Value", f"{pointer}/additionalProperties")
            return "map[string]" + elem.lstrip("*"), []
        return "map[string]any", []

    def array(
        self, ctx: _ToolCtx, schema: dict[str, Any], hint: str, pointer: str, name: str | None
    ) -> tuple[str, list[str]]:
        prefix = schema.get("prefixItems")
        items = schema.get("items")
        rest: Any = items
        if isinstance(items, list):  # draft-07 tuple form
            prefix, rest = items, schema.get("additionalItems", True)
        if isinstance(prefix, list) and prefix:
            return self.tuple(ctx, schema, prefix, rest, hint, pointer, name)
        if isinstance(items, dict | bool) and items not in ({}, True):
            elem, notes = self.type_of(ctx, items, hint + "Item", f"{pointer}/items")
            return "[]" + elem.lstrip("*"), [n for n in notes if n.startswith(("One of", "Always"))]
        return "[]any", []

    def tuple(
        self,
        ctx: _ToolCtx,
        schema: dict[str, Any],
        prefix: list[Any],
        rest: Any,
        hint: str,
        pointer: str,
        name: str | None,
    ) -> tuple[str, list[str]]:
        key = "prefixItems" if "prefixItems" in schema else "items"
        rest_ptr = f"{pointer}/{'items' if key == 'prefixItems' else 'additionalItems'}"
        exprs = [self.type_of(ctx, p, f"{hint}Item{i}", f"{pointer}/{key}/{i}")[0] for i, p in enumerate(prefix)]
        rest_expr = None if rest is False else self.type_of(ctx, rest, hint + "Rest", rest_ptr)[0]
        if all(e == exprs[0] for e in exprs) and rest_expr in (None, exprs[0], "any"):
            # Same type at every position: a plain slice says it best.
            elem = exprs[0] if rest_expr != "any" or exprs[0] == "any" else "any"
            return "[]" + elem.lstrip("*"), [f"{len(prefix)} items."] if rest_expr is None else []
        name = name or self.types.claim(hint)
        items = tuple(Field(f"Item{i}", str(i), e.lstrip("*"), (), optional=False) for i, e in enumerate(exprs))
        rest_type = None if rest_expr is None else "[]" + rest_expr.lstrip("*")
        doc = [
            *_description(schema),
            f"A JSON array: {', '.join(f.name for f in items)}{', Rest…' if rest_type else ''}.",
        ]
        ctx.decls.append(
            TupleDecl(name, _doc(name, doc), items, rest_type, Source(ctx.info.server, ctx.info.name, pointer))
        )
        return name, []

    def merge_all_of(self, ctx: _ToolCtx, schema: dict[str, Any]) -> dict[str, Any] | None:
        """allOf of objects (after resolving refs) merges into one object; a single part merges
        into its parent; anything else is None."""
        parts = schema["allOf"] if isinstance(schema["allOf"], list) else [schema["allOf"]]
        merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
        resolved = []
        for part in parts:
            if isinstance(part, dict) and isinstance(part.get("$ref"), str):
                part = _resolve(ctx.root, part["$ref"])
            if not isinstance(part, dict):
                return None
            resolved.append(part)
        if len(resolved) == 1 and not merged.get("properties"):
            only = parts[0] if isinstance(parts[0], dict) else {}
            if isinstance(only.get("$ref"), str):  # allOf: [$ref] is pydantic's "$ref with siblings"
                return {**merged, "$ref": only["$ref"]}
            return {**resolved[0], **{k: v for k, v in merged.items() if k != "type"}}
        props: dict[str, Any] = dict(merged.get("properties", {}) or {})
        required: list[str] = list(merged.get("required", []) or [])
        for part in resolved:
            if part.get("type", "object") != "object" and not part.get("properties"):
                return None
            props.update(part.get("properties", {}) or {})
            required.extend(r for r in part.get("required", []) or [] if r not in required)
            if "description" in part and "description" not in merged:
                merged["description"] = part["description"]
        merged.update(type="object", properties=props, required=required)
        return merged

    # One tool -> its function and declarations.
    def tool(self, info: ToolInfo, func_name: str, exported: str) -> ToolFunc:
        schema = info.input_schema if isinstance(info.input_schema, dict) else {}
        ctx_in = _ToolCtx(info, schema)
        base = pascal(func_name)
        input_type: str | None = None
        if _has_input(schema):
            name = self.types.claim(base + "Input")
            ctx_in.in_progress["#"] = "*" + name
            input_type, notes = self.type_of(ctx_in, {**schema, "type": "object"}, name, "/inputSchema", name)
            if input_type != name:
                ctx_in.decls.append(
                    TypeDecl(
                        name, _doc(name, notes or ["Arguments (any keys)."]), input_type, Source(info.server, info.name)
                    )
                )
                input_type = name
        decls = list(ctx_in.decls)
        structured = isinstance(info.output_schema, dict)
        if structured:
            assert info.output_schema is not None
            ctx_out = _ToolCtx(info, info.output_schema)
            name = self.types.claim(base + "Output")
            ctx_out.in_progress["#"] = "*" + name if _is_structlike(ctx_out, info.output_schema) else name
            expr, notes = self.type_of(ctx_out, info.output_schema, name, "/outputSchema", name)
            if expr != name:
                doc = _description(info.output_schema) + notes or ["The tool's structured result."]
                ctx_out.decls.append(TypeDecl(name, _doc(name, doc), expr, Source(info.server, info.name)))
            decls.extend(ctx_out.decls)
            output_type = name
        elif self.media_names and returns_media(info):
            output_type = self.media_names[0]
            if not self.media_declared:
                self.media_declared = True
                src = Source(info.server, info.name)
                content, media = self.media_names
                decls.append(TypeDecl(content, _doc(content, [MEDIA_DOC]), RT_CONTENT, src))
                decls.append(TypeDecl(media, _doc(media, [MEDIA_PART_DOC]), RT_MEDIA, src))
        else:
            output_type = "string"
        desc = clean_text(info.description or info.title or "", DESCRIPTION_LIMIT)
        doc = _doc(func_name, desc or ["(no description)"])
        return ToolFunc(
            func_name,
            exported,
            info.server,
            info.name,
            doc,
            input_type,
            output_type,
            structured,
            tuple(decls),
            media=output_type == (self.media_names or ("",))[0],
        )


def build_package(toolset: ToolSet) -> Package:
    """The Go IR for every tool of a tool set (see the module doc for the guarantees)."""
    b = _Builder()
    tools = toolset.tools()
    # Function names: a tool name unique across servers keeps its plain name; a clash prefixes
    # every clashing tool with its server's name, so the result does not depend on order.
    counts: dict[str, int] = {}
    for t in tools:
        counts[camel(t.name)] = counts.get(camel(t.name), 0) + 1
    funcs_reg = Registry(set(GO_KEYWORDS) | set(GO_PREDECLARED) | set(RESERVED_FUNC_NAMES))
    plan: list[tuple[ToolInfo, str]] = []
    for t in tools:
        base = camel(t.name) if counts[camel(t.name)] == 1 else camel(f"{t.server}_{t.name}")
        if base in GO_KEYWORDS or base in GO_PREDECLARED or base in RESERVED_FUNC_NAMES:
            base += "Tool"
        name = funcs_reg.claim(base)
        if name != base:
            b.warnings.append(f"{t.server}.{t.name}: Go name {base!r} is taken; using {name!r}")
        plan.append((t, name))
    # Type names of all functions first, so a tool named like another tool's type loses the
    # suffix, not the other way round depending on order.
    for _, name in plan:
        b.types.claim(export(name))
    if any(not isinstance(t.output_schema, dict) and returns_media(t) for t in tools):
        b.media_names = (b.types.claim("Content"), b.types.claim("Media"))
    funcs = [b.tool(t, name, export(name)) for t, name in plan]
    shared = _name_shared(_dedupe(funcs), b.types, funcs)
    kept = _guessed_field_types(_keep_tool_type_names(funcs, shared), b.types)
    return Package(tuple(kept), tuple(b.warnings), toolset.digest())


# --- one declaration per shape ------------------------------------------------------------------


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


def _dedupe(funcs: list[ToolFunc]) -> list[ToolFunc]:
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
                    if isinstance(d, EnumDecl) and _doc_text(d) != _doc_text(first[key]):
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


def _name_shared(funcs: list[ToolFunc], types: Registry, before: list[ToolFunc]) -> list[ToolFunc]:
    """An input or output shape that several tools share is not named for whichever tool
    happened to come first: a small one is named for its fields (``PathInput``,
    ``ContentOutput``), a larger one for the most general of its tools, the one with the
    shortest name (``GetPullRequestInput``, not ``DeletePendingPullRequestReviewInput``)."""
    users: Counter[str] = Counter()
    role: dict[str, str] = {}
    owners: dict[str, list[str]] = {}  # shared type -> its tools' own type names
    for old, f in zip(before, funcs, strict=True):
        for t, suffix, was in ((f.input_type, "Input", old.input_type), (f.output_type, "Output", old.output_type)):
            if t:
                users[t] += 1
                role.setdefault(t, suffix)
                if was:
                    owners.setdefault(t, []).append(was)
    structs = {d.name: d for f in funcs for d in f.decls if isinstance(d, StructDecl)}
    declared = {d.name for f in funcs for d in f.decls}
    names: dict[str, str] = {}
    for name, n in users.items():
        d = structs.get(name)
        if n < 2 or d is None or not name.endswith(role[name]):
            continue
        if len(d.fields) <= 2:
            wanted = "".join(f.name for f in d.fields) + role[name]
            if d.fields and types.claim(wanted) == wanted:
                names[name] = wanted
            continue
        general = min(owners.get(name, [name]), key=len)  # the first of the shortest
        if general != name and general not in declared and general not in names.values():
            names[name] = general
    if not names:
        return funcs

    def doc(d: Decl) -> tuple[str, ...]:
        if not d.doc or d.name not in names:
            return d.doc
        return (names[d.name] + d.doc[0][len(d.name) :], *d.doc[1:])

    return [
        replace(
            f,
            decls=tuple(replace(_rename(d, names), name=names.get(d.name, d.name), doc=doc(d)) for d in f.decls),
            input_type=f.input_type and _subst(f.input_type, names),
            output_type=_subst(f.output_type, names),
        )
        for f in funcs
    ]


def _keep_tool_type_names(before: list[ToolFunc], after: list[ToolFunc]) -> list[ToolFunc]:
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


def _guessed_field_types(funcs: list[ToolFunc], types: Registry) -> list[ToolFunc]:
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

RT_CONTENT = "gocodert.Content"
RT_MEDIA = "gocodert.Media"
MEDIA_DOC = "A result that may hold images, audio or other non-text parts."
MEDIA_PART_DOC = "One non-text part: its MIME type and raw bytes (decoded from base64)."
_MEDIA_WORDS = frozenset("image images screenshot screenshots picture photo audio thumbnail".split())
_FETCH_WORDS = frozenset("get take capture fetch read render download export screenshot".split())
_MEDIA_DESC = re.compile(r"(?i)\b(returns?|captures?)\b[^.|]{0,25}?\b(images?|screenshots?|audio|png|jpe?g)\b")


def returns_media(info: ToolInfo) -> bool:
    """Whether a tool without an output schema is expected to answer with non-text parts: its
    name fetches an image or audio (``get_tiny_image``, ``take_screenshot``) or its first
    sentence says it returns one. MCP has no declaration for this; a wrong guess costs little,
    since Content carries the text as well."""
    if isinstance(info.output_schema, dict):
        return False
    named = [w.lower() for w in words(info.name)]
    if "screenshot" in named or (_MEDIA_WORDS & set(named) and _FETCH_WORDS & set(named)):
        return True
    first = (info.description or "").split(". ", 1)[0]
    return bool(_MEDIA_DESC.search(first))


# --- helpers ----------------------------------------------------------------------------------


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _description(schema: Any) -> list[str]:
    """A schema's own description as comment lines (empty when it has none or it is not text)."""
    desc = schema.get("description") if isinstance(schema, dict) else None
    return clean_text(desc, FIELD_DOC_LIMIT) if isinstance(desc, str) else []


def _sentences(lines: list[str]) -> list[str]:
    """Description lines ending a sentence, so that a note after them reads as a new one."""
    if lines and not lines[-1].rstrip().endswith((".", "!", "?", ":", "…")):
        return [*lines[:-1], lines[-1].rstrip() + "."]
    return lines


def _doc(name: str, lines: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Doc comment lines starting with the declared name, as Go convention wants."""
    lines = list(lines)
    if not lines:
        return ()
    return (f"{name} {lines[0]}", *lines[1:])


def _doc_text(d: Decl) -> tuple[str, ...]:
    """A declaration's doc comment without the leading name (_doc adds it)."""
    return (d.doc[0][len(d.name) :].lstrip(), *d.doc[1:]) if d.doc else ()


def _short(value: Any, limit: int = 120) -> str:
    return " ".join(clean_text(_json(value), limit))


def _short_values(values: list[Any], limit: int) -> str:
    """Values as a list a reader scans (``"a", "b", …``), cut between values near ``limit``."""
    shown: list[str] = []
    for v in values:
        if shown and sum(len(x) + 2 for x in shown) + len(_json(v)) > limit:
            return ", ".join(shown) + ", …"
        shown.append(_short(v, limit))
    return ", ".join(shown)


def _field_doc(fname: str, prop: str, schema: Any, notes: list[str], required: bool) -> tuple[str, ...]:
    """``Name Description. Notes (optional; default x; format y; >= 1)``, in one or a few lines."""
    desc = ""
    extras: list[str] = [] if required else ["optional"]
    if isinstance(schema, dict):
        if isinstance(schema.get("description"), str):
            desc = schema["description"]
        elif isinstance(schema.get("title"), str):
            desc = schema["title"]
        if "default" in schema:
            extras.append("default " + _short(schema["default"]))
        extras.extend(_constraints(schema))
    lines = clean_text(desc, FIELD_DOC_LIMIT) or [f"is the {comment_literal(prop)} property."]
    tail = " ".join([*notes, f"({'; '.join(extras)})" if extras else ""]).strip()
    if tail:
        lines[-1] = f"{lines[-1]} {tail}"
    return _doc(fname, lines)


def _constraints(schema: dict[str, Any]) -> list[str]:
    """A property's format, bounds, pattern and examples, as short notes for its comment."""
    out: list[str] = []
    if isinstance(schema.get("format"), str):
        out.append("format " + " ".join(clean_text(schema["format"], 60)))
    for key, op in (("minimum", ">="), ("exclusiveMinimum", ">"), ("maximum", "<="), ("exclusiveMaximum", "<")):
        if isinstance(schema.get(key), int | float) and not isinstance(schema[key], bool):
            out.append(f"{op} {_json(schema[key])}")
    if isinstance(schema.get("pattern"), str) and len(schema["pattern"]) <= 60:
        out.append("pattern " + _short(schema["pattern"]))
    examples = schema.get("examples")
    if isinstance(examples, list) and examples:
        out.append("e.g. " + ", ".join(_short(e, 60) for e in examples[:2]))
    elif "example" in schema:
        out.append("e.g. " + _short(schema["example"], 60))
    return out


def _says_default(desc: str, note: str) -> bool:
    """Whether a description already states the default a note would add (``default 20``,
    ``Default: 20``, ``defaults to "x"``), so the view does not say it twice."""
    value = note.removeprefix("default ").strip('"').lower()
    text = desc.lower().replace('"', "").replace("'", "").replace("`", "")
    return bool(re.search(rf"\bdefault(?:s to|:| is| =)?\s*{re.escape(value)}\b", text))


_FILLER_WORDS = frozenset("a an the of is to for this that value property field parameter param".split())


def one_line(text: str, limit: int = FIELD_DOC_LIMIT) -> str:
    """Untrusted prose as one comment-safe line, whitespace collapsed."""
    return " ".join(" ".join(clean_text(text, limit)).split())


def restates(text: str, *names: str) -> bool:
    """Whether a description says nothing but the name (``Repo Path`` for ``repo_path``)."""
    said = {w.lower() for w in words(text)} - _FILLER_WORDS
    named = {w.lower() for n in names for w in words(n)}
    return said <= named


def _field_view(prop: str, schema: Any, notes: list[str]) -> tuple[str, tuple[str, ...]]:
    """A field's description and notes for the model view: no "optional" (the view marks
    required fields instead), no pointer hint (``ptr`` is declared once), nothing that only
    restates the property's name."""
    desc = ""
    extras: list[str] = [n for n in notes if not n.startswith("Set with ")]
    if isinstance(schema, dict):
        for key in ("description", "title"):
            text = schema.get(key)
            if isinstance(text, str) and one_line(text) and not restates(text, prop):
                desc = one_line(text)
                break
        # A default equal to Go's zero value is what leaving the field out means anyway.
        if "default" in schema and schema["default"] not in (None, False, 0, "", [], {}):
            note = "default " + _short(schema["default"])
            if not _says_default(desc, note):  # "(default 20)" already in the description
                extras.append(note)
        extras.extend(_constraints(schema))
    return desc, tuple(one_line(e) for e in extras)


def _has_input(schema: dict[str, Any]) -> bool:
    props = schema.get("properties")
    if isinstance(props, dict) and props:
        return True
    if any(isinstance(schema.get(k), list | dict) for k in ("allOf", "anyOf", "oneOf", "$ref")):
        return True
    extra = schema.get("additionalProperties")
    patterns = schema.get("patternProperties")
    return (isinstance(extra, dict) and bool(extra)) or (isinstance(patterns, dict) and bool(patterns))


def _is_null(schema: Any) -> bool:
    return isinstance(schema, dict) and (
        schema.get("type") == "null" or ("const" in schema and schema["const"] is None) or schema.get("enum") == [None]
    )


_ANNOTATION_KEYS = frozenset({"type", "title", "description", "examples", "$comment"})


def _listed_values(raw: list[Any], branches: list[Any]) -> list[Any] | None:
    """The values of anyOf/oneOf alternatives that each allow only listed values (``const`` or
    ``enum`` of scalars, besides annotations), in order, ``None`` last when one alternative is
    null; else None (a real union)."""
    values: list[Any] = []
    for b in branches:
        if not isinstance(b, dict) or "$ref" in b:
            return None
        if "const" in b:
            got = [b["const"]]
        elif isinstance(b.get("enum"), list) and b["enum"]:
            got = b["enum"]
        else:
            return None
        if set(b) - _ANNOTATION_KEYS - {"const", "enum"} or not all(
            v is None or isinstance(v, (str, int, float)) for v in got
        ):
            return None
        values.extend(got)
    if any(_is_null(b) for b in raw):
        values.append(None)
    return list(dict.fromkeys(values)) or None


def _value_meanings(branches: list[Any]) -> str:
    """What one-value alternatives say of their value (title or description), as one sentence."""
    said = []
    for b in branches:
        text = b.get("description") if isinstance(b.get("description"), str) else b.get("title")
        if "const" in b and isinstance(text, str) and text.strip():
            said.append(f"{_json(b['const'])}: {' '.join(text.split()).rstrip('.')}")
    return "; ".join(said) + "." if said else ""


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _constraints_only(branches: Any) -> bool:
    """anyOf/oneOf branches that only add constraints (``required``, ``minItems``…) to their
    parent's shape, as in "give a or b": no alternative shape, so no union."""
    return isinstance(branches, list) and all(
        isinstance(b, dict) and b and not (_STRUCTURAL_KEYS & set(b)) for b in branches
    )


def _has_enum(schema: dict[str, Any]) -> bool:
    values = schema.get("enum")
    if not isinstance(values, list):
        return False
    kinds = {_basic_for_value(v) for v in values if v is not None}
    return bool(kinds) and (kinds == {"string"} or kinds <= {"int", "float64"})


def _kind_of(root: dict[str, Any], schema: Any, depth: int = 0) -> str | None:
    """The one JSON kind a schema's values have ("string", "integer", …, "object"), or None
    when it allows several or anything."""
    if depth > 20 or not isinstance(schema, dict):
        return None
    if isinstance(schema.get("$ref"), str):
        return _kind_of(root, _resolve(root, schema["$ref"]), depth + 1)
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and not _constraints_only(schema[key]):
            kinds = {_kind_of(root, b, depth + 1) for b in schema[key] if not _is_null(b)}
            if kinds == {"integer", "number"}:
                return "number"
            return kinds.pop() if len(kinds) == 1 else None
    if isinstance(schema.get("allOf"), list) and schema["allOf"]:
        kinds = {_kind_of(root, b, depth + 1) for b in schema["allOf"]} - {None}
        return kinds.pop() if len(kinds) == 1 else ("object" if "properties" in schema else None)
    t = schema.get("type")
    if isinstance(t, list):
        non_null = {x for x in t if x != "null"}
        t = non_null.pop() if len(non_null) == 1 else None
        if t is None:
            return "number" if non_null == {"integer", "number"} else None
    if t is None and "const" in schema:
        t = _GO_KIND.get(_basic_for_value(schema["const"]))
    if t is None:
        t = _infer_type(schema)
    return t if t in (*SCALAR_KINDS, "array", "object") else None


def _is_structlike(ctx: _ToolCtx, schema: Any) -> bool:
    """Whether a schema may become a Go struct (object, union, tuple), so that a recursive
    reference to it must be a pointer. Errs towards True: a needless pointer still compiles."""
    if not isinstance(schema, dict):
        return False
    kind = _kind_of(ctx.root, schema)
    if kind in SCALAR_KINDS:
        return False
    if kind == "array":
        return isinstance(schema.get("prefixItems"), list) or isinstance(schema.get("items"), list)
    if kind == "object":
        return (isinstance(schema.get("properties"), dict) and bool(schema["properties"])) or "allOf" in schema
    return True


def _variant_name(root: dict[str, Any], schema: Any, kind: str) -> str:
    """A union field's name: the $ref'd definition, the title, a discriminator value or the kind."""
    if isinstance(schema, dict):
        if isinstance(schema.get("$ref"), str):
            return pascal(schema["$ref"].rsplit("/", 1)[-1])
        if isinstance(schema.get("title"), str) and schema["title"].strip():
            return pascal(schema["title"])
        if kind == "object":
            consts = _object_keys(schema)[1]
            if len(consts) == 1 and isinstance(consts[0][1], str) and consts[0][1]:
                return pascal(consts[0][1])
    return _KIND_FIELD[kind]


def _object_keys(schema: Any) -> tuple[tuple[str, ...], tuple[tuple[str, Any], ...]]:
    """An object alternative's required keys and its discriminators (required properties with a
    single allowed value)."""
    if not isinstance(schema, dict):
        return (), ()
    props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    required = tuple(r for r in schema.get("required", []) or [] if isinstance(r, str) and r in props)
    consts: list[tuple[str, Any]] = []
    for r in required:
        sub = props[r]
        if isinstance(sub, dict):
            if "const" in sub:
                consts.append((r, sub["const"]))
            elif isinstance(sub.get("enum"), list) and len(sub["enum"]) == 1:
                consts.append((r, sub["enum"][0]))
    return required, tuple(consts)


def _needs_pointer(root: dict[str, Any], schema: Any, expr: str) -> bool:
    """An optional scalar whose zero value (``false``, ``0``, ``""``) would mean something else
    than leaving it out — its schema default is not zero, or it is a boolean without a default
    of false — is a pointer: nil leaves it out, ``ptr(false)`` sends false."""
    if not isinstance(schema, dict) or expr.startswith(("*", "[]", "map[")):
        return False
    if "default" not in schema:
        # false is rarely "absent": a settings flag must be able to turn something off. An enum
        # (or const) with a 0 or "" member: omitzero would drop that member, never sending it.
        return expr == "bool" or (_has_zero_member(root, schema) and expr != "any")
    default = schema["default"]
    if default is None or default is False or default == "" or (_is_number(default) and default == 0):
        return False
    values = _enum_values(root, schema)
    if values is not None and not any(v in ("", 0) and v is not False for v in values):
        return False  # an enum without a zero member: leaving it zero can only mean "absent"
    return _kind_of(root, schema) in SCALAR_KINDS and expr != "any"


def _has_zero_member(root: dict[str, Any], schema: dict[str, Any]) -> bool:
    values = [schema["const"]] if "const" in schema else _enum_values(root, schema)
    return values is not None and any(v == "" or (_is_number(v) and v == 0) for v in values)


def _enum_values(root: dict[str, Any], schema: Any, depth: int = 0) -> list[Any] | None:
    """The enum a schema restricts to, looking through $ref, a one-part allOf and null branches."""
    if depth > 20 or not isinstance(schema, dict):
        return None
    if isinstance(schema.get("enum"), list):
        return schema["enum"]
    if isinstance(schema.get("$ref"), str):
        return _enum_values(root, _resolve(root, schema["$ref"]), depth + 1)
    for key in ("allOf", "anyOf", "oneOf"):
        parts = [p for p in schema.get(key) or [] if not _is_null(p)] if isinstance(schema.get(key), list) else []
        if len(parts) == 1:
            return _enum_values(root, parts[0], depth + 1)
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _fill(root: dict[str, Any], schema: Any) -> tuple[str, str] | None:
    """(zero, value) literals for a required field that can hold one value only (a ``const`` or
    a one-member ``enum``): the bindings send that value when the model leaves the field zero."""
    if not isinstance(schema, dict):
        return None
    if "const" in schema:
        value = schema["const"]
    else:
        values = _enum_values(root, schema)
        if not values or len(values) != 1:
            return None
        value = values[0]
    if isinstance(value, str) and value:
        return '""', go_string(value)
    if _is_number(value) and value != 0 and math.isfinite(value):
        return "0", _number_literal(value)
    return ("false", "true") if value is True else None


def _number_literal(value: int | float) -> str:
    text = json.dumps(value)
    return text if math.isfinite(value) else "0"


def _number_suffix(value: int | float) -> str:
    """An enum constant's suffix for a number: ``1`` → 1, ``-2.5`` → Neg2_5."""
    text = json.dumps(value).replace("+", "")
    text = text.replace("-", "Neg").replace(".", "_")
    return "".join(c if c.isalnum() or c == "_" else "_" for c in text)


def _describe_branch(schema: Any) -> str:
    if isinstance(schema, dict):
        if "$ref" in schema and isinstance(schema["$ref"], str):
            return (clean_text(schema["$ref"].rsplit("/", 1)[-1], 60) or ["object"])[0]
        if "const" in schema:
            return _short(schema["const"], 60)
        if isinstance(schema.get("enum"), list):
            return _short_values(schema["enum"], 60)
        if isinstance(schema.get("title"), str):
            return (clean_text(schema["title"], 60) or ["object"])[0]
        t = schema.get("type")
        if isinstance(t, str):
            return t
    return "any"


def _infer_type(schema: dict[str, Any]) -> str | None:
    if "properties" in schema or "additionalProperties" in schema or "patternProperties" in schema:
        return "object"
    if "items" in schema or "prefixItems" in schema:
        return "array"
    if isinstance(schema.get("enum"), list):
        kinds = {_basic_for_value(v) for v in schema["enum"] if v is not None}
        if kinds == {"int", "float64"}:
            return "number"
        if len(kinds) == 1:
            return _GO_KIND.get(kinds.pop())
    return None


def _basic_for_value(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    return "any"


def _common_basic(values: list[Any]) -> str:
    kinds = {_basic_for_value(v) for v in values}
    if kinds == {"int", "float64"}:
        return "float64"
    return kinds.pop() if len(kinds) == 1 else "any"


def _resolve(root: dict[str, Any], ref: str) -> Any:
    """A local JSON pointer ``#/...`` inside ``root``; None when it is remote or missing."""
    if ref == "#":
        return root
    if not ref.startswith("#/"):
        return None
    node: Any = root
    for raw in ref[2:].split("/"):
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def _escape_ptr(s: str) -> str:
    return s.replace("~", "~0").replace("/", "~1")


_TAG_OK = set("!#$%&()*+-./:;<=>?@[]^_{|}~ ")


def _valid_tag_name(name: str) -> bool:
    """Whether encoding/json accepts ``name`` as a tag name (its isValidTag), and it is printable."""
    if not name:
        return False
    return all(c in _TAG_OK or unicodedata.category(c)[0] == "L" or unicodedata.category(c) == "Nd" for c in name)
