"""Doc comments from schema text: descriptions trimmed to sentences and limits, field notes,
constraints and defaults said once."""

from __future__ import annotations

import json
import re
from typing import Any

from gocode.schema.ir import FIELD_DOC_LIMIT, Decl
from gocode.schema.names import (
    clean_text,
    comment_literal,
    words,
)


def canonical_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def description_lines(schema: Any) -> list[str]:
    """A schema's own description as comment lines (empty when it has none or it is not text)."""
    desc = schema.get("description") if isinstance(schema, dict) else None
    return clean_text(desc, FIELD_DOC_LIMIT) if isinstance(desc, str) else []


def as_sentences(lines: list[str]) -> list[str]:
    """Description lines ending a sentence, so that a note after them reads as a new one."""
    if lines and not lines[-1].rstrip().endswith((".", "!", "?", ":", "…")):
        return [*lines[:-1], lines[-1].rstrip() + "."]
    return lines


def doc_lines(name: str, lines: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Doc comment lines starting with the declared name, as Go convention wants."""
    lines = list(lines)
    if not lines:
        return ()
    return (f"{name} {lines[0]}", *lines[1:])


def doc_text(d: Decl) -> tuple[str, ...]:
    """A declaration's doc comment without the leading name (doc_lines adds it)."""
    return (d.doc[0][len(d.name) :].lstrip(), *d.doc[1:]) if d.doc else ()


def short_json(value: Any, limit: int = 120) -> str:
    return " ".join(clean_text(canonical_json(value), limit))


def short_values(values: list[Any], limit: int) -> str:
    """Values as a list a reader scans (``"a", "b", …``), cut between values near ``limit``."""
    shown: list[str] = []
    for v in values:
        if shown and sum(len(x) + 2 for x in shown) + len(canonical_json(v)) > limit:
            return ", ".join(shown) + ", …"
        shown.append(short_json(v, limit))
    return ", ".join(shown)


def field_doc(fname: str, prop: str, schema: Any, notes: list[str], required: bool) -> tuple[str, ...]:
    """``Name Description. Notes (optional; default x; format y; >= 1)``, in one or a few lines."""
    desc = ""
    extras: list[str] = [] if required else ["optional"]
    if isinstance(schema, dict):
        if isinstance(schema.get("description"), str):
            desc = schema["description"]
        elif isinstance(schema.get("title"), str):
            desc = schema["title"]
        if "default" in schema:
            extras.append("default " + short_json(schema["default"]))
        extras.extend(_constraints(schema))
    lines = clean_text(desc, FIELD_DOC_LIMIT) or [f"is the {comment_literal(prop)} property."]
    tail = " ".join([*notes, f"({'; '.join(extras)})" if extras else ""]).strip()
    if tail:
        lines[-1] = f"{lines[-1]} {tail}"
    return doc_lines(fname, lines)


def _constraints(schema: dict[str, Any]) -> list[str]:
    """A property's format, bounds, pattern and examples, as short notes for its comment."""
    out: list[str] = []
    if isinstance(schema.get("format"), str):
        out.append("format " + " ".join(clean_text(schema["format"], 60)))
    for key, op in (("minimum", ">="), ("exclusiveMinimum", ">"), ("maximum", "<="), ("exclusiveMaximum", "<")):
        if isinstance(schema.get(key), int | float) and not isinstance(schema[key], bool):
            out.append(f"{op} {canonical_json(schema[key])}")
    if isinstance(schema.get("pattern"), str) and len(schema["pattern"]) <= 60:
        out.append("pattern " + short_json(schema["pattern"]))
    examples = schema.get("examples")
    if isinstance(examples, list) and examples:
        out.append("e.g. " + ", ".join(short_json(e, 60) for e in examples[:2]))
    elif "example" in schema:
        out.append("e.g. " + short_json(schema["example"], 60))
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
    if len(text) > 2 * sum(len(n) for n in names) + 64:
        return False  # says more than the names: no need to split it (it is untrusted, of any length)
    said = {w.lower() for w in words(text)} - _FILLER_WORDS
    named = {w.lower() for n in names for w in words(n)}
    return said <= named


def field_view(prop: str, schema: Any, notes: list[str]) -> tuple[str, tuple[str, ...]]:
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
            note = "default " + short_json(schema["default"])
            if not _says_default(desc, note):  # "(default 20)" already in the description
                extras.append(note)
        extras.extend(_constraints(schema))
    return desc, tuple(one_line(e) for e in extras)
