"""A long execute_go_code over `gocode serve`, called by the TypeScript SDK's real client (from
npm): with a progress token and resetTimeoutOnProgress it keeps waiting past its own timeout,
because serve sends a progress notification every 10 s of silence (gocode/serve/heartbeat.py);
and the default codeMode.timeout answers before that SDK's default 60 s."""

from __future__ import annotations

import json
import subprocess
import uuid

import pytest

from gocode.config import DEFAULT_TIMEOUT_S
from gocode.serve.heartbeat import INTERVAL_S
from tests.conftest import ROOT
from tests.test_ops import Served, start, stop

pytestmark = pytest.mark.go

SDK = ROOT / ".cache" / "npm" / "node_modules" / "@modelcontextprotocol" / "sdk"
TOKEN = "ts-token-" + uuid.uuid4().hex
# Silent for longer than the client's timeout below, so only the heartbeat can keep it waiting.
QUIET = 'time.Sleep(23 * time.Second)\nfmt.Println("done")'
CLIENT_TIMEOUT_MS = 15_000


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Served:
    if not (SDK / "dist" / "esm" / "client" / "index.js").exists():
        pytest.fail(f"{SDK} is missing: run `make setup` (it installs the npm sample servers and their SDK)")
    s = start(tmp_path_factory.mktemp("ts"), env={"GOCODE_TOKEN": TOKEN})
    yield s
    stop(s)


def ts_call(s: Served, code: str, progress: bool) -> dict:
    p = subprocess.run(
        ["node", str(ROOT / "tests" / "ts_client.mjs"), str(SDK), s.url + "/mcp", TOKEN, code,
         str(CLIENT_TIMEOUT_MS), "1" if progress else "0"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_the_default_timeout_answers_before_the_ts_sdks_default():
    assert DEFAULT_TIMEOUT_S + 5 < 60  # room for a build on top
    assert 2 * INTERVAL_S < CLIENT_TIMEOUT_MS / 1000 + 10


def test_a_quiet_run_keeps_a_client_that_asked_for_progress_waiting(served):
    got = ts_call(served, QUIET, progress=True)
    assert got["ok"], got
    assert got["text"] == "done\n"
    beats = [p for p in got["progress"] if (p["message"] or "").startswith("still working")]
    assert len(beats) >= 2, got["progress"]
    values = [p["progress"] for p in got["progress"]]
    assert values == sorted(values) and len(set(values)) == len(values), values


def test_without_progress_the_clients_own_timeout_applies(served):
    got = ts_call(served, QUIET, progress=False)
    assert got["ok"] is False and got["code"] == -32001, got  # the SDK's "Request timed out"
