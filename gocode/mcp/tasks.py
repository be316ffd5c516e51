"""A tool that runs only as an MCP task (``execution.taskSupport: "required"``), called as one.

Such a tool (2025-11-25; an extension since 2026-07-28) answers ``tools/call`` only when the
request carries a ``task`` field, and then at once, with a ``CreateTaskResult``; the work goes
on, ``tasks/get`` tells how it is going, ``tasks/result`` answers the call's own result once the
task has ended (the server holds the request until then) and ``tasks/cancel`` stops it. The
Python SDK (2.3.0) has the types but sends none of these requests, so :func:`call_task` sends
them itself (:func:`gocode.mcp.sdk_private.raw_request`), and its caller sees one ordinary call:

- the result, or the server's error, as a plain ``tools/call`` would have answered;
- progress while the task runs: the server's own notifications for the call's progress token
  (valid for the task's whole life, after the ``CreateTaskResult`` too: :class:`ProgressRoutes`
  takes them from the session's message handler), and else each new status message;
- the task cancelled whenever the call ends before the task does (the call's timeout, its client
  went away, the program that made it ended), within :data:`CANCEL_TIMEOUT_S`.

gocode's own clients (serve's, a program's through the loopback) therefore get such a tool as a
plain one (:mod:`gocode.mcp.tasksupport` drops ``execution`` from the definition they are
shown). A tool whose task support is ``"optional"`` is called plainly. Everything the server answers is
untrusted: a task that is not one, a status outside the five the spec names, another task's id
or a ``tasks/result`` that is not a tool result ends the call with the reason
(:class:`~gocode.errors.UpstreamError`), and the task is cancelled.
"""

from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.shared.dispatcher import ProgressFnT
from pydantic import ValidationError

from gocode.errors import UpstreamError
from gocode.mcp.sdk_private import raw_request

log = logging.getLogger("gocode.mcp.tasks")

STATUSES = frozenset({"working", "input_required", "completed", "failed", "cancelled"})
TERMINAL = frozenset({"completed", "failed", "cancelled"})
POLL_DEFAULT_S = 1.0  # between two tasks/get, when the server suggests no pollInterval
POLL_MIN_S = 0.05  # a server's pollInterval is kept within these: neither a busy loop nor silence
POLL_MAX_S = 5.0
CANCEL_TIMEOUT_S = 5.0  # for the server to answer tasks/cancel once the call is over
MAX_ID_CHARS = 256  # a task id longer than this is not one a server meant
MAX_MESSAGE_CHARS = 1024  # of a status message passed on as progress

_tokens = itertools.count(1)


class ProgressRoutes:
    """The progress callbacks of the task calls in flight on one session, by progress token.

    A task's progress goes on after the ``CreateTaskResult`` has answered the request, when the
    SDK no longer knows the token: the session's message handler hands every progress
    notification to :meth:`deliver`, which passes on those with a token of a call here.
    """

    def __init__(self) -> None:
        self._routes: dict[str, _Reporter] = {}

    @contextmanager
    def route(self, progress: ProgressFnT | None) -> Iterator[_Reporter]:
        reporter = _Reporter(progress, f"gocode-task-{next(_tokens)}")
        if progress is not None:
            self._routes[reporter.token] = reporter
        try:
            yield reporter
        finally:
            self._routes.pop(reporter.token, None)

    async def deliver(self, params: types.ProgressNotificationParams) -> None:
        token = params.progress_token
        reporter = self._routes.get(token) if isinstance(token, str) else None
        if reporter is not None:
            await reporter.own(params.progress, params.total, params.message)


@dataclass
class _Reporter:
    """One task call's progress: the server's own notifications, else its status messages (a
    count that grows with each), never both, so the numbers a client sees only grow."""

    progress: ProgressFnT | None
    token: str
    server_speaks: bool = False
    steps: int = 0

    async def own(self, progress: float, total: float | None, message: str | None) -> None:
        if self.progress is not None and math.isfinite(progress):
            self.server_speaks = True
            await self.progress(progress, total, message)

    async def status(self, task: TaskState) -> None:
        if self.progress is None or self.server_speaks:
            return
        self.steps += 1
        await self.progress(float(self.steps), None, task.message or task.status)


@dataclass(frozen=True)
class TaskState:
    """What gocode reads of a task the server reported (only what it uses, each checked)."""

    id: str
    status: str
    message: str
    poll_s: float


