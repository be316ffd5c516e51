"""The waits of a run's end that no cancellation ends (gocode/run/owned.py): an anyio shield
holds off anyio's cancellations only, and a plain asyncio ``Task.cancel()`` delivered twice
used to end the wait for an early set-up before it was done, so nothing was given back."""

from __future__ import annotations

import asyncio

import anyio
import pytest

from gocode.run import owned

pytestmark = pytest.mark.fast


async def cancelled_twice_while(work_started: asyncio.Event, waiter: asyncio.Task[None]) -> None:
    await work_started.wait()
    await asyncio.sleep(0)  # the waiter is in its wait
    waiter.cancel()
    await asyncio.sleep(0.01)
    waiter.cancel()


def test_work_runs_to_its_end_and_the_caller_waits_however_often_cancelled():
    async def go() -> None:
        started, finish, done = asyncio.Event(), asyncio.Event(), []

        async def give_back() -> None:
            started.set()
            await finish.wait()
            done.append("given back")

        async def run_end() -> None:
            await owned.to_the_end(give_back(), 30)
            done.append("went on")  # never: the cancellation is raised once the work is done

        waiter = asyncio.ensure_future(run_end())
        await cancelled_twice_while(started, waiter)
        await asyncio.sleep(0.01)
        assert not waiter.done() and done == []  # still waiting for the work
        finish.set()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        assert done == ["given back"]

    asyncio.run(go())


def test_anyio_cancellation_is_raised_after_the_work_too():
    async def go() -> None:
        done: list[str] = []

        async def give_back() -> None:
            await anyio.sleep(0.2)
            done.append("given back")

        with anyio.CancelScope() as scope:
            scope.cancel()
            await owned.to_the_end(give_back(), 30)
            await anyio.sleep(0)  # the scope's cancellation, held off during the wait, lands here
            done.append("went on")
        assert done == ["given back"] and scope.cancelled_caught

    anyio.run(go)


def test_past_its_bound_the_caller_goes_on_and_the_work_still_finishes():
    async def go() -> None:
        done: list[str] = []

        async def give_back() -> None:
            await asyncio.sleep(0.3)
            done.append("given back")

        await owned.to_the_end(give_back(), 0.05)
        assert done == []
        async with asyncio.timeout(10):
            while not done:
                await asyncio.sleep(0.01)

    asyncio.run(go())


def test_the_works_own_error_reaches_the_caller():
    async def failing() -> None:
        raise OSError("cannot remove")

    with pytest.raises(OSError, match="cannot remove"):
        asyncio.run(owned.to_the_end(failing(), 5))
