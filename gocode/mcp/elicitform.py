"""A server's elicitation form (``requestedSchema``) read as the fields a person fills in.

MCP's form schema is flat: an object whose properties are strings (with ``format`` email, uri,
date or date-time, lengths, an ``enum`` or titled choices as ``oneOf``/``anyOf`` of ``const``),
numbers and integers (``minimum``/``maximum``), booleans, and arrays of choices (a
multi-select). Everything here comes from the server: texts are cut to size, and a form with
more fields or choices than a person can be asked about is refused, not shown in part.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from typing import Any

from gocode.errors import FormError
from gocode.terminal import terminal_text

MAX_FIELDS = 32  # fields one form may ask for
MAX_CHOICES = 64  # choices one field may offer
MAX_TEXT = 300  # a title, description or choice as shown
MAX_MESSAGE = 2000  # the server's message as shown
MAX_ANSWER = 4000  # characters one answer may have
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def shown(text: Any, limit: int = MAX_TEXT, *, lines: bool = False) -> str:
    """Server text as the terminal may print it: no control character, cut to ``limit``; one
    line unless ``lines``."""
    text = str(text)
    if len(text) > limit:
        text = text[:limit] + "…"
    if not lines:
        text = " ".join(text.split())
    return terminal_text(text)


@dataclass(frozen=True)
class Choice:
    value: Any
    title: str


@dataclass(frozen=True)
class Field:
    """One property of the form."""

    name: str
    kind: str  # string, number, integer, boolean, array
    title: str
    description: str
    required: bool
    spec: dict[str, Any]
    choices: tuple[Choice, ...] = ()

    @property
    def has_default(self) -> bool:
        return "default" in self.spec

    @property
    def default(self) -> Any:
        return self.spec.get("default")

    def hint(self) -> str:
        """The field's type and bounds, as the prompt shows them."""
        parts = [self.kind if self.kind != "array" else "choose any, comma-separated"]
        if isinstance(self.spec.get("format"), str):
            parts.append(shown(self.spec["format"], 40))
        low, high = (
            self.spec.get("minimum", self.spec.get("minLength")),
            self.spec.get("maximum", self.spec.get("maxLength")),
        )
        if low is not None or high is not None:
            parts.append(f"{'' if low is None else shown(low, 40)}..{'' if high is None else shown(high, 40)}")
        parts.append("required" if self.required else "optional")
        if self.has_default:
            parts.append(f"Enter for {self.show(self.default)}")
        return ", ".join(parts)

    def show(self, value: Any) -> str:
        if self.kind == "boolean":
            return "yes" if value else "no"
        if isinstance(value, list):
            return ", ".join(self.show(v) for v in value)
        for c in self.choices:
            if c.value == value:
                return c.title
        return shown(value, 80)

    def parse(self, text: str) -> Any:
        """The value typed for this field (raises ValueError saying what is wrong)."""
        text = text.strip()
        if self.kind == "boolean":
            answer = {"y": True, "yes": True, "true": True, "n": False, "no": False, "false": False}.get(text.lower())
            if answer is None:
                raise ValueError("answer yes or no")
            return answer
        if self.kind == "array":
            picked = [self._choice(part.strip()) for part in text.split(",") if part.strip()]
            _bounded(len(picked), self.spec.get("minItems"), self.spec.get("maxItems"), "choices")
            return picked
        if self.choices:
            return self._choice(text)
        if self.kind in ("number", "integer"):
            return self._number(text)
        return self._string(text)

    def _choice(self, text: str) -> Any:
        for i, c in enumerate(self.choices, 1):
            if text in (str(i), c.title, str(c.value)):
                return c.value
        raise ValueError(f"choose one of {', '.join(c.title for c in self.choices)} (or its number)")

    def _number(self, text: str) -> int | float:
        try:
            value: int | float = int(text) if self.kind == "integer" else float(text)
        except ValueError:
            raise ValueError(f"not {'an integer' if self.kind == 'integer' else 'a number'}") from None
        if isinstance(value, float) and value.is_integer() and "." not in text and "e" not in text.lower():
            value = int(value)
        _bounded(value, self.spec.get("minimum"), self.spec.get("maximum"), "")
        return value

    def _string(self, text: str) -> str:
        _bounded(len(text), self.spec.get("minLength"), self.spec.get("maxLength"), "characters")
        fmt = self.spec.get("format")
        if fmt == "email" and not _EMAIL.match(text):
            raise ValueError("not an email address")
        if fmt == "uri" and not re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:\S+$", text):
            raise ValueError("not a URI (scheme:…)")
        if fmt in ("date", "date-time"):
            try:
                (datetime.date if fmt == "date" else datetime.datetime).fromisoformat(text)
            except ValueError:
                raise ValueError(
                    f"not a {fmt} (ISO 8601, e.g. {'2026-01-31' if fmt == 'date' else '2026-01-31T09:30:00Z'})"
                ) from None
        return text