def parse_task(raw: Any, label: str, tool: str, what: str) -> TaskState:
    """The task in ``raw`` (``what`` the server answered for ``tool``), or the reason it is none."""
    if not isinstance(raw, Mapping):
        raise UpstreamError(f"{label}: {what} for {tool!r} is not a task")
    task_id, status = raw.get("taskId"), raw.get("status")
    if not isinstance(task_id, str) or not 0 < len(task_id) <= MAX_ID_CHARS:
        raise UpstreamError(f"{label}: {what} for {tool!r} has no usable taskId")
    if not isinstance(status, str) or status not in STATUSES:  # a dict would not even hash
        shown = repr(status)[:80]
        raise UpstreamError(f"{label}: {what} for {tool!r} has the status {shown}, not one of {sorted(STATUSES)}")
    message = raw.get("statusMessage")
    message = message[:MAX_MESSAGE_CHARS] if isinstance(message, str) else ""
    poll = raw.get("pollInterval")
    poll_s = poll / 1000 if isinstance(poll, int | float) and math.isfinite(poll) else POLL_DEFAULT_S
    return TaskState(task_id, str(status), message, min(max(poll_s, POLL_MIN_S), POLL_MAX_S))


def _tool_result(raw: Any, label: str, tool: str) -> types.CallToolResult:
    try:
        return types.CallToolResult.model_validate(raw, by_name=False)
    except ValidationError:
        raise UpstreamError(f"{label}: the result of the task for {tool!r} is not a tool result") from None


async def call_task(
    session: ClientSession,
    tool: str,
    arguments: dict[str, Any],
    *,
    label: str,
    routes: ProgressRoutes,
    progress: ProgressFnT | None = None,
    meta: Mapping[str, Any] | None = None,
) -> types.CallToolResult:
    """Call ``tool`` as a task and answer its result (see the module doc); ``label`` names the
    server in messages. The caller bounds the time; the server's protocol errors are raised as
    :class:`~mcp.shared.exceptions.MCPError`, an answer that is not what the spec says as
    :class:`~gocode.errors.UpstreamError`."""
    with routes.route(progress) as reporter:
        params: dict[str, Any] = {"name": tool, "arguments": arguments, "task": {}}
        out_meta = dict(meta or {})
        if progress is not None:
            out_meta["progressToken"] = reporter.token
        if out_meta:
            params["_meta"] = out_meta
        created = await raw_request(session, "tools/call", params)
        if isinstance(created, Mapping) and "task" not in created:
            return _tool_result(created, label, tool)  # the server did the work at once
        raw_task = created.get("task") if isinstance(created, Mapping) else None
        task_id = raw_task.get("taskId") if isinstance(raw_task, Mapping) else None
        ended = False
        try:
            task = parse_task(raw_task, label, tool, "the task created")
            if task.message:
                await reporter.status(task)
            raw = await _outcome(session, task, reporter, label, tool)
            ended = True
            return _tool_result(raw, label, tool)
        finally:
            if not ended and isinstance(task_id, str) and 0 < len(task_id) <= MAX_ID_CHARS:
                await _cancel(session, task_id)


async def _outcome(session: ClientSession, task: TaskState, reporter: _Reporter, label: str, tool: str) -> Any:
    """``tasks/result``'s answer; meanwhile ``tasks/get`` reports the status, and a status that is
    not one ends the wait."""
    outcome: list[Any] = []
    failure: list[BaseException] = []
    async with anyio.create_task_group() as tg:

        async def fetch() -> None:
            try:
                outcome.append(await raw_request(session, "tasks/result", {"taskId": task.id}))
            except Exception as exc:
                failure.append(exc)
            tg.cancel_scope.cancel()

        async def watch() -> None:
            try:
                await _watch(session, task, reporter, label, tool)
            except Exception as exc:
                failure.append(exc)
                tg.cancel_scope.cancel()

        tg.start_soon(fetch)
        tg.start_soon(watch)
    if failure:
        raise failure[0]
    return outcome[0]


def news(before: TaskState, now: TaskState) -> bool:
    """Whether a polled task has something new to say as progress: a message is said once (a task
    that ends keeping its last message has nothing new), a bare status when it changes."""
    if now.message:
        return now.message != before.message
    return now.status != before.status


async def _watch(session: ClientSession, task: TaskState, reporter: _Reporter, label: str, tool: str) -> None:
    while task.status not in TERMINAL:
        await anyio.sleep(task.poll_s)
        now = parse_task(await raw_request(session, "tasks/get", {"taskId": task.id}), label, tool, "tasks/get")
        if now.id != task.id:
            raise UpstreamError(f"{label}: tasks/get for {tool!r} answered about another task")
        if news(task, now):
            await reporter.status(now)
        task = now


async def _cancel(session: ClientSession, task_id: str) -> None:
    """Ask the server to stop the task, whatever ended the call (shielded, bounded, best effort:
    a task already over is refused, and a session that is gone cannot be asked)."""
    with anyio.CancelScope(shield=True), anyio.move_on_after(CANCEL_TIMEOUT_S):
        try:
            await raw_request(session, "tasks/cancel", {"taskId": task_id})
        except Exception as exc:
            log.debug("tasks/cancel for %s was not answered: %s", task_id, exc)
