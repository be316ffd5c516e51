"""How deep JSON nests, and JSON text with what lies too deep cut off. Pure.

The SDK's JSON parser refuses a message nested deeper than about 200 levels, and a refused
line is no message at all: one tool whose schema nests ~100 objects deep (two levels each)
made its server's whole ``tools/list`` answer vanish, so the server failed on its timeout.
:func:`prune` keeps such a message readable (what lies below :data:`MESSAGE_DEPTH` becomes
``null``) and :func:`deeper_than` lets the listing leave out the one tool that nests too
deep, with a note, keeping its server's other tools.
"""

from __future__ import annotations

import re
from typing import Any

SCHEMA_DEPTH = 64  # levels of objects and arrays a tool's schema may nest (32 nested objects)
MESSAGE_DEPTH = 128  # levels of a message kept (below the SDK parser's limit, above any schema's)
PRUNE_CHARS = 16 << 20  # a longer line is not rewritten (the Go SDK's stdio frame cap)
# Where it must run on the event loop (inside the SDK's HTTP client): at most ~0.4 s of work.
LOOP_PRUNE_CHARS = 1 << 20

# A string (escapes included) or a bracket: what decides nesting. Possessive: linear.
_TOKEN = re.compile(r'"(?:[^"\\]++|\\.)*+"|[\[\]{}]')


def deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` nests objects and arrays more than ``limit`` levels deep (iterative:
    no recursion whatever the depth)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth + 1 > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def prune(text: str, limit: int = MESSAGE_DEPTH, max_chars: int = PRUNE_CHARS) -> str | None:
    """``text`` (one JSON document) with every object or array that starts deeper than
    ``limit`` levels replaced by ``null``; None when nothing lay that deep, or ``text`` is
    longer than ``max_chars`` or its brackets do not balance. Linear, about 0.4 s per MiB of
    brackets: run it off the event loop, or on a short text."""
    if len(text) > max_chars:
        return None
    out: list[str] = []
    depth, kept_to, cut_from = 0, 0, -1
    for m in _TOKEN.finditer(text):
        token = m.group()
        if token[0] == '"':
            continue
        if token in "[{":
            depth += 1
            if depth == limit + 1 and cut_from < 0:
                cut_from = m.start()
        else:
            depth -= 1
            if depth < 0:
                return None
            if depth == limit and cut_from >= 0:
                out += [text[kept_to:cut_from], "null"]
                kept_to, cut_from = m.end(), -1
    if depth != 0 or not out:
        return None
    out.append(text[kept_to:])
    return "".join(out)
