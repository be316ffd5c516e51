"""JSON Schema helpers the builder uses: kinds, enums, refs, variants, literal values and tags."""

from __future__ import annotations

import json
import math
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from gocode.schema.doctext import canonical_json, short_json, short_values
from gocode.schema.ir import GO_KIND, KIND_FIELD, SCALAR_KINDS, STRUCTURAL_KEYS, Decl
from gocode.schema.names import (
    clean_text,
    go_string,
    pascal,
)
from gocode.toolset import ToolInfo


@dataclass
class ToolContext:
    info: ToolInfo
    root: dict[str, Any]
    decls: list[Decl] = field(default_factory=list)
    in_progress: dict[str, str] = field(default_factory=dict)  # def pointer -> type expression
    inlining: set[str] = field(default_factory=set)  # refs being expanded in place (cycle guard)


def has_input(schema: dict[str, Any]) -> bool:
    props = schema.get("properties")
    if isinstance(props, dict) and props:
        return True
    if any(isinstance(schema.get(k), list | dict) for k in ("allOf", "anyOf", "oneOf", "$ref")):
        return True
    extra = schema.get("additionalProperties")
    patterns = schema.get("patternProperties")
    return (isinstance(extra, dict) and bool(extra)) or (isinstance(patterns, dict) and bool(patterns))


def is_null(schema: Any) -> bool:
    return isinstance(schema, dict) and (
        schema.get("type") == "null" or ("const" in schema and schema["const"] is None) or schema.get("enum") == [None]
    )


def admits_null(root: dict[str, Any], schema: Any, depth: int = 0) -> bool:
    """Whether null is one of a schema's values (a null alternative, or "null" among its types)."""
    if depth > 20 or not isinstance(schema, dict):
        return False
    if is_null(schema):
        return True
    if isinstance(schema.get("$ref"), str):
        return admits_null(root, resolve_ref(root, schema["$ref"]), depth + 1)
    t = schema.get("type")
    if isinstance(t, list) and "null" in t:
        return True
    return any(
        isinstance(schema.get(key), list) and any(admits_null(root, b, depth + 1) for b in schema[key])
        for key in ("anyOf", "oneOf")
    )


_ANNOTATION_KEYS = frozenset({"type", "title", "description", "examples", "$comment"})


def listed_values(raw: list[Any], branches: list[Any]) -> list[Any] | None:
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
    if any(is_null(b) for b in raw):
        values.append(None)
    return list(dict.fromkeys(values)) or None


def value_meanings(branches: list[Any]) -> str:
    """What one-value alternatives say of their value (title or description), as one sentence."""
    said = []
    for b in branches:
        text = b.get("description") if isinstance(b.get("description"), str) else b.get("title")
        if "const" in b and isinstance(text, str) and text.strip():
            said.append(f"{canonical_json(b['const'])}: {' '.join(text.split()).rstrip('.')}")
    return "; ".join(said) + "." if said else ""