def _bounded(value: float, low: Any, high: Any, unit: str) -> None:
    unit = f" {unit}" if unit else ""
    if isinstance(low, int | float) and not isinstance(low, bool) and value < low:
        raise ValueError(f"at least {low:g}{unit}")
    if isinstance(high, int | float) and not isinstance(high, bool) and value > high:
        raise ValueError(f"at most {high:g}{unit}")


def fields(schema: Any) -> list[Field]:
    """The fields of a requested schema, in its order (raises :class:`FormError`)."""
    if schema is None:
        return []
    if not isinstance(schema, dict):
        raise FormError("the requested schema is not an object")
    props = schema.get("properties") or {}
    if not isinstance(props, dict):
        raise FormError("the requested schema's properties are not an object")
    if len(props) > MAX_FIELDS:
        raise FormError(f"the form asks for {len(props)} fields (at most {MAX_FIELDS} are asked)")
    listed = schema.get("required")
    required: list[Any] = listed if isinstance(listed, list) else []
    return [_field(str(name), spec, name in required) for name, spec in props.items()]


def _field(name: str, spec: Any, required: bool) -> Field:
    if not isinstance(spec, dict):
        raise FormError(f"field {shown(name, 80)!r} has no schema")
    kind = spec.get("type")
    choices = _choices(spec.get("items") if kind == "array" else spec)
    if kind not in ("string", "number", "integer", "boolean", "array") or (kind == "array" and not choices):
        raise FormError(f"field {shown(name, 80)!r} is of a type a form cannot ask ({shown(kind, 40)})")
    title = shown(spec.get("title") or name)
    return Field(name, kind, title, shown(spec.get("description") or ""), required, spec, choices)


def _choices(spec: Any) -> tuple[Choice, ...]:
    if not isinstance(spec, dict):
        return ()
    found: list[Choice] = []
    if isinstance(spec.get("enum"), list):
        given = spec.get("enumNames")
        names: list[Any] = given if isinstance(given, list) else []
        for i, v in enumerate(spec["enum"]):
            found.append(Choice(v, shown(names[i] if i < len(names) else v, 80)))
    for key in ("oneOf", "anyOf"):
        for option in spec.get(key) or []:
            if isinstance(option, dict) and "const" in option:
                found.append(Choice(option["const"], shown(option.get("title") or option["const"], 80)))
    if len(found) > MAX_CHOICES:
        raise FormError(f"a field offers {len(found)} choices (at most {MAX_CHOICES} are shown)")
    return tuple(found)


def defaults(form: list[Field]) -> dict[str, Any]:
    """The content that accepts every default (raises :class:`FormError` naming a required
    field that has none)."""
    missing = [f.name for f in form if f.required and not f.has_default]
    if missing:
        raise FormError(f"required field(s) without a default: {', '.join(shown(n, 80) for n in missing)}")
    return {f.name: f.default for f in form if f.has_default}
