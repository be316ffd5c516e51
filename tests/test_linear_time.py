"""What gocode runs over untrusted text runs in time linear in it: every regular expression kept
at module level, and the conversion of a tool's description and schema to Go.

They run on what comes from outside — tool results, descriptions and schemas, the model's
code, a program's output — often on the event loop, so a pattern that rescans a run from
every start (quadratic) lets 64 KB of one character freeze a server. Each pattern is run over
long repetitions of short units (its own literals, punctuation, whitespace) and must finish
each well within a bound that a quadratic pattern misses by far.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import time

import pytest

pytestmark = pytest.mark.fast

PACKAGES = [
    "gocode.mcp",
    "gocode.run",
    "gocode.view",
    "gocode.schema",
    "gocode.program",
    "gocode.tools",
    "gocode.serve",
]
MODULES = ["gocode.results", "gocode.codemode", "gocode.toolbox", "gocode.tool_formats"]
SIZE = 20_000
UNITS = [
    "a",
    "A",
    "9",
    " ",
    "\n",
    "\t",
    ".",
    "-",
    "_",
    "@",
    ":",
    "/",
    '"',
    "\\",
    "a.",
    "a-",
    "9-",
    "A ",
    "a@",
    "x.a",
    "a://",
]


def _patterns() -> list[tuple[str, re.Pattern[str]]]:
    names = list(MODULES)
    for package in PACKAGES:
        path = importlib.import_module(package).__path__
        names += [f"{package}.{m.name}" for m in pkgutil.iter_modules(path)]
    found: list[tuple[str, re.Pattern[str]]] = []
    for name in names:
        for attr, value in vars(importlib.import_module(name)).items():
            values = value if isinstance(value, (list, tuple)) else [value]
            found += [(f"{name}.{attr}", v) for v in values if isinstance(v, re.Pattern) and isinstance(v.pattern, str)]
    return found


def _units(pattern: re.Pattern[str]) -> list[str]:
    words = re.findall(r"[A-Za-z_]{2,}", pattern.pattern)[:6]
    return UNITS + [w + tail for w in words for tail in ("", " ", ":", ".", "-")]


@pytest.mark.parametrize(("where", "pattern"), _patterns(), ids=lambda v: v if isinstance(v, str) else "")
def test_pattern_is_linear(where, pattern):
    slowest, unit = 0.0, ""
    for u in _units(pattern):
        text = (u * (SIZE // len(u) + 1))[:SIZE]
        start = time.monotonic()
        for _ in pattern.finditer(text):
            pass
        if (took := time.monotonic() - start) > slowest:
            slowest, unit = took, u
    # Linear: well under 10 ms here; quadratic ones took 0.3-1.3 s at this size.
    assert slowest < 0.15, f"{where} took {slowest:.2f} s on {unit!r} * {SIZE // len(unit)}"


@pytest.mark.parametrize("unit", ["a", "a.", "Word "])
def test_a_megabyte_description_converts_in_linear_time(unit):
    """A server's descriptions are untrusted and of any length: splitting one into words grew
    a string char by char (quadratic: 1 MB of "a" took 18 s to convert)."""
    from gocode.schema.builder import build_package
    from gocode.toolset import ServerTools, ToolInfo, ToolSet

    text = (unit * ((1 << 20) // len(unit) + 1))[: 1 << 20]
    schema = {"type": "object", "properties": {"p": {"type": "string", "description": text}}}
    start = time.monotonic()
    package = build_package(ToolSet((ServerTools("s", (ToolInfo("s", "t", text, schema),)),)))
    assert [f.tool for f in package.funcs] == ["t"]
    assert time.monotonic() - start < 3.0
