"""Compiler messages located in the model's code, as the build reports them.

The program stage makes them (explaining and scrubbing them for the model) and the compile
and run stages report them, so the type lives here, below both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Diagnostic:
    """A compiler message located in the model's own code (``file`` is usually ``model.go``)."""

    file: str
    line: int
    column: int
    message: str


_DIAG = re.compile(r"^(?P<file>[^\s:][^:]*\.go):(?P<line>\d+)(?::(?P<col>\d+))?: (?P<msg>.*)$")


def parse_diagnostics(text: str) -> list[Diagnostic]:
    out = []
    for line in text.splitlines():
        m = _DIAG.match(line.strip())
        if m:
            out.append(Diagnostic(m["file"], int(m["line"]), int(m["col"] or 0), m["msg"]))
    return out
