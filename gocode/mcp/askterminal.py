"""A server's elicitation asked of the person at the terminal (``/dev/tty``, never stdin:
``gocode exec -`` reads its code from stdin).

A form is shown with who asks (the server's name made printable, and how the request came, in
gocode's words: :meth:`gocode.mcp.asker.CommandLine.answer`) and the message, then each field with its title,
description, type, choices and default (Enter takes the default); a value that does not fit is
said and asked again; then the person accepts, declines or cancels. A URL request shows the
URL and the message and asks for consent: the URL is never opened here. Every text from the
server passes :func:`gocode.mcp.elicitform.shown`, and each of its lines is drawn behind a bar,
so a hostile server can neither move the cursor nor print what looks like gocode's own prompt.

The terminal is read by line with a poll and reads that never block, in a worker thread that
stops when ``stop`` is set (the call ended, or the answer timed out) or the terminal is closed,
so no thread is left reading the terminal. Closing waits for that thread to leave: a descriptor
closed under it could be reused (another terminal, a socket) and read or written by it.
"""

from __future__ import annotations

import contextlib
import os
import select
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import mcp_types as types

from gocode.errors import AskStopped, FormError
from gocode.mcp.elicitform import MAX_ANSWER, MAX_MESSAGE, Field, fields, shown
from gocode.terminal import controlling_terminal

_POLL_S = 0.1
_CLOSE_WAIT_S = 2.0


class Terminal:
    """The controlling terminal, opened for reading and writing lines."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._closed = threading.Event()
        self._in_use = threading.Lock()  # held by the worker asking: close waits for it

    @classmethod
    def open(cls) -> Terminal | None:
        """The process's controlling terminal, or None when it has none."""
        fd = controlling_terminal()
        return None if fd is None else cls(fd)

    def close(self) -> None:
        """Close it once no worker asks on it (one leaves within a poll). A worker held longer
        (its write blocked: output stopped with Ctrl-S) keeps the descriptor, open until exit."""
        self._closed.set()
        if not self._in_use.acquire(timeout=_CLOSE_WAIT_S):
            return
        try:
            if self.fd >= 0:
                os.close(self.fd)
                self.fd = -1
        finally:
            self._in_use.release()

    @contextmanager
    def claimed(self) -> Iterator[bool]:
        """Held while a worker asks; whether the terminal is still open."""
        with self._in_use:
            yield not self._closed.is_set()

    def write(self, text: str) -> None:
        data = text.encode("utf-8", "replace")
        while data:
            data = data[os.write(self.fd, data) :]

    def read_line(self, stop: threading.Event) -> str:
        """One line typed (without its newline); raises :class:`AskStopped` on ``stop``, when the
        terminal is closed, or at end of input."""
        got = b""
        blocking = os.get_blocking(self.fd)
        # Never blocked in a read: a line announced by the poll may be gone when read (another
        # reader of the same terminal took it), and stop must still be seen within a poll.
        os.set_blocking(self.fd, False)
        try:
            while not got.endswith(b"\n"):
                if stop.is_set() or self._closed.is_set():
                    raise AskStopped
                ready, _, _ = select.select([self.fd], [], [], _POLL_S)
                if not ready:
                    continue
                try:
                    chunk = os.read(self.fd, 4096)
                except BlockingIOError:
                    continue
                except OSError:  # the terminal hung up
                    raise AskStopped from None
                if not chunk:  # Ctrl-D on an empty line
                    raise AskStopped
                got += chunk
                if len(got) > MAX_ANSWER * 4:
                    got = got[: MAX_ANSWER * 4]
        finally:
            os.set_blocking(self.fd, blocking)
        return got.decode("utf-8", "replace").rstrip("\r\n")[:MAX_ANSWER]


def _said(text: str) -> str:
    """The server's multi-line text, each line behind a bar."""
    return "".join(f"  │ {line}\n" for line in shown(text, MAX_MESSAGE, lines=True).splitlines() or [""])


def ask(terminal: Terminal, who: str, params: types.ElicitRequestParams, stop: threading.Event) -> types.ElicitResult:
    """Ask ``params`` of the person at ``terminal`` on behalf of ``who`` (printable already);
    cancel when they end the input, or the terminal is closed."""
    with terminal.claimed() as open_:
        if not open_:
            return types.ElicitResult(action="cancel")
        try:
            if isinstance(params, types.ElicitRequestURLParams):
                return _url(terminal, who, params, stop)
            return _form(terminal, who, params, stop)
        except AskStopped:
            with contextlib.suppress(OSError):  # a terminal hung up takes no newline
                terminal.write("\n")
            return types.ElicitResult(action="cancel")


def _url(
    terminal: Terminal, who: str, params: types.ElicitRequestURLParams, stop: threading.Event
) -> types.ElicitResult:
    terminal.write(f"\n{who} asks you to open a link:\n{_said(params.message)}")
    terminal.write(f"  URL: {shown(params.url, 2000)}\n  (gocode does not open it; open it yourself if you agree)\n")
    while True:
        terminal.write("Agree? [y]es (accept) / [n]o (decline): ")
        answer = terminal.read_line(stop).strip().lower()
        if answer in ("y", "yes", "n", "no"):
            return types.ElicitResult(action="accept" if answer.startswith("y") else "decline")


def _form(
    terminal: Terminal, who: str, params: types.ElicitRequestFormParams, stop: threading.Event
) -> types.ElicitResult:
    terminal.write(f"\n{who} asks:\n{_said(params.message)}")
    try:
        form = fields(params.requested_schema)
    except FormError as exc:
        terminal.write(f"  (declined: {exc})\n")
        return types.ElicitResult(action="decline")
    content: dict[str, Any] = {}
    for field in form:
        value = _field(terminal, field, stop)
        if value is not _SKIPPED:
            content[field.name] = value
    while True:
        terminal.write("Send? [a]ccept / [d]ecline / [c]ancel: ")
        answer = terminal.read_line(stop).strip().lower()
        for action in ("accept", "decline", "cancel"):
            if answer in (action, action[0]):
                return types.ElicitResult(action=action, content=content if action == "accept" else None)


_SKIPPED = object()


def _field(terminal: Terminal, field: Field, stop: threading.Event) -> Any:
    about = f" — {field.description}" if field.description else ""
    terminal.write(f"  {field.title}{about}\n")
    for i, choice in enumerate(field.choices, 1):
        terminal.write(f"    {i}. {choice.title}\n")
    while True:
        terminal.write(f"  [{field.hint()}] > ")
        text = terminal.read_line(stop)
        if not text.strip():
            if field.has_default:
                return field.default
            if not field.required:
                return _SKIPPED
            terminal.write("  required: type a value\n")
            continue
        try:
            return field.parse(text)
        except ValueError as exc:
            terminal.write(f"  {exc}; try again\n")
