"""Claims a run makes and gives back across cancellation: worker-thread calls that finish.

A run is often cancelled (a step pass that went quiet, a client that hung up, a timeout), and
under anyio an ``await`` in a cancelled scope raises again at once, so a release written as
``await to_thread(...)`` in a ``finally`` never runs, and a claim made in a thread whose waiter
was cancelled is lost. These helpers submit the work first and then wait shielded: the work
runs to its end whatever happens to the caller. Whoever claims registers the release in a
(sync or async) exit stack at once; see :class:`gocode.run.sandbox.Confinement`.

An anyio shield holds off anyio's cancellations only: a plain asyncio ``Task.cancel()`` still
ends a shielded ``await`` (a task group's teardown, ``wait_for`` and an outer cancel, a
client's cancel delivered twice). :func:`to_the_end` is the wait that no cancellation ends.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")
RELEASE_WAIT_S = 30.0  # how long a run's end waits for its releases; they finish regardless
# Work whose caller stopped waiting (its bound passed): referenced here until it ends, as the
# event loop keeps only weak references to tasks.
_left: set[asyncio.Future[Any]] = set()


async def claim(make: Callable[[], T], undo: Callable[[T], object]) -> T:
    """``make()`` in a worker thread, its result given to the caller; if the caller is
    cancelled meanwhile the thread still finishes, and ``undo`` gives back what it made."""
    import anyio  # here: listing tools from kept listings imports this module, not the SDK's stack

    done = asyncio.get_running_loop().run_in_executor(None, make)
    try:
        with anyio.CancelScope(shield=True):
            made = await asyncio.shield(done)
    except BaseException:
        done.add_done_callback(lambda f: _undo(f, undo))
        raise
    return made


def _undo(done: asyncio.Future[T], undo: Callable[[T], object]) -> None:
    if not done.cancelled() and done.exception() is None:
        undo(done.result())


async def release(give_back: Callable[[], object], bound: float = RELEASE_WAIT_S) -> None:
    """``give_back()`` in a worker thread, run to its end even when the caller is cancelled;
    the caller waits for it at most ``bound`` seconds (see :func:`to_the_end`)."""
    await to_the_end(asyncio.get_running_loop().run_in_executor(None, give_back), bound)


async def to_the_end(work: Awaitable[object], bound: float = RELEASE_WAIT_S) -> None:
    """``work`` run to its end in a task of its own, whatever happens to the caller, who waits
    for it at most ``bound`` seconds however many cancellations arrive meanwhile (anyio's or
    asyncio's), and then raises the first of them again. Without one, ``work``'s own error is
    raised; past the bound the caller goes on and ``work`` still finishes."""
    import anyio

    done = asyncio.ensure_future(work)
    _left.add(done)
    done.add_done_callback(_ended)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + bound
    cancelled: asyncio.CancelledError | None = None
    # The shield keeps anyio from cancelling the task again at every step of the loop.
    with anyio.CancelScope(shield=True):
        while not done.done() and (left := deadline - loop.time()) > 0:
            try:
                await asyncio.wait({done}, timeout=left)
            except asyncio.CancelledError as exc:
                cancelled = cancelled or exc
    if cancelled is not None:
        raise cancelled
    if done.done():
        done.result()


def _ended(done: asyncio.Future[Any]) -> None:
    _left.discard(done)
    if not done.cancelled():
        done.exception()  # retrieved: a caller past its bound no longer reads it
