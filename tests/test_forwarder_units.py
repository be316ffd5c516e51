"""The netns forwarder's places, without a sandbox: a run never holds more than its share, a
heavier run gives up its quietest connection first, and a connection shed before its task ran
is closed (the program sees it end instead of waiting on it)."""

from __future__ import annotations

import asyncio
import socket

import pytest

from gocode.run import forwarder
from gocode.run.forwarder import _ended, _Forwarding, _Pair, _Places

pytestmark = pytest.mark.fast


def _held(run: _Forwarding, n: int, **state: object) -> None:
    """``n`` connections held by ``run``, their tasks having taken them (no socket left here)."""
    for _ in range(n):
        pair = _Pair(socket.socket())
        assert pair.conn is not None
        pair.conn.close()
        pair.conn = None
        for name, value in state.items():
            setattr(pair, name, value)
        run.pairs.append(pair)


def test_a_run_stays_within_its_share_while_places_are_free() -> None:
    async def go() -> None:
        places = _Places(limit=12)
        busy, other, third = _Forwarding(), _Forwarding(), _Forwarding()
        places.runs |= {busy, other, third}
        _held(busy, 4, asked=True)  # its share: 12 places among 3 runs
        assert places.total() == 4
        assert not places._take(busy)  # 8 places free, but taking one would put it above its share
        assert places._take(other) and other.reserved

    asyncio.run(go())


def test_a_run_at_its_share_makes_room_from_its_own_idle_connection() -> None:
    async def go() -> None:
        places = _Places(limit=12)
        run, other = _Forwarding(), _Forwarding()
        places.runs |= {run, other}
        _held(run, 6, asked=True)
        run.pairs[2].idle_since = asyncio.get_running_loop().time() - 1.0
        idle = run.pairs[2]
        assert places._take(run)
        assert idle not in run.pairs and run.held == 6  # five connections and the place reserved

    asyncio.run(go())


def test_a_run_below_its_share_takes_from_the_heaviest_its_silent_connection_first() -> None:
    # Six places, one run holding them all; a second run comes: the shares are 3 each.
    async def go() -> None:
        places = _Places(limit=6)
        heavy, newcomer = _Forwarding(), _Forwarding()
        places.runs |= {heavy, newcomer}
        _held(heavy, 2, asked=True)
        _held(heavy, 1, asked=False)  # connected, never sent a byte
        _held(heavy, 3, asked=True)
        silent = heavy.pairs[2]
        assert places._take(newcomer)
        assert silent not in heavy.pairs and len(heavy.pairs) == 5
        newcomer.reserved = False
        _held(newcomer, 1, asked=True)  # the place taken: the six are held again
        newest = heavy.pairs[-1]
        assert places._take(newcomer)  # no silent one left: its newest goes
        assert newest not in heavy.pairs

    asyncio.run(go())


def test_a_connection_not_yet_taken_by_its_task_is_not_counted_silent() -> None:
    async def go() -> None:
        run = _Forwarding()
        mine = socket.socket()
        waiting = _Pair(mine)  # accepted; its request may be in the socket already
        run.pairs.append(waiting)
        _held(run, 1, asked=True)
        assert run.give_up(idle_only=False)  # the newest goes, not the older one waiting
        assert run.pairs == [waiting]
        mine.close()

    asyncio.run(go())


def test_a_connection_shed_before_its_task_ran_is_closed() -> None:
    async def go() -> socket.socket:
        places = _Places(limit=4)
        run = _Forwarding()
        places.runs.add(run)
        mine, theirs = socket.socketpair()
        pair = _Pair(mine)
        pair.task = asyncio.ensure_future(forwarder._forward(1, pair))
        pair.task.add_done_callback(lambda _: _ended(places, run, pair))
        run.pairs.append(pair)
        assert run.give_up(idle_only=False)  # before the task's first step
        for _ in range(3):
            await asyncio.sleep(0)
        assert pair.task.cancelled()
        return theirs

    theirs = asyncio.run(go())
    theirs.settimeout(5)
    assert theirs.recv(1) == b""  # ended, not left open with the request unread
    theirs.close()


def test_a_quiet_streamed_answer_is_not_idle_until_its_last_chunk() -> None:
    # As uvicorn's h11 writes them: the head, an event, then (maybe in the same read) the end.
    pair = _Pair(socket.socket())
    assert pair.conn is not None
    pair.conn.close()
    pair.sent()
    pair.answered(b"HTTP/1.1 200 \r\ncontent-type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n", 1.0)
    pair.answered(b"1c\r\nevent: message\r\ndata: {}\r\n\r\n\r\n", 2.0)
    assert not pair.idle(60.0)  # a progress event, then a minute of quiet: still answering
    pair.answered(b"0\r\n\r\n", 61.0)
    assert pair.idle(62.0)
    pair.sent()
    pair.answered(b"HTTP/1.1 200 \r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", 70.0)
    assert pair.idle(71.0)  # the whole stream in one read
    pair.sent()
    pair.answered(b"HTTP/1.1 200 \r\ncontent-length: 2\r\ncontent-type: application/json\r\n\r\n{}", 80.0)
    assert pair.idle(81.0) and not pair.idle(80.01)
