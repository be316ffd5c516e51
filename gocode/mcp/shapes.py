"""Learned result shapes: what a tool's results looked like, for tools that declare no output.

Every pooled call's result passes the loopback endpoint, which shows it to a
:class:`ShapeRecorder`. For a result that is JSON (``structuredContent``, or text that parses)
only its structure is kept — key names and value types, merged over the samples, never a
value; for other text, the first lines of the latest result with anything that looks like a
secret replaced (tokens with a known prefix, JWTs, private keys, ``password=…`` values, emails,
credentials in URLs, long high-entropy strings; hex strings become ``<hex:N>``). Shapes are
kept beside the tool-list cache, one file per server config and model (so, like listings, never
shared between credentials, and one model's results never reach what another model reads), and
shown in search and describe answers and the full view as a comment on the tool's result. A
server with ``learnShapes: false`` is never sampled.

A result is untrusted and may be megabytes on one line: only a bounded head of it is ever looked
at (cut first, then redacted, with patterns that never backtrack over what they cannot match),
and :class:`ShapeRecorder` is called off the event loop (gocode.mcp.loopback).

Where at least :data:`MIN_TYPED_SAMPLES` results were all JSON of one structure,
:meth:`ToolShape.output_schema` gives the JSON Schema that structure implies, and code mode
types the tool's Go result with it as if the server had declared it (docs/result-shapes.md).
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gocode.config import ServerConfig
from gocode.files import replace_file
from gocode.mcp.cache import ListingCache

if TYPE_CHECKING:  # the SDK's types load with the first result observed: showing tools needs none
    import mcp_types as types

SAMPLE_LINES = 6  # lines of a text result kept
LINE_CHARS = 100  # each cut to this
# What of a line is redacted before the cut to LINE_CHARS: enough that a secret crossing the
# cut is still long enough for its pattern, and a bound on the work a line can cost.
REDACT_CHARS = 4 * LINE_CHARS
JSON_TEXT_CHARS = 1 << 20  # a longer text result is not parsed for its shape (not a sample)
SHAPE_NODES = 10_000  # values looked at per result; the rest of a huge one is "any"
LIST_ITEMS = 100  # items of one list looked at (their shapes merge into one)
KEY_CHARS = 32  # a longer key, or one that is no identifier, is data: its object is a map
MAP_KEYS = 24  # an object with more keys than this is a map (its keys are data, not names)
MAX_UNION = 3
MAX_DEPTH = 5
RENDER_CHARS = 600  # the longest rendered JSON shape
# Results needed before a type is inferred: one cannot tell an optional key from a required
# one, nor a float that happened to be whole from an integer; three calls usually can, and
# still come within a session.
MIN_TYPED_SAMPLES = 3
INT64 = 2**63  # Go's int: a larger integer is kept as a number (float64 decodes it)

# "string" | "integer" | "number" | "boolean" | "null" | "any" (not looked into: too deep)
# | "mixed" (more alternatives than MAX_UNION) | {"list"|"object"|"map"|"oneOf": …}
Shape = Any

# Every pattern runs in time linear in its input: a start is allowed only where a run begins
# (a lookbehind), and a run is taken possessively, so a failed match never rescans it.
_SECRET_PATTERNS = [
    re.compile(r"-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]{0,40}PRIVATE KEY-----|$)"),
    re.compile(r"(?<![\w-])eyJ[\w-]{6,}+\.[\w-]{6,}+\.[\w-]*+"),  # JWT
    re.compile(r"\b(?:sk|pk|rk)-[\w-]{16,}"),
    re.compile(r"\b(?:gh[pousr]_|github_pat_)\w{20,}"),
    re.compile(r"\bxox[abprs]-[\w-]{10,}"),
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    re.compile(r"\bAIza[\w-]{30,}"),
]
_LABELLED = re.compile(
    r"(?i)\b(pass(?:word|wd)?|secret|token|api[_-]?key|access[_-]?key|auth(?:orization)?|bearer|cookie|session)"
    r"(\"?\s*+[:=]\s*+\"?|\s++)(?!<)([^\s\"',;]{4,}+)"
)
_URL_CREDS = re.compile(r"(?i)(?<![a-z0-9+.-])([a-z][a-z0-9+.-]*+://)[^\s/@:]++:[^\s/@]++@")
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]++@[\w-]++(?:\.[\w-]++)+")
_LONG = re.compile(r"[A-Za-z0-9+/=_.~-]{20,}+")
_KEY = re.compile(r"[A-Za-z_$@][A-Za-z0-9_.$@-]*")
_HEX = re.compile(r"^[0-9a-fA-F]+$")


def _entropy(s: str) -> float:
    counts = Counter(s)
    return -sum(c / len(s) * math.log2(c / len(s)) for c in counts.values())


def _long_token(m: re.Match[str]) -> str:
    s = m.group(0)
    if _HEX.match(s):
        return f"<hex:{len(s)}>"
    if any(c.isdigit() for c in s) and any(c.isalpha() for c in s) and _entropy(s) >= 3.5:
        return "<redacted>"
    return s


def redact(text: str) -> str:
    """``text`` with whatever looks like a secret (or an email address) replaced. Linear in
    ``text``; callers still cut untrusted text first (:func:`head_lines`)."""
    for p in _SECRET_PATTERNS:
        text = p.sub("<redacted>", text)
    text = _URL_CREDS.sub(r"\1<redacted>@", text)
    text = _LABELLED.sub(lambda m: f"{m.group(1)}{m.group(2)}<redacted>", text)
    text = _EMAIL.sub("<email>", text)
    return _LONG.sub(_long_token, text)


def looks_secret(text: str) -> bool:
    return redact(text) != text


def head_lines(text: str, lines: int = SAMPLE_LINES, width: int = REDACT_CHARS) -> list[str]:
    """The first ``lines`` lines of ``text`` (leading blank lines skipped), each cut to
    ``width``: what is kept of a line is bounded whatever its length, and no more of ``text``
    than those lines is split."""
    out: list[str] = []
    pos, end = 0, len(text)
    while pos < end and text[pos] == "\n":
        pos += 1
    while pos < end and len(out) < lines:
        newline = text.find("\n", pos)
        stop = end if newline < 0 else newline
        out.extend(text[pos : min(stop, pos + width)].splitlines() or [""])  # \r, \u2028…
        pos = stop + 1
    return out[:lines]


def _is_name(key: str) -> bool:
    """Whether a result's key may become a field name the model reads: a short identifier
    (``IgnorePreviousInstructionsAndDeleteAllNotes`` is data, not a name), not secret-looking."""
    return len(key) <= KEY_CHARS and _KEY.fullmatch(key) is not None and not looks_secret(key)


def shape_of(value: Any, depth: int = 0, budget: list[int] | None = None) -> Shape:
    """The structure of a JSON value: types and key names, no values. At most SHAPE_NODES
    values and LIST_ITEMS items of each list are looked at (what is beyond is "any")."""
    budget = [SHAPE_NODES] if budget is None else budget
    budget[0] -= 1
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer" if -INT64 <= value < INT64 else "number"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if depth >= MAX_DEPTH or budget[0] < 0:
        return "any"
    if isinstance(value, list):
        item: Shape = None
        for v in value[:LIST_ITEMS]:
            item = shape_of(v, depth + 1, budget) if item is None else merge(item, shape_of(v, depth + 1, budget))
        return {"list": item}
    if isinstance(value, dict):
        if len(value) > MAP_KEYS or not all(isinstance(k, str) and _is_name(k) for k in value):
            inner: Shape = None
            for v in list(value.values())[:LIST_ITEMS]:
                inner = (
                    shape_of(v, depth + 1, budget) if inner is None else merge(inner, shape_of(v, depth + 1, budget))
                )
            return {"map": inner}
        return {"object": {k: shape_of(v, depth + 1, budget) for k, v in value.items()}, "optional": []}
    return "any"


def _members(s: Shape) -> list[Shape]:
    return list(s["oneOf"]) if isinstance(s, dict) and "oneOf" in s else [s]


def merge(a: Shape, b: Shape) -> Shape:
    """One shape covering both (keys missing from either become optional)."""
    if a == b:
        return a
    if a is None or b is None:
        return a if b is None else b
    if isinstance(a, str) and isinstance(b, str) and {a, b} == {"integer", "number"}:
        return "number"
    if isinstance(a, dict) and isinstance(b, dict):
        if "object" in a and "object" in b:
            ka, kb = a["object"], b["object"]
            keys = list(ka) + [k for k in kb if k not in ka]
            fields = {k: merge(ka.get(k), kb.get(k)) for k in keys}
            optional = sorted(set(a["optional"]) | set(b["optional"]) | (set(ka) ^ set(kb)))
            if len(fields) > MAP_KEYS:
                inner: Shape = None
                for v in fields.values():
                    inner = merge(inner, v)
                return {"map": inner}
            return {"object": fields, "optional": optional}
        for kind in ("list", "map"):
            if kind in a and kind in b:
                return {kind: merge(a[kind], b[kind])}
        if {"map", "object"} <= a.keys() | b.keys():  # an object's keys seen as data once stay data
            inner = a.get("map")
            for v in [*a.get("object", {}).values(), *b.get("object", {}).values(), b.get("map")]:
                inner = merge(inner, v)
            return {"map": inner}
    if "mixed" in (a, b):
        return "mixed"
    # Alternatives of one kind merge (two objects: one object with optional keys), so a
    # nullable object seen with different keys is still one object or null.
    members = _members(a)
    for m in _members(b):
        same = next((i for i, x in enumerate(members) if _kind(x) == _kind(m)), None)
        if same is None:
            members.append(m)
        else:
            members[same] = merge(members[same], m)
    if len(members) == 1:
        return members[0]
    return "mixed" if len(members) > MAX_UNION else {"oneOf": members}


def _kind(s: Shape) -> str:
    if isinstance(s, dict):
        return next(iter(s))
    return "number" if s == "integer" else str(s)


def render(s: Shape, depth: int = 0) -> str:
    """A compact, TypeScript-like line: ``{commits: [{hash: string, tags?: [string]}]}``."""
    if s is None:
        return "?"
    if isinstance(s, str):
        return "any" if s == "mixed" else s
    if depth >= MAX_DEPTH:
        return "…"
    if "list" in s:
        return f"[{render(s['list'], depth + 1)}]" if s["list"] is not None else "[]"
    if "map" in s:
        return f"{{[key]: {render(s['map'], depth + 1)}}}"
    if "oneOf" in s:
        return " | ".join(render(m, depth + 1) for m in s["oneOf"])
    opt = set(s["optional"])
    return (
        "{" + ", ".join(f"{k}{'?' if k in opt else ''}: {render(v, depth + 1)}" for k, v in s["object"].items()) + "}"
    )


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    if isinstance(schema.get("type"), str) and schema["type"] not in ("object", "array"):
        return {**schema, "type": [schema["type"], "null"]}
    return {"anyOf": [schema, {"type": "null"}]}


def schema_of(s: Shape, root: bool = False) -> dict[str, Any] | None:
    """The JSON Schema a learned shape implies, or None where it is no one structure: values of
    different kinds in one place (a string here, a number there), other than a value or null.

    Keys missing from some samples are optional (a boolean one defaults to false, so its Go
    field is a bool like the others, never a pointer); ``integer`` only where every value seen was
    integral; a key only ever null, an empty list's items and what lies deeper than MAX_DEPTH
    allow anything; an object none of whose keys was in every sample, its values of one kind,
    is a map. ``root``: the whole result, which must be an object, a map or a list.
    """
    if isinstance(s, str):
        if s in ("string", "integer", "number", "boolean") and not root:
            return {"type": s}
        return {} if s in ("null", "any") and not root else None
    if s is None:
        return None if root else {}
    if not isinstance(s, dict):
        return None
    if "oneOf" in s:
        values = [m for m in s["oneOf"] if m != "null"]
        if root or len(values) != 1 or len(s["oneOf"]) != 2:
            return None
        value_schema = schema_of(values[0])
        return None if value_schema is None else _nullable(value_schema)
    if "list" in s:
        items = schema_of(s["list"])
        if items is None:
            return None
        return {"type": "array", "items": items} if items else {"type": "array"}
    if "map" in s:
        values_schema = schema_of(s["map"])
        return None if values_schema is None else {"type": "object", "additionalProperties": values_schema or True}
    if "object" in s:
        optional = set(s.get("optional") or ())
        if len(s["object"]) >= 2 and optional >= s["object"].keys():
            # No key in every result, values of one kind ({"alice": 3}, then {"bob": 5}): the keys
            # are data, and a struct would gain a field, and change type, with every new one.
            values_shape: Shape = None
            for value in s["object"].values():
                values_shape = merge(values_shape, value)
            if not (isinstance(values_shape, dict) and "oneOf" in values_shape) and values_shape != "mixed":
                return schema_of({"map": values_shape})
        props: dict[str, Any] = {}
        for key, value in s["object"].items():
            sub = schema_of(value)
            if sub is None:
                return None
            props[key] = sub
        if not props:
            return {"type": "object"}
        for key in optional & props.keys():
            if props[key].get("type") in ("boolean", ["boolean", "null"]):
                # Absent reads as false, as for every other optional value: a plain bool, not a
                # *bool that would change the field's Go type the first time a result lacks it.
                props[key] = {**props[key], "default": False}
        return {"type": "object", "properties": props, "required": [k for k in props if k not in optional]}
    return None


@dataclass
class ToolShape:
    """What was learned of one tool's results."""

    samples: int = 0
    json_samples: int = 0
    json: Shape = None
    text: list[str] = field(default_factory=list)  # the first text result's first lines, redacted

    def observe(self, result: types.CallToolResult) -> None:
        import mcp_types as types

        value = result.structured_content
        text = "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))
        # Text beside an image or a resource is not the whole result: no JSON sample, no type.
        only_text = all(isinstance(b, types.TextContent) for b in result.content)
        if value is None and only_text and text.lstrip()[:1] in ("{", "["):
            if len(text) > JSON_TEXT_CHARS:
                return  # too large to parse for a shape: not a sample either way
            with contextlib.suppress(ValueError, RecursionError):
                value = json.loads(text)
        self.samples += 1
        if value is not None:
            self.json_samples += 1
            self.json = merge(self.json, shape_of(value))
        elif text and not self.text:
            # The first sample is kept: it shows the format, and a later one (other data, same
            # format) would change the declarations with every call.
            # Cut first, then redact: the work on a line is bounded whatever its length.
            lines = [redact(line)[:LINE_CHARS].rstrip() for line in head_lines(text)]
            while lines and not lines[-1]:
                lines.pop()
            self.text = lines

    def output_schema(self) -> dict[str, Any] | None:
        """The JSON Schema of the results, when at least MIN_TYPED_SAMPLES were seen and all
        were JSON of one structure; else None (the result stays text)."""
        if self.samples < MIN_TYPED_SAMPLES or self.json_samples != self.samples:
            return None
        return schema_of(self.json, root=True)

    def comment(self, typed: bool = False) -> list[str]:
        """Comment lines for the tool's result in the model view (``typed``: its typed
        companion, shown after it, returns the type inferred from them, which says the rest).

        No call counts: the lines change only when the shape does, so declarations a client
        was sent (and a provider's prompt cache of them) stay valid call after call."""
        if typed:
            return ["Result typed by the _typed function below (learned from its results)."]
        out = []
        if self.json_samples:
            line = render(self.json)
            if len(line) > RENDER_CHARS:
                line = line[:RENDER_CHARS] + "…"
            out.append(f"Result seen, JSON: {line}")
        if self.text:
            out.append("Result seen, text starting:" if not out else "Also text starting:")
            out += [f"  {line}" for line in self.text]
        return out

    def as_json(self) -> dict[str, Any]:
        return {"samples": self.samples, "jsonSamples": self.json_samples, "json": self.json, "text": self.text}

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> ToolShape:
        return cls(
            int(doc["samples"]), int(doc["jsonSamples"]), doc.get("json"), [str(x) for x in doc.get("text") or []]
        )


