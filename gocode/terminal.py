"""Text from outside (a server's tool names, descriptions and errors, a program's output) as a
terminal should print it: control characters (escape sequences can retitle, clear or rewrite a
screen) and the bidirectional overrides that reorder what is read become ``?``; newline and tab
stay."""

from __future__ import annotations

import re

_UNSHOWABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def terminal_text(text: str) -> str:
    """``text`` with every control character but newline and tab, and every bidirectional
    override, replaced by ``?``."""
    return _UNSHOWABLE.sub("?", text)
