"""A launcher started early (gocode/run/launching.py) hands what it holds to the run once told
to go: a descriptor closed twice is another run's by then (a concurrent run's endpoint channel,
whose launcher then failed with a broken pipe)."""

from __future__ import annotations

import asyncio
import os

import pytest

from gocode.run import runner


def test_a_launcher_told_to_go_leaves_its_status_descriptor_to_the_run():
    async def go() -> None:
        status_r, status_w = os.pipe()
        go_r, go_w = os.pipe()
        proc = await asyncio.create_subprocess_exec("sleep", "30", start_new_session=True)
        launched = runner.Launched(proc, status_r, go_w)
        got, status = launched.go()
        assert got is proc and status == status_r and os.read(go_r, 1) == b"g"
        await launched.abort()  # as the run's claims do after the run: nothing is the launcher's now
        assert proc.returncode is None  # the run's own end kills and reaps it, not a second time here
        os.fstat(status_r)  # still open: the run reads it to its end and closes it
        proc.kill()
        await proc.wait()
        for fd in (status_r, status_w, go_r):
            os.close(fd)

    asyncio.run(go())


def test_a_launcher_never_told_ends_and_gives_back_its_descriptors():
    async def go() -> None:
        status_r, status_w = os.pipe()
        go_r, go_w = os.pipe()
        proc = await asyncio.create_subprocess_exec("sleep", "30", start_new_session=True)
        launched = runner.Launched(proc, status_r, go_w)
        await launched.abort()
        assert proc.returncode is not None and os.read(go_r, 1) == b""  # EOF: it would exit
        for fd in (status_r, go_w):
            with pytest.raises(OSError):
                os.fstat(fd)
        os.close(status_w)
        os.close(go_r)

    asyncio.run(go())
