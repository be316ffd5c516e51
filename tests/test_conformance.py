"""The MCP conformance suite (``@modelcontextprotocol/conformance``, run by Node ≥ 22; both
installed pinned into ``.cache/conformance`` by ``make setup``) against gocode: the server
scenarios against ``gocode serve`` with the suite's reference server upstream, in passthrough
and in code mode, and the client scenarios driving ``gocode call``, ``gocode exec`` and
``gocode exec --direct`` (``tests/conformance/client.py``). Which scenarios are expected to fail,
and why, is ``tests/conformance/expected-failures.yaml``; every other one must pass, and one
listed there must still fail (so the list stays true). ``make conformance`` runs this file."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
import yaml

from tests.conftest import ROOT, background, free_port

pytestmark = pytest.mark.go

PREFIX = ROOT / ".cache" / "conformance"
NODE = PREFIX / "node_modules" / ".bin" / "node"
TSX = PREFIX / "node_modules" / ".bin" / "tsx"
SUITE = PREFIX / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
HERE = ROOT / "tests" / "conformance"
EXPECTED = yaml.safe_load((HERE / "expected-failures.yaml").read_text())
GOCODE = str(Path(sys.executable).parent / "gocode")
# The auth scenarios: the 14 the suite requires of a client (its tier 1), the 2025-03-26
# back-compat ones, its drafts and its extensions; see tests/conformance/client.py.
AUTH_SCENARIOS = tuple(f"auth/{name}" for name in (
    "metadata-default", "metadata-var1", "metadata-var2", "metadata-var3", "basic-cimd",
    "scope-from-www-authenticate", "scope-from-scopes-supported", "scope-omitted-when-undefined",
    "scope-step-up", "scope-retry-limit", "token-endpoint-auth-basic", "token-endpoint-auth-post",
    "token-endpoint-auth-none", "pre-registration",
    "2025-03-26-oauth-metadata-backcompat", "2025-03-26-oauth-endpoint-fallback",
    "resource-mismatch", "offline-access-scope", "offline-access-not-supported",
    "client-credentials-basic", "client-credentials-jwt", "cross-app-access-complete-flow",
))  # fmt: skip
CLIENT_SCENARIOS = ("initialize", "tools_call", "sse-retry", "elicitation-sep1034-client-defaults", *AUTH_SCENARIOS)
# The server scenarios that do not call the reference server's tools by name (in code mode the
# only tool is execute_go_code).
SERVER_SCENARIOS_IN_CODE_MODE = (
    "server-initialize", "logging-set-level", "ping", "tools-list", "server-sse-polling",
    "server-sse-multiple-streams", "dns-rebinding-protection",
)  # fmt: skip


def installed() -> None:
    for path in (NODE, TSX, SUITE):
        if not path.exists():
            pytest.fail(f"{path} is missing: run `make setup` (it installs Node 22 and the conformance suite)")


def node_env() -> dict[str, str]:
    # tsx and the suite start `node` by name: the one installed beside them, not the system's.
    return {**os.environ, "PATH": f"{NODE.parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def outcomes(out: Path, prefix: str = "") -> dict[str, bool]:
    """Each scenario the suite wrote results for: whether none of its checks failed."""
    found: dict[str, bool] = {}
    for checks in out.glob("**/checks.json"):
        # [prefix]<scenario>-<timestamp>; a scenario's name may hold dashes and digits, and
        # an `auth/` one is a directory deeper.
        where = checks.parent.relative_to(out).as_posix()
        name = re.sub(r"-\d{4}-\d\d-\d\dT[\d-]+Z$", "", where).removeprefix(prefix)
        found[name] = all(c.get("status") != "FAILURE" for c in json.loads(checks.read_text()))
    return found


def judge(target: str, results: dict[str, bool]) -> None:
    expected = set(EXPECTED.get(target) or {})
    failed = {name for name, ok in results.items() if not ok}
    assert not expected - set(results), f"{target}: listed as expected failures but not run: {expected - set(results)}"
    assert failed == expected, (
        f"{target}: failed but expected to pass: {sorted(failed - expected)}; "
        f"expected to fail but passed (take them off tests/conformance/expected-failures.yaml): {sorted(expected - failed)}"
    )


@pytest.fixture(scope="module")
def reference_server(tmp_path_factory) -> Iterator[str]:
    """The suite's own "everything" server (tests/conformance/everything-server.ts, from the
    suite's repository at the pinned tag), run by tsx beside its dependencies."""
    installed()
    shutil.copy(HERE / "everything-server.ts", PREFIX / "everything-server.ts")
    port = free_port()
    with background([str(TSX), str(PREFIX / "everything-server.ts")], port, env={**node_env(), "PORT": str(port)}):
        yield f"http://127.0.0.1:{port}/mcp"


