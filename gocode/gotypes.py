"""JSON Schema → a small Go intermediate representation (types, enums, tool functions).

Pure and deterministic: the same :class:`~gocode.toolset.ToolSet` gives the same
:class:`Package`, whatever order the servers listed their tools in. Imports neither jinja2
nor mcp; :mod:`gocode.render` turns the IR into source.

Every schema maps to something that compiles. What Go cannot say exactly falls back to the
nearest usable type with the reason in the doc comment and a warning (see docs/schema.md):
unions other than "X or null" and unresolvable ``$ref`` become ``any``; enums of
non-strings keep their base type and list the values in the comment.
"""

from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from gocode.modelcode import STDLIB
from gocode.names import (
    GO_KEYWORDS,
    GO_PREDECLARED,
    Registry,
    camel,
    clean_text,
    export,
    go_string,
    pascal,
)
from gocode.toolset import ToolInfo, ToolSet

# Names the generated main package uses itself, plus every package name the model's code may
# have imported for it automatically; a tool function must not shadow them.
RESERVED_FUNC_NAMES = frozenset({"ctx", "err", "main", "init", "Run", "gocodert", "gocodetools", "context", *STDLIB})
DESCRIPTION_LIMIT = 4000
FIELD_DOC_LIMIT = 600


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
    name: str
    json_name: str
    type: str
    doc: tuple[str, ...]
    omitempty: bool


@dataclass(frozen=True)
class StructDecl:
    name: str
    doc: tuple[str, ...]
    fields: tuple[Field, ...]
    source: Source

    @property
    def nil_defaults(self) -> tuple[Field, ...]:
        """Required slice and map fields: sent as ``[]``/``{}`` when nil, never as ``null``
        (servers validate required arrays, and a nil Go slice is the natural "empty")."""
        return tuple(f for f in self.fields if not f.omitempty and f.type.startswith(("[]", "map[")))


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


Decl = StructDecl | EnumDecl | TypeDecl


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
        return any(isinstance(d, StructDecl) and d.nil_defaults for d in self.decls)


# --- building ---------------------------------------------------------------------------------


@dataclass
class _ToolCtx:
    info: ToolInfo
    root: dict[str, Any]
    decls: list[Decl] = field(default_factory=list)
    in_progress: dict[str, str] = field(default_factory=dict)  # def pointer -> type name