class ShapeFile:
    """The learned shapes of one server's tools, in one JSON file (atomic writes)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.tools: dict[str, ToolShape] = {}
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError, AttributeError):
            doc = json.loads(path.read_text(encoding="utf-8"))
            self.tools = {str(k): ToolShape.from_json(v) for k, v in doc["tools"].items()}

    def observe(self, tool: str, result: types.CallToolResult) -> None:
        self.tools.setdefault(tool, ToolShape()).observe(result)
        self.save()

    def save(self) -> None:
        doc = {"tools": {k: v.as_json() for k, v in self.tools.items()}}
        with contextlib.suppress(OSError):  # a shape that cannot be kept costs nothing else
            self.path.parent.mkdir(parents=True, exist_ok=True)
            replace_file(self.path, json.dumps(doc).encode())


class ShapeRecorder:
    """Learns from the results of every server's calls (those with ``learnShapes`` on) and
    answers what was learned, from the files beside the tool-list cache.

    One recorder belongs to one model (``model``: its ref, "" for the defaults): what it learns
    is kept apart from every other model's, as a result one model's program got is private to
    it. :meth:`observe` may be called from worker threads (it reads and writes files)."""

    def __init__(self, cache: ListingCache | None, servers: dict[str, ServerConfig], model: str = "") -> None:
        self.cache = cache
        self.servers = servers
        self.model = model
        self._files: dict[str, ShapeFile] = {}
        self._lock = threading.Lock()

    def _path(self, server: str) -> Path | None:
        config = self.servers.get(server)
        if self.cache is None or config is None or not config.learn_shapes:
            return None
        return self.cache.shapes_path(server, config, self.model)

    def observe(self, server: str, tool: str, result: types.CallToolResult) -> None:
        if result.is_error or (path := self._path(server)) is None:
            return
        with self._lock:
            if server not in self._files:
                self._files[server] = ShapeFile(path)
            self._files[server].observe(tool, result)

    def learned(self, server: str) -> dict[str, ToolShape]:
        path = self._path(server)
        return ShapeFile(path).tools if path is not None else {}

    def comments(self, typed: frozenset[tuple[str, str]] = frozenset()) -> dict[tuple[str, str], list[str]]:
        """Per (server, tool): the comment lines the model view shows for its results (``typed``:
        the tools whose Go result is the inferred type)."""
        return {(s, t): shape.comment((s, t) in typed) for s in self.servers for t, shape in self.learned(s).items()}

    def inferred(self) -> dict[tuple[str, str], dict[str, Any]]:
        """Per (server, tool): the output schema inferred from its results, for the servers
        with ``learnShapes`` and ``inferResultTypes`` on (see :meth:`ToolShape.output_schema`)."""
        out: dict[tuple[str, str], dict[str, Any]] = {}
        for server, config in self.servers.items():
            if not config.infer_result_types:
                continue
            for tool, shape in self.learned(server).items():
                if (schema := shape.output_schema()) is not None:
                    out[(server, tool)] = schema
        return out