@contextlib.contextmanager
def served(tmp: Path, upstream: str, code_mode: bool) -> Iterator[str]:
    config = tmp / "gocode.json"
    config.write_text(json.dumps({
        "mcpServers": {"ref": {"type": "http", "url": upstream, "timeout": 20}},
        "defaults": {"codeMode": {"enabled": code_mode, "sandbox": "off"}},
    }))  # fmt: skip
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("GOCODE_TOKEN", "GOCODE_METRICS_TOKEN")}
    log = (tmp / "serve.log").open("w")
    proc = subprocess.Popen(
        [GOCODE, "serve", "-c", str(config), "--transport", "http", "--port", str(port)],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=log, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, (tmp / "serve.log").read_text()
            assert time.monotonic() < deadline, "gocode serve did not get ready"
            with contextlib.suppress(httpx2.TransportError):
                if httpx2.get(f"http://127.0.0.1:{port}/readyz", timeout=5).status_code == 200:
                    break
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()


def run_suite(args: list[str], out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(NODE), str(SUITE), *args, "-o", str(out)],
        cwd=ROOT, env=node_env(), capture_output=True, text=True, timeout=240,
    )  # fmt: skip


@pytest.mark.parametrize("target", ["passthrough", "code"])
def test_server_scenarios(reference_server: str, tmp_path: Path, target: str):
    with served(tmp_path, reference_server, code_mode=target == "code") as url:
        if target == "code":
            for name in SERVER_SCENARIOS_IN_CODE_MODE:
                run_suite(["server", "--url", url, "--scenario", name], tmp_path / "out")
        else:
            run_suite(["server", "--url", url, "--suite", "all"], tmp_path / "out")
    results = outcomes(tmp_path / "out", "server-")
    assert len(results) >= (len(SERVER_SCENARIOS_IN_CODE_MODE) if target == "code" else 30), results
    judge(target, results)


@pytest.mark.parametrize("mode", ["call", "exec", "direct"])
def test_client_scenarios(tmp_path: Path, mode: str):
    run_client(tmp_path, mode, CLIENT_SCENARIOS)


@pytest.mark.parametrize("mode", ["call", "exec", "direct"])
def test_client_elicitation_defaults(tmp_path: Path, mode: str):
    """A server's form answered with its defaults, as a script chooses (``--elicit defaults``)."""
    run_client(tmp_path, mode, ("elicitation-sep1034-client-defaults",))


@pytest.mark.parametrize("mode", ["call", "exec", "direct"])
def test_client_private_key_jwt(tmp_path: Path, mode: str):
    """Client credentials proved by a JWT the client's key signs (``auth.privateKeyFile``)."""
    run_client(tmp_path, mode, ("auth/client-credentials-jwt",))


def run_client(tmp_path: Path, mode: str, scenarios: tuple[str, ...]) -> None:
    installed()
    results: dict[str, bool] = {}
    for scenario in scenarios:
        out = tmp_path / scenario.replace("/", "-")
        command = f"{sys.executable} {HERE / 'client.py'} {mode}"
        p = run_suite(["client", "--command", command, "--scenario", scenario], out)
        found = outcomes(out)
        assert scenario in found, p.stdout + p.stderr
        # The suite's exit status also says whether the client itself failed (exited non-zero).
        results[scenario] = found[scenario] and p.returncode == 0
    if scenarios == CLIENT_SCENARIOS:
        judge(mode, results)
    else:  # some of them: each as the list expects it
        failed = {name for name, ok in results.items() if not ok}
        assert failed == set(EXPECTED.get(mode) or {}) & set(results), results
