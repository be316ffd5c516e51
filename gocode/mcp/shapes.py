"""Learned result shapes: what a tool's results looked like, for tools that declare no output.

Every pooled call's result passes the loopback endpoint, which shows it to a
:class:`ShapeRecorder`. For a result that is JSON (``structuredContent``, or text that parses)
only its structure is kept — key names and value types, merged over the samples, never a
value; for other text, the first lines of the latest result with anything that looks like a
secret replaced (tokens with a known prefix, JWTs, private keys, ``password=…`` values, emails,
credentials in URLs, long high-entropy strings; hex strings become ``<hex:N>``). Shapes are
kept beside the tool-list cache, one file per server config (so, like listings, never shared
between credentials), and shown in search and describe answers and the full view as a comment
on the tool's result. A server with ``learnShapes: false`` is never sampled.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gocode.config import ServerConfig
from gocode.mcp.cache import ListingCache

if TYPE_CHECKING:  # the SDK's types load with the first result observed: showing tools needs none
    import mcp_types as types

SAMPLE_LINES = 6  # lines of a text result kept
LINE_CHARS = 100  # each cut to this
MAP_KEYS = 24  # an object with more keys than this is a map (its keys are data, not names)
MAX_UNION = 3
MAX_DEPTH = 5
RENDER_CHARS = 600  # the longest rendered JSON shape

Shape = Any  # "string" | "integer" | "number" | "boolean" | "null" | "any" | {"list"|"object"|"map"|"oneOf": …}

_SECRET_PATTERNS = [
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)"),
    re.compile(r"\beyJ[\w-]{6,}\.[\w-]{6,}\.[\w-]*"),  # JWT
    re.compile(r"\b(?:sk|pk|rk)-[\w-]{16,}"),
    re.compile(r"\b(?:gh[pousr]_|github_pat_)\w{20,}"),
    re.compile(r"\bxox[abprs]-[\w-]{10,}"),
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    re.compile(r"\bAIza[\w-]{30,}"),
]
_LABELLED = re.compile(
    r"(?i)\b(pass(?:word|wd)?|secret|token|api[_-]?key|access[_-]?key|auth(?:orization)?|bearer|cookie|session)"
    r"(\"?\s*[:=]\s*\"?|\s+)(?!<)([^\s\"',;]{4,})"
)
_URL_CREDS = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^\s/@:]+:[^\s/@]+@")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_LONG = re.compile(r"[A-Za-z0-9+/=_.~-]{20,}")
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
    """``text`` with whatever looks like a secret (or an email address) replaced."""
    for p in _SECRET_PATTERNS:
        text = p.sub("<redacted>", text)
    text = _URL_CREDS.sub(r"\1<redacted>@", text)
    text = _LABELLED.sub(lambda m: f"{m.group(1)}{m.group(2)}<redacted>", text)
    text = _EMAIL.sub("<email>", text)
    return _LONG.sub(_long_token, text)


def looks_secret(text: str) -> bool:
    return redact(text) != text


def shape_of(value: Any, depth: int = 0) -> Shape:
    """The structure of a JSON value: types and key names, no values."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if depth >= MAX_DEPTH:
        return "any"
    if isinstance(value, list):
        item: Shape = None
        for v in value:
            item = shape_of(v, depth + 1) if item is None else merge(item, shape_of(v, depth + 1))
        return {"list": item}
    if isinstance(value, dict):
        if len(value) > MAP_KEYS or any(looks_secret(k) or not k.strip() for k in value):
            inner: Shape = None
            for v in value.values():
                inner = shape_of(v, depth + 1) if inner is None else merge(inner, shape_of(v, depth + 1))
            return {"map": inner}
        return {"object": {k: shape_of(v, depth + 1) for k, v in value.items()}, "optional": []}
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
    members = _members(a)
    for m in _members(b):
        if m not in members:
            members.append(m)
    return "any" if len(members) > MAX_UNION else {"oneOf": members}


def render(s: Shape, depth: int = 0) -> str:
    """A compact, TypeScript-like line: ``{commits: [{hash: string, tags?: [string]}]}``."""
    if s is None:
        return "?"
    if isinstance(s, str):
        return s
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


@dataclass
class ToolShape:
    """What was learned of one tool's results."""

    samples: int = 0
    json_samples: int = 0
    json: Shape = None
    text: list[str] = field(default_factory=list)  # the latest text result's first lines, redacted

    def observe(self, result: types.CallToolResult) -> None:
        import mcp_types as types

        value = result.structured_content
        text = "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))
        if value is None and text.strip()[:1] in ("{", "["):
            with contextlib.suppress(ValueError):
                value = json.loads(text)
        self.samples += 1
        if value is not None:
            self.json_samples += 1
            self.json = merge(self.json, shape_of(value))
        elif text:
            lines = [redact(line)[:LINE_CHARS].rstrip() for line in text.strip("\n").splitlines()[:SAMPLE_LINES]]
            while lines and not lines[-1]:
                lines.pop()
            self.text = lines

    def one_structure(self) -> bool:
        """Every sample was JSON of one structure (no alternatives): a type could be inferred."""
        return self.samples > 0 and self.json_samples == self.samples and "oneOf" not in json.dumps(self.json)

    def comment(self) -> list[str]:
        """Comment lines for the tool's result in the model view."""
        n = f"{self.samples} call{'s' if self.samples != 1 else ''}"
        out = []
        if self.json_samples:
            line = render(self.json)
            if len(line) > RENDER_CHARS:
                line = line[:RENDER_CHARS] + "…"
            out.append(f"Result seen ({n}), JSON: {line}")
        if self.text:
            out.append(f"Result seen ({n}), text starting:" if not out else "Also text starting:")
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
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".tmp-")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    json.dump(doc, f)
                os.replace(tmp, self.path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise


class ShapeRecorder:
    """Learns from the results of every server's calls (those with ``learnShapes`` on) and
    answers what was learned, from the files beside the tool-list cache."""

    def __init__(self, cache: ListingCache | None, servers: dict[str, ServerConfig]) -> None:
        self.cache = cache
        self.servers = servers
        self._files: dict[str, ShapeFile] = {}

    def _path(self, server: str) -> Path | None:
        config = self.servers.get(server)
        if self.cache is None or config is None or not config.learn_shapes:
            return None
        return self.cache.shapes_path(server, config)

    def observe(self, server: str, tool: str, result: types.CallToolResult) -> None:
        if result.is_error or (path := self._path(server)) is None:
            return
        if server not in self._files:
            self._files[server] = ShapeFile(path)
        self._files[server].observe(tool, result)

    def learned(self, server: str) -> dict[str, ToolShape]:
        path = self._path(server)
        return ShapeFile(path).tools if path is not None else {}

    def comments(self) -> dict[tuple[str, str], list[str]]:
        """Per (server, tool): the comment lines the model view shows for its results."""
        return {(s, t): shape.comment() for s in self.servers for t, shape in self.learned(s).items()}
