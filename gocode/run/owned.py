"""Claims a run makes and gives back across cancellation: worker-thread calls that finish.

A run is often cancelled (a step pass that went quiet, a client that hung up, a timeout), and
under anyio an ``await`` in a cancelled scope raises again at once, so a release written as
``await to_thread(...)`` in a ``finally`` never runs, and a claim made in a thread whose waiter
was cancelled is lost. These helpers submit the work first and then wait shielded: the work
runs to its end whatever happens to the caller. Whoever claims registers the release in a
(sync or async) exit stack at once; see :class:`gocode.run.sandbox.Confinement`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
RELEASE_WAIT_S = 30.0  # how long a run's end waits for its releases; they finish regardless


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
    the caller waits for it (shielded) at most ``bound`` seconds."""
    done = asyncio.get_running_loop().run_in_executor(None, give_back)
    import anyio

    with anyio.CancelScope(shield=True), anyio.move_on_after(bound):
        await asyncio.shield(done)
