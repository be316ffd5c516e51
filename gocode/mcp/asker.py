"""How the command line answers a server's elicitation: ``gocode call``, ``gocode exec`` and
the channel of a direct program (:mod:`gocode.mcp.elicitchannel`).

A :class:`CommandLine` is a :class:`~gocode.mcp.backchannel.Caller` with elicitation and without
sampling, so the backchannel's bounds (a budget per call, one request at a time, a timeout)
apply to it as to a client of ``gocode serve``. What it answers is the script's choice
(:data:`Policy`): ``ask`` the person at the terminal (:mod:`gocode.mcp.askterminal`),
``defaults`` (accept with the schema's defaults; decline when a required field has none, and
decline a URL: consent is not given on anyone's behalf) or ``decline``. Each answer is said on
stderr in one line (server, message, action), so a script's log shows what was answered for
its user. A request a program relays (a direct run's channel) is shown as relayed, on the
terminal and in that line: the program holds the session, so the server's name is its word.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Literal, get_args

import anyio
import mcp_types as types

from gocode.errors import ExecRequestError, FormError
from gocode.mcp.askterminal import Terminal, ask
from gocode.mcp.backchannel import ASKING_SERVER, ElicitAnswer, SamplingAnswer
from gocode.mcp.elicitform import defaults, fields, shown

Policy = Literal["ask", "defaults", "decline"]
POLICIES: tuple[str, ...] = get_args(Policy)
Say = Callable[[str], None]


class CommandLine:
    """The command line as the client a server's elicitation reaches (see the module's docstring)."""

    sampling = False
    elicitation = True

    def __init__(self, policy: Policy, say: Say, terminal: Terminal | None = None) -> None:
        if policy == "ask" and terminal is None:
            raise ValueError("asking needs a terminal")
        self.policy = policy
        self._say = say
        self._terminal = terminal
        self._one_at_a_time = anyio.Lock()  # one terminal: several servers' questions never interleave

    def say(self, line: str) -> None:
        """One line where this command line says its answers (stderr)."""
        self._say(line)

    def close(self) -> None:
        if self._terminal is not None:
            self._terminal.close()
            self._terminal = None

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        return None  # the command line prints a server's log messages nowhere (as before)

    async def sample(self, params: types.CreateMessageRequestParams) -> SamplingAnswer:
        return types.ErrorData(code=types.INVALID_REQUEST, message="Sampling not supported")

    async def elicit(self, params: types.ElicitRequestParams) -> ElicitAnswer:
        return await self.answer(ASKING_SERVER.get() or "a server", params)

    async def answer(self, server: str, params: types.ElicitRequestParams, via: str = "") -> types.ElicitResult:
        """The answer to ``server``'s request, said on stderr; ``via``: gocode's own words for
        who brought it, when not the server's session gocode holds."""
        who = shown(server, 80) + (f" ({via})" if via else "")
        why = ""
        if self.policy == "ask":
            assert self._terminal is not None
            async with self._one_at_a_time:
                result = await _asked(self._terminal, who, params)
        elif self.policy == "defaults" and isinstance(params, types.ElicitRequestFormParams):
            try:
                result = types.ElicitResult(action="accept", content=defaults(fields(params.requested_schema)))
            except FormError as exc:
                result, why = types.ElicitResult(action="decline"), f" ({exc})"
        else:
            result = types.ElicitResult(action="decline")
            why = " (a link is not agreed to on your behalf)" if self.policy == "defaults" else ""
        how = "asked" if self.policy == "ask" else f"--elicit {self.policy}"
        self._say(f"gocode: {who} asked {shown(params.message, 200)!r}: {result.action}{why} [{how}]")
        return result


async def _asked(terminal: Terminal, who: str, params: types.ElicitRequestParams) -> types.ElicitResult:
    """The person's answer, read in a worker thread that stops when this is cancelled."""
    stop = threading.Event()
    try:
        return await anyio.to_thread.run_sync(ask, terminal, who, params, stop, abandon_on_cancel=True)
    finally:
        stop.set()


def on_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def command_line(policy: Policy | None, say: Say = on_stderr) -> CommandLine | None:
    """The answerer for ``policy``; None for None (nobody answers: elicitation is not declared)."""
    if policy is None:
        return None
    if policy not in POLICIES:
        raise ExecRequestError(f"--elicit takes one of {', '.join(POLICIES)} (got {policy!r})")
    if policy != "ask":
        return CommandLine(policy, say)
    terminal = Terminal.open()
    if terminal is None:
        raise ExecRequestError("--elicit ask needs a terminal (/dev/tty could not be opened)")
    return CommandLine("ask", say, terminal)


@contextmanager
def answering(policy: Policy | None, say: Say = on_stderr) -> Iterator[CommandLine | None]:
    """The answerer for ``policy`` (:func:`command_line`) while the block runs; its terminal is
    closed after."""
    asker = command_line(policy, say)
    try:
        yield asker
    finally:
        if asker is not None:
            asker.close()