class _Builder:
    def __init__(self) -> None:
        self.types = Registry({"Run"})
        self.warnings: list[str] = []
        # Identical $defs (same server, same name, same schema) are declared once.
        self.defs: dict[tuple[str, str, str], str] = {}

    def warn(self, src: Source, msg: str) -> None:
        self.warnings.append(f"{src}: {msg}")

    # Entry: one schema -> a Go type expression, declaring named types as needed.
    def type_of(self, ctx: _ToolCtx, schema: Any, hint: str, pointer: str) -> tuple[str, list[str]]:
        """Returns (type expression, extra doc lines for the field using it)."""
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

        notes: list[str] = []
        for key in ("anyOf", "oneOf"):
            if key in schema and isinstance(schema[key], list):
                branches = [b for b in schema[key] if not _is_null(b)]
                if len(branches) == 1:
                    merged = {k: v for k, v in schema.items() if k != key}
                    inner = branches[0]
                    if isinstance(inner, dict):
                        merged = {**merged, **inner} if "$ref" not in inner else inner
                    return self.type_of(ctx, merged, hint, f"{pointer}/{key}/{schema[key].index(branches[0])}")
                if branches:
                    kinds = ", ".join(_describe_branch(b) for b in branches)
                    return "any", [f"One of: {kinds}."]
                return "any", []
        if "allOf" in schema and isinstance(schema["allOf"], list):
            merged = self.merge_all_of(ctx, schema, src)
            if merged is not None:
                return self.type_of(ctx, merged, hint, pointer)
            return "any", ["All of several schemas (see the tool's JSON Schema)."]

        types = schema.get("type")
        if isinstance(types, list):
            non_null = [t for t in types if t != "null"]
            if len(non_null) == 1:
                types = non_null[0]
            elif not non_null:
                return "any", []
            else:
                return "any", [f"One of the JSON types {', '.join(map(str, non_null))}."]
        if types is None:
            types = _infer_type(schema)

        if "const" in schema:
            return _basic_for_value(schema["const"]), [f"Always {json.dumps(schema['const'], ensure_ascii=False)}."]
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            return self.enum(ctx, schema, hint, src)

        if types == "object":
            return self.object(ctx, schema, hint, pointer)
        if types == "array":
            items = schema.get("items")
            if isinstance(items, dict | bool) and items not in ({}, True):
                elem, _ = self.type_of(ctx, items, hint + "Item", f"{pointer}/items")
                return "[]" + elem, notes
            if "prefixItems" in schema:
                notes.append("A tuple; see the tool's JSON Schema for the element types.")
            return "[]any", notes
        if types == "string":
            return "string", notes
        if types == "integer":
            return "int", notes
        if types == "number":
            return "float64", notes
        if types == "boolean":
            return "bool", notes
        if types == "null":
            return "any", ["Always null."]
        if types is not None:
            self.warn(src, f"unknown JSON type {types!r}; using any")
        return "any", notes

    def ref(self, ctx: _ToolCtx, schema: dict[str, Any], hint: str, pointer: str) -> tuple[str, list[str]]:
        ref = schema["$ref"]
        src = Source(ctx.info.server, ctx.info.name, pointer)
        target = _resolve(ctx.root, ref) if isinstance(ref, str) else None
        if target is None:
            self.warn(src, f"cannot resolve $ref {ref!r}; using any")
            return "any", [f"Schema {ref} (unresolved)."]
        if ref in ctx.in_progress:  # recursion: refer to the type being declared
            return "*" + ctx.in_progress[ref], []
        def_name = ref.rsplit("/", 1)[-1]
        if not _is_named_worthy(target):
            return self.type_of(ctx, target, pascal(def_name), ref.lstrip("#"))
        key = (ctx.info.server, def_name, json.dumps(target, sort_keys=True))
        if key in self.defs:
            return self.defs[key], []
        name = self.types.claim(pascal(def_name))
        self.defs[key] = name
        ctx.in_progress[ref] = name
        self.declare_named(ctx, target, name, ref.lstrip("#"))
        del ctx.in_progress[ref]
        return name, []

    def declare_named(self, ctx: _ToolCtx, schema: dict[str, Any], name: str, pointer: str) -> None:
        """Declare ``name`` for a schema that deserves its own type (object or enum)."""
        src = Source(ctx.info.server, ctx.info.name, pointer)
        doc = _description(schema)
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            self.enum_decl(ctx, schema, name, src)
            return
        expr, notes = self.object(ctx, schema, name, pointer, declare_as=name)
        if expr != name:  # a map or similar: a defined type
            ctx.decls.append(TypeDecl(name, _doc(name, doc + notes), expr, src))

    def object(
        self, ctx: _ToolCtx, schema: dict[str, Any], hint: str, pointer: str, declare_as: str | None = None
    ) -> tuple[str, list[str]]:
        src = Source(ctx.info.server, ctx.info.name, pointer)
        props = schema.get("properties")
        if not isinstance(props, dict) or not props:
            extra = schema.get("additionalProperties")
            if isinstance(extra, dict) and extra:
                elem, _ = self.type_of(ctx, extra, hint + "Value", f"{pointer}/additionalProperties")
                return "map[string]" + elem, []
            return "map[string]any", []
        name = declare_as or self.types.claim(hint)
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
            fields.append(Field(fname, prop, expr, _field_doc(fname, prop, sub, notes, is_req), omitempty=not is_req))
        doc = _description(schema)
        ctx.decls.append(StructDecl(name, _doc(name, doc), tuple(fields), src))
        return name, []

    def enum(self, ctx: _ToolCtx, schema: dict[str, Any], hint: str, src: Source) -> tuple[str, list[str]]:
        values = schema["enum"]
        if all(isinstance(v, str) for v in values):
            name = self.types.claim(hint)
            self.enum_decl(ctx, schema, name, src)
            return name, []
        base = _common_basic(values)
        listed = ", ".join(json.dumps(v, ensure_ascii=False) for v in values)
        return base, [f"One of {listed}."]

    def enum_decl(self, ctx: _ToolCtx, schema: dict[str, Any], name: str, src: Source) -> None:
        values = [v for v in schema["enum"] if isinstance(v, str)]
        if len(values) != len(schema["enum"]):
            self.warn(src, "enum mixes strings with other values; only the strings get constants")
        reg = Registry()
        consts = []
        for v in dict.fromkeys(values):  # keep order, drop duplicates
            cname = self.types.claim(name + (pascal(v) if v else "Empty"))
            reg.claim(cname)
            consts.append(EnumValue(cname, go_string(v)))
        ctx.decls.append(EnumDecl(name, _doc(name, _description(schema)), "string", tuple(consts), src))

    def merge_all_of(self, ctx: _ToolCtx, schema: dict[str, Any], src: Source) -> dict[str, Any] | None:
        """allOf of objects (after resolving refs) merges into one object; anything else is None."""
        parts = [schema["allOf"]] if not isinstance(schema["allOf"], list) else schema["allOf"]
        merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
        props: dict[str, Any] = dict(merged.get("properties", {}) or {})
        required: list[str] = list(merged.get("required", []) or [])
        for part in parts:
            if isinstance(part, dict) and "$ref" in part:
                part = _resolve(ctx.root, part["$ref"]) if isinstance(part["$ref"], str) else None
            if not isinstance(part, dict):
                return None
            if len(parts) == 1 and not props:
                return {**merged, **part}
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
        ctx_in = _ToolCtx(info, info.input_schema if isinstance(info.input_schema, dict) else {})
        base = pascal(func_name)
        input_type: str | None = None
        schema = ctx_in.root
        if _has_input(schema):
            input_type, _ = self.object(ctx_in, schema, base + "Input", "/inputSchema")
            if input_type.startswith("map["):
                name = self.types.claim(base + "Input")
                ctx_in.decls.append(
                    TypeDecl(name, _doc(name, ["Arguments (any keys)."]), input_type, Source(info.server, info.name))
                )
                input_type = name
        decls = list(ctx_in.decls)
        structured = isinstance(info.output_schema, dict)
        if structured:
            assert info.output_schema is not None
            ctx_out = _ToolCtx(info, info.output_schema)
            expr, notes = self.type_of(ctx_out, info.output_schema, base + "Output", "/outputSchema")
            if expr == "any" or not expr[0].isupper():
                name = self.types.claim(base + "Output")
                ctx_out.decls.append(
                    TypeDecl(
                        name,
                        _doc(name, notes or ["The tool's structured result."]),
                        expr,
                        Source(info.server, info.name),
                    )
                )
                expr = name
            decls.extend(ctx_out.decls)
            output_type = expr
        else:
            output_type = "string"
        desc = clean_text(info.description or info.title or "", DESCRIPTION_LIMIT)
        doc = _doc(func_name, desc or ["(no description)"])
        return ToolFunc(
            func_name, exported, info.server, info.name, doc, input_type, output_type, structured, tuple(decls)
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
    # Pascal twins of the reserved names must stay free for the bindings package's exports.
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
    funcs = [b.tool(t, name, export(name)) for t, name in plan]
    return Package(tuple(funcs), tuple(b.warnings), toolset.digest())


# --- helpers ----------------------------------------------------------------------------------


def _description(schema: dict[str, Any]) -> list[str]:
    """A schema's own description as comment lines (empty when it has none or it is not text)."""
    desc = schema.get("description")
    return clean_text(desc, FIELD_DOC_LIMIT) if isinstance(desc, str) else []


def _doc(name: str, lines: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Doc comment lines starting with the declared name, as Go convention wants."""
    lines = list(lines)
    if not lines:
        return ()
    return (f"{name} {lines[0]}", *lines[1:])


def _field_doc(fname: str, prop: str, schema: Any, notes: list[str], required: bool) -> tuple[str, ...]:
    """``Name Description. Notes (optional; default x; format y)``, in one or a few lines."""
    desc = ""
    extras: list[str] = [] if required else ["optional"]
    if isinstance(schema, dict):
        if isinstance(schema.get("description"), str):
            desc = schema["description"]
        elif isinstance(schema.get("title"), str):
            desc = schema["title"]
        if "default" in schema:
            extras.append("default " + " ".join(clean_text(json.dumps(schema["default"], ensure_ascii=False), 200)))
        if isinstance(schema.get("format"), str):
            extras.append("format " + " ".join(clean_text(schema["format"], 60)))
    lines = clean_text(desc, FIELD_DOC_LIMIT) or [f"is the {go_string(prop)} property."]
    tail = " ".join([*notes, f"({'; '.join(extras)})" if extras else ""]).strip()
    if tail:
        lines[-1] = f"{lines[-1]} {tail}"
    return _doc(fname, lines)


def _has_input(schema: dict[str, Any]) -> bool:
    props = schema.get("properties")
    if isinstance(props, dict) and props:
        return True
    extra = schema.get("additionalProperties")
    return isinstance(extra, dict) and bool(extra)


def _is_null(schema: Any) -> bool:
    return isinstance(schema, dict) and (schema.get("type") == "null" or schema.get("const", 0) is None)


def _describe_branch(schema: Any) -> str:
    if isinstance(schema, dict):
        if "$ref" in schema and isinstance(schema["$ref"], str):
            return schema["$ref"].rsplit("/", 1)[-1]
        if isinstance(schema.get("title"), str):
            return (clean_text(schema["title"], 60) or ["object"])[0]
        t = schema.get("type")
        if isinstance(t, str):
            return t
    return "any"


def _infer_type(schema: dict[str, Any]) -> str | None:
    if "properties" in schema or "additionalProperties" in schema:
        return "object"
    if "items" in schema or "prefixItems" in schema:
        return "array"
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return {str: "string", bool: "boolean", int: "integer", float: "number"}.get(type(schema["enum"][0]))
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


def _is_named_worthy(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    if isinstance(schema.get("enum"), list) and schema["enum"] and all(isinstance(v, str) for v in schema["enum"]):
        return True
    return isinstance(schema.get("properties"), dict) and bool(schema["properties"])


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
