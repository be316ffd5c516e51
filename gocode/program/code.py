"""The model's code before and after the Go helper parsed it (pure data, no I/O).

:class:`ModelCode` is what the model sent. :class:`Prepared` is what ``main.go`` is rendered
from: the imports (the model's, minus unused ones, plus those resolved by symbol), the
top-level declarations hoisted out of ``Run`` with the model's line and column, and Run's
body — the model's code with hoisted parts blanked, so every statement keeps its position.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gocode.program.diagnostics import Diagnostic


@dataclass(frozen=True)
class ModelCode:
    """The code as the model wrote it (parsed later, by the module cache's Go helper)."""

    source: str

    @property
    def empty(self) -> bool:
        """Whether it holds nothing but blank space and comments (so a run would do nothing)."""
        text, i = self.source, 0
        while i < len(text):
            if text[i].isspace():
                i += 1
            elif text.startswith("//", i):
                end = text.find("\n", i)
                i = len(text) if end < 0 else end + 1
            elif text.startswith("/*", i):
                end = text.find("*/", i + 2)
                if end < 0:
                    return False  # an unclosed comment: the compiler says so
                i = end + 2
            else:
                return False
        return True


@dataclass(frozen=True)
class Import:
    name: str | None  # alias, "_" or "."; None for the default name
    path: str
    line: int  # the model's line; 0 for an import added by symbol


@dataclass(frozen=True)
class Chunk:
    line: int  # 1-based position in the model's code where text starts
    column: int
    text: str


@dataclass(frozen=True)
class Prepared:
    imports: tuple[Import, ...] = ()
    hoisted: tuple[Chunk, ...] = ()
    body: str = ""
    declared: frozenset[str] = frozenset()  # top-level names the model's code declares
    notes: tuple[str, ...] = ()
    entry: str = ""  # "main" or "run" when the code is a whole program
    errors: tuple[Diagnostic, ...] = field(default=())
    phase: str = ""  # "syntax" or "imports" when errors

    @classmethod
    def from_answer(cls, doc: dict[str, Any]) -> Prepared:
        return cls(
            imports=tuple(Import(i.get("name") or None, i["path"], i.get("line", 0)) for i in doc.get("imports") or ()),
            hoisted=tuple(Chunk(h["line"], h["col"], h["text"]) for h in doc.get("hoisted") or ()),
            body=doc.get("body") or "",
            declared=frozenset(doc.get("declared") or ()),
            notes=tuple(doc.get("notes") or ()),
            entry=doc.get("entry") or "",
            errors=tuple(Diagnostic(e["file"], e["line"], e["col"], e["msg"]) for e in doc.get("errors") or ()),
            phase=doc.get("phase") or "",
        )