def text_of(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def constraints_only(branches: Any) -> bool:
    """anyOf/oneOf branches that only add constraints (``required``, ``minItems``…) to their
    parent's shape, as in "give a or b": no alternative shape, so no union."""
    return isinstance(branches, list) and all(
        isinstance(b, dict) and b and not (STRUCTURAL_KEYS & set(b)) for b in branches
    )


def has_enum(schema: dict[str, Any]) -> bool:
    values = schema.get("enum")
    if not isinstance(values, list):
        return False
    kinds = {basic_for_value(v) for v in values if v is not None}
    return bool(kinds) and (kinds == {"string"} or kinds <= {"int", "float64"})


def kind_of(root: dict[str, Any], schema: Any, depth: int = 0) -> str | None:
    """The one JSON kind a schema's values have ("string", "integer", …, "object"), or None
    when it allows several or anything."""
    if depth > 20 or not isinstance(schema, dict):
        return None
    if isinstance(schema.get("$ref"), str):
        return kind_of(root, resolve_ref(root, schema["$ref"]), depth + 1)
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and not constraints_only(schema[key]):
            kinds = {kind_of(root, b, depth + 1) for b in schema[key] if not is_null(b)}
            if kinds == {"integer", "number"}:
                return "number"
            return kinds.pop() if len(kinds) == 1 else None
    if isinstance(schema.get("allOf"), list) and schema["allOf"]:
        kinds = {kind_of(root, b, depth + 1) for b in schema["allOf"]} - {None}
        return kinds.pop() if len(kinds) == 1 else ("object" if "properties" in schema else None)
    t = schema.get("type")
    if isinstance(t, list):
        non_null = {x for x in t if x != "null"}
        t = non_null.pop() if len(non_null) == 1 else None
        if t is None:
            return "number" if non_null == {"integer", "number"} else None
    if t is None and "const" in schema:
        t = GO_KIND.get(basic_for_value(schema["const"]))
    if t is None:
        t = infer_type(schema)
    return t if t in (*SCALAR_KINDS, "array", "object") else None


def is_structlike(ctx: ToolContext, schema: Any) -> bool:
    """Whether a schema may become a Go struct (object, union, tuple), so that a recursive
    reference to it must be a pointer. Errs towards True: a needless pointer still compiles."""
    if not isinstance(schema, dict):
        return False
    kind = kind_of(ctx.root, schema)
    if kind in SCALAR_KINDS:
        return False
    if kind == "array":
        return isinstance(schema.get("prefixItems"), list) or isinstance(schema.get("items"), list)
    if kind == "object":
        return (isinstance(schema.get("properties"), dict) and bool(schema["properties"])) or "allOf" in schema
    return True


def variant_name(root: dict[str, Any], schema: Any, kind: str) -> str:
    """A union field's name: the $ref'd definition, the title, a discriminator value or the kind."""
    if isinstance(schema, dict):
        if isinstance(schema.get("$ref"), str):
            return pascal(schema["$ref"].rsplit("/", 1)[-1])
        if isinstance(schema.get("title"), str) and schema["title"].strip():
            return pascal(schema["title"])
        if kind == "object":
            consts = object_keys(schema)[1]
            if len(consts) == 1 and isinstance(consts[0][1], str) and consts[0][1]:
                return pascal(consts[0][1])
    return KIND_FIELD[kind]


def object_keys(schema: Any) -> tuple[tuple[str, ...], tuple[tuple[str, Any], ...]]:
    """An object alternative's required keys and its discriminators (required properties with a
    single allowed value)."""
    if not isinstance(schema, dict):
        return (), ()
    props = p if isinstance(p := schema.get("properties"), dict) else {}
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


def needs_pointer(root: dict[str, Any], schema: Any, expr: str) -> bool:
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
    return kind_of(root, schema) in SCALAR_KINDS and expr != "any"


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
        return _enum_values(root, resolve_ref(root, schema["$ref"]), depth + 1)
    for key in ("allOf", "anyOf", "oneOf"):
        parts = [p for p in schema.get(key) or [] if not is_null(p)] if isinstance(schema.get(key), list) else []
        if len(parts) == 1:
            return _enum_values(root, parts[0], depth + 1)
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def fixed_value(root: dict[str, Any], schema: Any) -> tuple[str, str] | None:
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
        return "0", number_literal(value)
    return ("false", "true") if value is True else None


def number_literal(value: int | float) -> str:
    text = json.dumps(value)
    return text if math.isfinite(value) else "0"


def number_suffix(value: int | float) -> str:
    """An enum constant's suffix for a number: ``1`` → 1, ``-2.5`` → Neg2_5."""
    text = json.dumps(value).replace("+", "")
    text = text.replace("-", "Neg").replace(".", "_")
    return "".join(c if c.isalnum() or c == "_" else "_" for c in text)


def describe_branch(schema: Any) -> str:
    if isinstance(schema, dict):
        if "$ref" in schema and isinstance(schema["$ref"], str):
            return (clean_text(schema["$ref"].rsplit("/", 1)[-1], 60) or ["object"])[0]
        if "const" in schema:
            return short_json(schema["const"], 60)
        if isinstance(schema.get("enum"), list):
            return short_values(schema["enum"], 60)
        if isinstance(schema.get("title"), str):
            return (clean_text(schema["title"], 60) or ["object"])[0]
        t = schema.get("type")
        if isinstance(t, str):
            return t
    return "any"


def infer_type(schema: dict[str, Any]) -> str | None:
    if "properties" in schema or "additionalProperties" in schema or "patternProperties" in schema:
        return "object"
    if "items" in schema or "prefixItems" in schema:
        return "array"
    if isinstance(schema.get("enum"), list):
        kinds = {basic_for_value(v) for v in schema["enum"] if v is not None}
        if kinds == {"int", "float64"}:
            return "number"
        if len(kinds) == 1:
            return GO_KIND.get(kinds.pop())
    return None


def basic_for_value(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    return "any"


def common_basic(values: list[Any]) -> str:
    kinds = {basic_for_value(v) for v in values}
    if kinds == {"int", "float64"}:
        return "float64"
    return kinds.pop() if len(kinds) == 1 else "any"


def resolve_ref(root: dict[str, Any], ref: str) -> Any:
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


def escape_ptr(s: str) -> str:
    return s.replace("~", "~0").replace("/", "~1")


_TAG_OK = set("!#$%&()*+-./:;<=>?@[]^_{|}~ ")


def valid_tag_name(name: str) -> bool:
    """Whether encoding/json accepts ``name`` as a tag name (its isValidTag), and it is printable."""
    if not name:
        return False
    return all(c in _TAG_OK or unicodedata.category(c)[0] == "L" or unicodedata.category(c) == "Nd" for c in name)
