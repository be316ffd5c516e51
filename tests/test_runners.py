"""Which runtime a program links (gocode.compile.runners): the reach's, unless it could tell."""

from __future__ import annotations

import pytest

from gocode.compile import runners
from gocode.compile.runners import LOOPBACK, SDK
from gocode.run.reach import ControllerLoopback, OwnSessions

pytestmark = pytest.mark.fast


def test_pooled_runs_link_the_loopback_runtime_and_direct_ones_the_sdks() -> None:
    assert ControllerLoopback({}, 1).runner == LOOPBACK
    assert OwnSessions({}).runner == SDK


@pytest.mark.parametrize(
    ("imports", "runner"),
    [
        ((), LOOPBACK),
        (('"fmt"', '"net/http"', '"encoding/json"'), LOOPBACK),  # same answers, only a bigger link
        (('"runtime/debug"',), SDK),  # ReadBuildInfo lists what was linked
        (("debug/buildinfo",), SDK),
        (('"debug/elf"',), SDK),
        (('"plugin"',), SDK),
    ],
)
def test_a_program_that_could_tell_them_apart_links_the_sdks(imports: tuple[str, ...], runner: str) -> None:
    assert runners.runner_for(LOOPBACK, imports) == runner
    assert runners.runner_for(SDK, imports) == SDK  # direct mode never gets the loopback one


def test_gocode_runner_sdk_links_every_program_with_the_sdks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runners, "SDK_ONLY", True)
    assert runners.runner_for(LOOPBACK, ()) == SDK


def test_tags() -> None:
    assert runners.tag_args(SDK) == []
    assert runners.tag_args(LOOPBACK) == ["-tags", "gocode_loopback"]
