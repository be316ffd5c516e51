"""Lifetimes and concurrency: sessions, locks and caches belong to what made them.

A failure on an old upstream session must not close the one opened since; locks must work
from any event loop (``SyncToolbox`` runs its own, on a thread); the HTTP server forgets
client sessions that ended.
"""

from __future__ import annotations

import sys

import anyio
import pytest

from gocode.upstream import Upstream, UpstreamError
from tests.conftest import ROOT, config_from

SESSION_SERVER = str(ROOT / "tests" / "servers" / "session_server.py")


def _text(result) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def test_a_failure_on_an_old_session_does_not_close_the_new_one(tmp_path):
    """Call B is in flight on session 1 when call A fails there and closes it; call C opens
    session 2. B's failure arrives late, on session 1: it must not close session 2 under C."""
    starts = tmp_path / "starts"
    server = config_from(
        {"s": {"command": sys.executable, "args": [SESSION_SERVER, "--start-log", str(starts)]}}
    ).mcp_servers["s"]

    async def changed(_: str) -> None:
        pass

    async def go() -> None:
        async with anyio.create_task_group() as tg:
            up = Upstream("s", server, tg, changed)
            await up.start()
            late: dict[str, object] = {}

            async def in_flight() -> None:
                try:
                    late["b"] = await up.call("slow", {"seconds": 2}, 10)
                except UpstreamError as exc:
                    late["b"] = exc

            tg.start_soon(in_flight)
            await anyio.sleep(0.3)
            with pytest.raises(UpstreamError):
                await up.call("malformed", {}, 10)
            c = await up.call("slow", {"seconds": 1.5}, 10)
            assert _text(c) == "slept 1.5"
            assert isinstance(late["b"], UpstreamError), late
            assert _text(await up.call("slow", {"seconds": 0}, 10)) == "slept 0"
            assert starts.read_text().splitlines() == ["start", "start"]
            up.stop()
            tg.cancel_scope.cancel()

    anyio.run(go)
