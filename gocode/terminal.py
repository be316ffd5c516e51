"""Text from outside (a server's tool names, descriptions and errors, a program's output) as a
terminal should print it: control characters (escape sequences can retitle, clear or rewrite a
screen) and the bidirectional overrides that reorder what is read become ``?``; newline and tab
stay. And the controlling terminal itself (:func:`controlling_terminal`), found without loading
anything heavy: a command decides whether it can ask someone before it starts its servers."""

from __future__ import annotations

import os
import re

_UNSHOWABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def terminal_text(text: str) -> str:
    """``text`` with every control character but newline and tab, and every bidirectional
    override, replaced by ``?``."""
    return _UNSHOWABLE.sub("?", text)


def controlling_terminal() -> int | None:
    """A descriptor of the process's controlling terminal (``/dev/tty``, read and written; the
    caller closes it), or None when it has none."""
    try:
        fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError:
        return None
    if not os.isatty(fd):
        os.close(fd)
        return None
    return fd


def can_ask() -> bool:
    """Whether a person at a terminal can be asked (the process has a controlling terminal)."""
    fd = controlling_terminal()
    if fd is None:
        return False
    os.close(fd)
    return True
