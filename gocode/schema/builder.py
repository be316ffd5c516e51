"""JSON Schema → the Go IR (:mod:`gocode.schema.ir`).

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
from collections import Counter
from typing import Any

from gocode.schema.dedupe import dedupe_types, guessed_field_types, keep_former_shared_names, keep_tool_type_names
from gocode.schema.doctext import as_sentences, canonical_json, description_lines, doc_lines, field_doc, field_view
from gocode.schema.ir import (
    DESCRIPTION_LIMIT,
    KIND_GO,
    PTR_HELPER,
    RESERVED_FUNC_NAMES,
    RUNTIME_TYPE_NAMES,
    SCALAR_KINDS,
    TYPED_RESULT_SUFFIX,
    TYPED_SUFFIX,
    EnumDecl,
    EnumValue,
    Field,
    Package,
    Source,
    StructDecl,
    ToolFunc,
    TupleDecl,
    TypeDecl,
    UnionDecl,
    Variant,
)
from gocode.schema.media import MEDIA_DOC, MEDIA_PART_DOC, RT_CONTENT, RT_MEDIA, returns_media
from gocode.schema.names import (
    GO_KEYWORDS,
    GO_PREDECLARED,
    Registry,
    camel,
    clean_text,
    export,
    go_string,
    pascal,
)
from gocode.schema.schemahelp import (
    ToolContext,
    admits_null,
    basic_for_value,
    common_basic,
    constraints_only,
    describe_branch,
    escape_ptr,
    fixed_value,
    has_enum,
    has_input,
    infer_type,
    is_null,
    is_structlike,
    kind_of,
    listed_values,
    needs_pointer,
    number_literal,
    number_suffix,
    object_keys,
    resolve_ref,
    text_of,
    valid_tag_name,
    value_meanings,
    variant_name,
)
from gocode.toolset import ToolInfo, ToolSet


class _Builder:
    def __init__(self) -> None:
        self.types = Registry({"Run", *RUNTIME_TYPE_NAMES})
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
        self, ctx: ToolContext, schema: Any, hint: str, pointer: str, name: str | None = None
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
                if constraints_only(schema[key]):  # e.g. "at least one of a or b": no new shape
                    rest = {k: v for k, v in schema.items() if k != key}
                    return self.type_of(ctx, rest, hint, pointer, name)
                branches = self.branches(ctx, schema, key, pointer)
                values = listed_values(schema[key], [b for b, _ in branches])
                if values is not None and len(branches) > 1:
                    # Each alternative one value ({"const": "fast"} | {"const": "slow"}): an enum.
                    rest = {k: v for k, v in schema.items() if k != key}
                    meanings = value_meanings([b for b, _ in branches])
                    if meanings:
                        rest["description"] = " ".join(filter(None, [text_of(rest.get("description")), meanings]))
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
            types = infer_type(schema)

        if "const" in schema:
            return basic_for_value(schema["const"]), [f"Always {canonical_json(schema['const'])}."]
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            return self.enum(ctx, schema, hint, src, name)

        if types == "object":
            return self.object(ctx, schema, hint, pointer, name)
        if types == "array":
            return self.array(ctx, schema, hint, pointer, name)
        if types in KIND_GO:
            return KIND_GO[types], []
        if types == "null":
            return "any", ["Always null."]
        if types is not None:
            self.warn(src, f"unknown JSON type {types!r}; using any")
        return "any", []

    def ref(self, ctx: ToolContext, schema: dict[str, Any], hint: str, pointer: str) -> tuple[str, list[str]]:
        ref = schema["$ref"]
        src = Source(ctx.info.server, ctx.info.name, pointer)
        target = resolve_ref(ctx.root, ref) if isinstance(ref, str) else None
        if target is None:
            self.warn(src, f"cannot resolve $ref {ref!r}; using any")
            return "any", [f"Schema {canonical_json(ref)} (unresolved)."]
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
        ctx.in_progress[ref] = "*" + name if is_structlike(ctx, target) else name
        expr, notes = self.type_of(ctx, target, name, ref.lstrip("#"), name)
        del ctx.in_progress[ref]
        if expr != name:  # a slice, map or basic type: give it the name
            doc = description_lines(target) + notes
            ctx.decls.append(TypeDecl(name, doc_lines(name, doc), expr, Source(ctx.info.server, ctx.info.name, ref)))
        return name, []

    def worth_naming(self, ctx: ToolContext, schema: Any) -> bool:
        """Whether a ``$defs`` entry gets its own named type (rather than being inlined)."""
        if not isinstance(schema, dict):
            return False
        if is_structlike(ctx, schema) or has_enum(schema):
            return True
        kind = kind_of(ctx.root, schema)
        return kind == "array" or (kind == "object" and isinstance(schema.get("additionalProperties"), dict))

    def branches(self, ctx: ToolContext, schema: dict[str, Any], key: str, pointer: str) -> list[tuple[Any, str]]:
        """The non-null alternatives of an anyOf/oneOf, nested ones flattened, the parent's
        own keywords (description, type, …) merged into each plain branch."""
        base = {k: v for k, v in schema.items() if k not in (key, "description", "title", "default", "examples")}
        out: list[tuple[Any, str]] = []
        for i, b in enumerate(schema[key]):
            bptr = f"{pointer}/{key}/{i}"
            if is_null(b):
                continue
            if isinstance(b, dict) and set(b) <= {"anyOf", "oneOf", "description", "title"}:
                nested = "anyOf" if "anyOf" in b else "oneOf"
                if isinstance(b.get(nested), list) and not constraints_only(b[nested]):
                    out.extend(self.branches(ctx, b, nested, bptr))
                    continue
            if isinstance(b, dict) and "$ref" not in b:
                b = {**base, **b}
            out.append((b, bptr))
        return out

    def union(
        self,
        ctx: ToolContext,
        schema: dict[str, Any],
        branches: list[tuple[Any, str]],
        hint: str,
        pointer: str,
        name: str | None,
    ) -> tuple[str, list[str]]:
        src = Source(ctx.info.server, ctx.info.name, pointer)
        kinds = [kind_of(ctx.root, b) for b, _ in branches]
        listed = ", ".join(describe_branch(b) for b, _ in branches)
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
            vname = fields.claim(variant_name(ctx.root, b, k))
            expr, _ = self.type_of(ctx, b, name + vname, bptr)
            if not expr.startswith(("*", "[]", "map[")) and expr != "any":
                expr = "*" + expr
            target = resolve_ref(ctx.root, b["$ref"]) if isinstance(b, dict) and isinstance(b.get("$ref"), str) else b
            required, consts = object_keys(target) if k == "object" else ((), ())
            literals = tuple((key, go_string(json.dumps(v, separators=(",", ":")))) for key, v in consts)
            variants.append(Variant(vname, expr, k, required, literals))
        kinds_doc = ", ".join(v.name for v in variants)
        doc = [
            *as_sentences(description_lines(schema)),
            f"One of {kinds_doc}: set exactly one field (none set is null).",
        ]
        ctx.decls.append(UnionDecl(name, doc_lines(name, doc), tuple(variants), src))
        return name, []

    def enum(
        self, ctx: ToolContext, schema: dict[str, Any], hint: str, src: Source, name: str | None
    ) -> tuple[str, list[str]]:
        values = [v for v in schema["enum"] if v is not None]  # null: the field is nullable
        base = common_basic(values)
        if not values or base == "bool":
            return base if values else "any", [f"One of {', '.join(canonical_json(v) for v in schema['enum'])}."]
        if base == "any":
            return "any", [f"One of {', '.join(canonical_json(v) for v in values)}."]
        name = name or self.types.claim(hint)
        consts = []
        for v in dict.fromkeys(values):  # keep order, drop duplicates
            if base == "string":
                cname, literal = name + (pascal(v) if v else "Empty"), go_string(v)
            else:
                cname, literal = name + number_suffix(v), number_literal(v)
            consts.append(EnumValue(self.types.claim(cname), literal))
        ctx.decls.append(EnumDecl(name, doc_lines(name, description_lines(schema)), base, tuple(consts), src))
        return name, []

    def object(
        self, ctx: ToolContext, schema: dict[str, Any], hint: str, pointer: str, name: str | None = None
    ) -> tuple[str, list[str]]:
        src = Source(ctx.info.server, ctx.info.name, pointer)
        props = schema.get("properties")
        if not isinstance(props, dict) or not props:
            return self.map_of(ctx, schema, hint, pointer)
        name = name or self.types.claim(hint)
        required = r if isinstance(r := schema.get("required"), list) else []
        missing = [r for r in required if isinstance(r, str) and r not in props]
        if missing:
            self.warn(src, f"required names not among the properties are ignored: {', '.join(missing)}")
        fields_reg = Registry()
        fields: list[Field] = []
        for prop, sub in props.items():
            if not valid_tag_name(prop):
                self.warn(src, f"property {prop!r} cannot be named in a Go struct tag; it is left out")
                continue
            fname = fields_reg.claim(pascal(prop))
            expr, notes = self.type_of(ctx, sub, name + pascal(prop), f"{pointer}/properties/{escape_ptr(prop)}")
            is_req = prop in required
            fill = fixed_value(ctx.root, sub) if is_req else None
            if not is_req and needs_pointer(ctx.root, sub, expr):
                expr = "*" + expr
                notes = [*notes, f"Set with {PTR_HELPER}(v)."]
            doc = field_doc(fname, prop, sub, notes, is_req)
            desc, view_notes = field_view(prop, sub, notes)
            fields.append(Field(fname, prop, expr, doc, not is_req, fill, desc, view_notes))
        ctx.decls.append(StructDecl(name, doc_lines(name, description_lines(schema)), tuple(fields), src))
        return name, []

    def map_of(self, ctx: ToolContext, schema: dict[str, Any], hint: str, pointer: str) -> tuple[str, list[str]]:
        """An object without properties: a map of its additional (or pattern) property type."""
        extra = schema.get("additionalProperties")
        patterns = schema.get("patternProperties")
        if isinstance(patterns, dict) and patterns and extra in (None, False, True, {}):
            values = list(patterns.values())
            if extra not in (None, False):
                values.append(extra)
            if all(v == values[0] for v in values):
                elem, _ = self.type_of(ctx, values[0], hint + "Value", f"{pointer}/patternProperties")
                keys = ", ".join(canonical_json(p) for p in patterns)
                return "map[string]" + elem.lstrip("*"), [f"Keys match {keys}."]
            return "map[string]any", [f"Keys match {', '.join(canonical_json(p) for p in patterns)}."]
        if isinstance(extra, dict) and extra:
            elem, _ = self.type_of(ctx, extra, hint + "Value", f"{pointer}/additionalProperties")
            return "map[string]" + elem.lstrip("*"), []
        return "map[string]any", []

    def array(
        self, ctx: ToolContext, schema: dict[str, Any], hint: str, pointer: str, name: str | None
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
        ctx: ToolContext,
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
            *description_lines(schema),
            f"A JSON array: {', '.join(f.name for f in items)}{', Rest…' if rest_type else ''}.",
        ]
        ctx.decls.append(
            TupleDecl(name, doc_lines(name, doc), items, rest_type, Source(ctx.info.server, ctx.info.name, pointer))
        )
        return name, []

    def merge_all_of(self, ctx: ToolContext, schema: dict[str, Any]) -> dict[str, Any] | None:
        """allOf of objects (after resolving refs) merges into one object; a single part merges
        into its parent; anything else is None."""
        parts = schema["allOf"] if isinstance(schema["allOf"], list) else [schema["allOf"]]
        merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
        resolved = []
        for part in parts:
            if isinstance(part, dict) and isinstance(part.get("$ref"), str):
                part = resolve_ref(ctx.root, part["$ref"])
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

    def convert(self, info: ToolInfo, func_name: str) -> ToolFunc | None:
        """:meth:`tool`, or None (with a warning) for a schema it cannot convert: that tool is
        left out, never its server or the tool set. What the failed conversion shared with
        other tools (named $defs, the media types) is undone, so nothing refers to its types."""
        defs, media, warned = dict(self.defs), (self.media_names, self.media_declared), len(self.warnings)
        try:
            return self.tool(info, func_name, export(func_name))
        except (RecursionError, ValueError, TypeError, KeyError, AttributeError, IndexError) as exc:
            self.defs, (self.media_names, self.media_declared) = defs, media
            del self.warnings[warned:]
            why = "it nests too deep" if isinstance(exc, RecursionError) else f"{type(exc).__name__}: {exc}"[:200]
            self.warnings.append(f"{info.server}.{info.name}: left out: its schema cannot be converted to Go ({why})")
            return None

    # One tool -> its function and declarations.
    def tool(self, info: ToolInfo, func_name: str, exported: str) -> ToolFunc:
        schema = info.input_schema if isinstance(info.input_schema, dict) else {}
        ctx_in = ToolContext(info, schema)
        base = pascal(func_name)
        input_type: str | None = None
        if has_input(schema):
            name = self.types.claim(base + "Input")
            ctx_in.in_progress["#"] = "*" + name
            input_type, notes = self.type_of(ctx_in, {**schema, "type": "object"}, name, "/inputSchema", name)
            if input_type != name:
                ctx_in.decls.append(
                    TypeDecl(
                        name,
                        doc_lines(name, notes or ["Arguments (any keys)."]),
                        input_type,
                        Source(info.server, info.name),
                    )
                )
                input_type = name
        decls = list(ctx_in.decls)
        # A type learned from the results is the companion's (:meth:`companion`), never this one's.
        structured = isinstance(info.output_schema, dict) and not info.output_inferred
        if structured:
            assert info.output_schema is not None
            ctx_out = ToolContext(info, info.output_schema)
            name = self.types.claim(base + "Output")
            ctx_out.in_progress["#"] = "*" + name if is_structlike(ctx_out, info.output_schema) else name
            expr, notes = self.type_of(ctx_out, info.output_schema, name, "/outputSchema", name)
            output_type = name
            if expr != name and kind_of(ctx_out.root, info.output_schema) in (*SCALAR_KINDS, "array"):
                # A scalar or list result (Python tools have them; MCP results are objects) is
                # its Go type as it is: `(float64, error)`, not a named type wrapping it. One that
                # may be null is a pointer, as an optional field is: nil, not a zero that means a value.
                output_type = expr
                if kind_of(ctx_out.root, info.output_schema) in SCALAR_KINDS and admits_null(
                    ctx_out.root, info.output_schema
                ):
                    output_type = "*" + expr
            elif expr != name:
                lines = description_lines(info.output_schema) + notes or ["The tool's structured result."]
                ctx_out.decls.append(TypeDecl(name, doc_lines(name, lines), expr, Source(info.server, info.name)))
            decls.extend(ctx_out.decls)
        elif returns_media(info):
            if self.media_names is None:  # claimed by the first tool that needs them, in seniority order
                self.media_names = (self.types.claim("Content"), self.types.claim("Media"))
            output_type = self.media_names[0]
            if not self.media_declared:
                self.media_declared = True
                src = Source(info.server, info.name)
                content, media = self.media_names
                decls.append(TypeDecl(content, doc_lines(content, [MEDIA_DOC]), RT_CONTENT, src))
                decls.append(TypeDecl(media, doc_lines(media, [MEDIA_PART_DOC]), RT_MEDIA, src))
        else:
            output_type = "string"
        desc = clean_text(info.description or info.title or "", DESCRIPTION_LIMIT)
        doc = doc_lines(func_name, desc or ["(no description)"])
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

    def companion(self, info: ToolInfo, declared: ToolFunc) -> ToolFunc | None:
        """``<function>_typed``: the tool's result decoded as the type learned from its results
        (``info.output_schema``). Its types are named in a scope of their own
        (``<Function>_Result…``), so learning a type renames nothing and nothing added later
        renames it; they are never shared with another tool's. None (with a warning) when the
        learned schema cannot be converted."""
        assert isinstance(info.output_schema, dict)
        types, defs, warned = self.types, self.defs, len(self.warnings)
        self.types, self.defs = Registry(), {}
        try:
            ctx = ToolContext(info, info.output_schema)
            name = self.types.claim(export(declared.name) + TYPED_RESULT_SUFFIX)
            ctx.in_progress["#"] = "*" + name if is_structlike(ctx, info.output_schema) else name
            expr, _ = self.type_of(ctx, info.output_schema, name, "/outputSchema", name)
        except (RecursionError, ValueError, TypeError, KeyError, AttributeError, IndexError) as exc:
            del self.warnings[warned:]
            self.warnings.append(
                f"{info.server}.{info.name}: no typed result: the learned type cannot be Go ({exc})"[:300]
            )
            return None
        finally:
            self.types, self.defs = types, defs
        output_type = name
        if expr != name:
            ctx.decls.append(
                TypeDecl(name, doc_lines(name, ["The tool's result."]), expr, Source(info.server, info.name))
            )
        func = declared.name + TYPED_SUFFIX
        doc = doc_lines(func, [f"{declared.name}, its result decoded as the type learned from it."])
        return ToolFunc(
            func, export(func), info.server, info.name, doc, declared.input_type, output_type, True,
            tuple(ctx.decls), inferred=True, companion=True,
        )  # fmt: skip


def _claim_func(funcs: Registry, types: Registry, base: str) -> str:
    """``base`` (or ``base2``, …) free both as a function and, exported, as a bindings name."""
    n = 1
    while True:
        name = base + ("" if n == 1 else str(n))
        if not funcs.taken(name) and not types.taken(export(name)):
            funcs.take(name)
            types.take(export(name))
            return name
        n += 1


def _unreserved(name: str) -> str:
    return name + "Tool" if name in GO_KEYWORDS or name in GO_PREDECLARED or name in RESERVED_FUNC_NAMES else name


def build_package(toolset: ToolSet) -> Package:
    """The Go IR for every tool of a tool set (see the module doc for the guarantees).

    Names never move when tools are added: tools take their names one at a time in seniority
    order (:meth:`ToolSet.by_seniority`: servers in the order given, a server's tools by name),
    each its function and then all its types, so an earlier tool keeps every name it had. A
    function is the tool's name (``search``); when an earlier tool has it, ``<server><Tool>``
    (``gitlabSearch``); a numeric suffix only when that is taken too. An identical type is
    declared once, under the earliest tool's name (a later tool keeps its own as an alias)."""
    b = _Builder()
    funcs_reg = Registry(set(GO_KEYWORDS) | set(GO_PREDECLARED) | set(RESERVED_FUNC_NAMES))
    funcs: list[ToolFunc] = []
    # The order names are taken in, and the order the tools are shown in.
    seniority, shown = toolset.by_seniority(), toolset.tools()
    for t in seniority:
        plain = _unreserved(camel(t.name))
        if not funcs_reg.taken(plain) and not b.types.taken(export(plain)):
            name = _claim_func(funcs_reg, b.types, plain)
        else:
            base = _unreserved(camel(f"{t.server}_{t.name}"))
            name = _claim_func(funcs_reg, b.types, base)
            if name != base:
                b.warnings.append(f"{t.server}.{t.name}: Go name {base!r} is taken; using {name!r}")
        if (f := b.convert(t, name)) is not None:
            funcs.append(f)
    # Shown in the tool set's display order, each typed companion right after its tool.
    position = {(t.server, t.name): i for i, t in enumerate(shown)}
    shared = keep_tool_type_names(funcs, dedupe_types(funcs))
    shared = keep_former_shared_names(funcs, shared, b.types, lambda f: position[(f.server, f.tool)])
    kept = guessed_field_types(shared, b.types)
    ordered: list[ToolFunc] = []
    infos = {(t.server, t.name): t for t in shown}
    for f in sorted(kept, key=lambda f: position[(f.server, f.tool)]):
        ordered.append(f)
        info = infos[(f.server, f.tool)]
        learned = info.output_inferred and isinstance(info.output_schema, dict)
        if learned and (c := b.companion(info, f)) is not None:
            ordered.append(c)
    return Package(tuple(ordered), tuple(b.warnings), toolset.digest())


# --- one declaration per shape ------------------------------------------------------------------
