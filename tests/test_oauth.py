"""OAuth for remote servers (docs/oauth.md): a sign-in through a real authorization server on
loopback (tests/servers/oauth_server.py), the token kept private and reused, a direct program
given it, and what a hostile server tries refused: metadata pointing the token endpoint at
another host, a redirect with the wrong state, a token response of garbage. The browser is
tests/conformance/client.py's ``browse`` (``$BROWSER``), which follows the authorization
server's redirect back to gocode as a person agreeing would."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import stat
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from mcp.shared.auth import OAuthToken
from pydantic import ValidationError

from gocode.config import ServerConfig
from gocode.mcp.httpstatus import describe_status
from gocode.mcp.oauthredirect import Redirect
from gocode.mcp.oauthstore import TokenFile
from tests.conftest import ROOT, background, free_port
from tests.test_cli import gocode

BROWSER = shlex.join([sys.executable, str(ROOT / "tests/conformance/client.py"), "browse"]) + " %s"


@pytest.fixture
def oauth_server(request: pytest.FixtureRequest) -> Iterator[str]:
    port = free_port()
    with background([sys.executable, "-m", "tests.servers.oauth_server", str(port), request.param], port):
        yield f"http://127.0.0.1:{port}"


def configured(tmp_path: Path, base: str, **auth: object) -> tuple[Path, dict[str, str]]:
    cfg = tmp_path / "gocode.json"
    server = {"type": "http", "url": f"{base}/mcp", "timeout": 30, "auth": {"type": "oauth", **auth}}
    cfg.write_text(json.dumps({"mcpServers": {"remote": server}, "defaults": {"codeMode": {"sandbox": "off"}}}))
    return cfg, {"GOCODE_OAUTH_DIR": str(tmp_path / "oauth"), "BROWSER": BROWSER}


def hits(base: str) -> dict[str, int]:
    return httpx2.get(f"{base}/hits", timeout=10).json()


@pytest.mark.parametrize("oauth_server", ["ok"], indirect=True)
def test_sign_in_once_keep_the_token_private_and_reuse_it(oauth_server: str, tmp_path: Path):
    cfg, env = configured(tmp_path, oauth_server)
    p = gocode("call", "-c", str(cfg), "remote", "echo", "text=hi", env=env)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "echo: hi"
    assert "gocode: sign in to MCP server 'remote': open http://127.0.0.1:" in p.stderr
    (kept,) = (tmp_path / "oauth").iterdir()
    assert stat.S_IMODE((tmp_path / "oauth").stat().st_mode) == 0o700
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    token = json.loads(kept.read_text())["tokens"]["access_token"]
    assert token.startswith("tok-") and token not in p.stdout + p.stderr
    assert hits(oauth_server)["/authorize"] == 1

    # The kept token is used: no second sign-in, by gocode call nor by a direct program
    # (which gets it as its Authorization header and calls the server itself).
    p = gocode("call", "-c", str(cfg), "remote", "echo", "text=again", env=env)
    assert p.returncode == 0 and p.stdout.strip() == "echo: again", p.stderr
    before = hits(oauth_server)["/mcp authorized"]
    code = 'out, err := echo(ctx, EchoInput{Text: "direct"}); if err != nil { return err }; fmt.Println(out)'
    p = gocode("exec", "-c", str(cfg), "--direct", "-", stdin=code, env=env)
    assert p.returncode == 0, p.stderr
    assert "echo: direct" in p.stdout and token not in p.stdout + p.stderr
    after = hits(oauth_server)
    assert after["/authorize"] == 1 and after["/mcp authorized"] > before + 2  # the program's own session

    # A pooled program reaches the server through gocode: the token is nowhere in what it has.
    code = 'fmt.Println(os.Environ()); out, err := echo(ctx, EchoInput{Text: "pooled"}); if err != nil { return err }; fmt.Println(out)'
    p = gocode("exec", "-c", str(cfg), "-", stdin=code, env=env)
    assert p.returncode == 0, p.stderr
    assert "echo: pooled" in p.stdout and "GOCODE_SERVERS" in p.stdout and token not in p.stdout + p.stderr
    assert hits(oauth_server)["/authorize"] == 1


@pytest.mark.parametrize("oauth_server", ["token-elsewhere"], indirect=True)
def test_metadata_pointing_the_token_endpoint_at_another_host_is_refused(oauth_server: str, tmp_path: Path):
    cfg, env = configured(tmp_path, oauth_server)
    p = gocode("call", "-c", str(cfg), "remote", "echo", "text=hi", env=env)
    assert p.returncode != 0
    port = oauth_server.rsplit(":", 1)[1]
    assert f"refusing the OAuth request to http://localhost:{port}/token: its host 'localhost' is neither" in p.stderr
    assert "/token" not in hits(oauth_server)  # the code never went there


def call_with_key(tmp_path: Path, base: str, key: Path) -> subprocess.CompletedProcess[str]:
    """``gocode call`` of a machine client whose assertion ``key`` signs (ES256)."""
    cfg, env = configured(
        tmp_path, base, grant="client_credentials", clientId="c", privateKeyFile=str(key), signingAlgorithm="ES256"
    )
    return gocode("call", "-c", str(cfg), "remote", "echo", "text=hi", env=env)


@pytest.mark.parametrize("oauth_server", ["token-elsewhere"], indirect=True)
def test_a_signed_assertion_goes_nowhere_the_metadata_points_off_host(oauth_server: str, tmp_path: Path):
    key = tmp_path / "client.pem"
    key.write_bytes(
        ec.generate_private_key(ec.SECP256R1()).private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    p = call_with_key(tmp_path, oauth_server, key)
    assert p.returncode != 0
    port = oauth_server.rsplit(":", 1)[1]
    assert f"refusing the OAuth request to http://localhost:{port}/token: its host 'localhost' is neither" in p.stderr
    assert "/token" not in hits(oauth_server)  # the assertion never went there


@pytest.mark.parametrize("oauth_server", ["ok"], indirect=True)
@pytest.mark.parametrize(
    ("content", "message"),
    [(None, "`auth.privateKeyFile` {key} cannot be read"), ("not a key", "cannot sign a ES256 assertion")],
)
def test_a_key_that_cannot_sign_is_named(oauth_server: str, tmp_path: Path, content: str | None, message: str):
    key = tmp_path / "client.pem"
    if content is not None:
        key.write_text(content)
    p = call_with_key(tmp_path, oauth_server, key)
    assert p.returncode != 0 and message.format(key=key) in p.stderr, p.stderr
    assert "/token" not in hits(oauth_server)


@pytest.mark.parametrize("oauth_server", ["authorize-elsewhere"], indirect=True)
def test_metadata_pointing_the_sign_in_at_another_host_is_refused(oauth_server: str, tmp_path: Path):
    cfg, env = configured(tmp_path, oauth_server)
    p = gocode("call", "-c", str(cfg), "remote", "echo", "text=hi", env=env)
    assert p.returncode != 0
    port = oauth_server.rsplit(":", 1)[1]
    assert f"refusing the authorization URL http://localhost:{port}/authorize?" in p.stderr
    assert "sign in to" not in p.stderr and "/authorize" not in hits(oauth_server)  # nobody was sent there


@pytest.mark.parametrize("oauth_server", ["token-plain-http"], indirect=True)
def test_an_endpoint_over_plain_http_is_refused_even_on_a_trusted_host(oauth_server: str, tmp_path: Path):
    cfg, env = configured(tmp_path, oauth_server, trustedHosts=["as.example"])
    p = gocode("call", "-c", str(cfg), "remote", "echo", "text=hi", env=env)
    assert p.returncode != 0
    assert "refusing the OAuth request to http://as.example/token: OAuth needs https" in p.stderr


@pytest.mark.parametrize("oauth_server", ["wrong-state"], indirect=True)
def test_a_redirect_with_the_wrong_state_is_not_taken(oauth_server: str, tmp_path: Path):
    cfg, env = configured(tmp_path, oauth_server, loginTimeout=3)
    p = gocode("call", "-c", str(cfg), "remote", "echo", "text=hi", env=env)
    assert p.returncode != 0
    assert "no sign-in within 3 s (the server's `auth.loginTimeout`)" in p.stderr
    assert "/token" not in hits(oauth_server)


@pytest.mark.parametrize("oauth_server", ["garbage-token"], indirect=True)
def test_a_token_response_of_garbage_is_refused(oauth_server: str, tmp_path: Path):
    cfg, env = configured(tmp_path, oauth_server)
    p = gocode("call", "-c", str(cfg), "remote", "echo", "text=hi", env=env)
    assert p.returncode != 0
    assert "Invalid token response" in p.stderr
    assert not (tmp_path / "oauth").exists() or not any(
        "tokens" in json.loads(f.read_text()) for f in (tmp_path / "oauth").iterdir()
    )


@pytest.mark.fast
def test_the_redirect_listener_takes_only_this_sign_ins_state():
    async def scenario() -> None:
        redirect = Redirect(free_port(), "MCP server 'x'", timeout=20, open_browser=False)
        await redirect.send("https://as.example/authorize?client_id=c&state=the-state")
        base = redirect.uri

        def get(query: str) -> int:
            try:
                with urllib.request.urlopen(f"{base}?{query}", timeout=10) as r:
                    return r.status
            except urllib.error.HTTPError as e:
                return e.code

        assert await asyncio.to_thread(get, "code=stolen&state=guessed") == 400
        assert await asyncio.to_thread(get, "code=stolen") == 400
        assert await asyncio.to_thread(get, "code=right&state=the-state") == 200
        result = await redirect.receive()
        assert (result.code, result.state) == ("right", "the-state")

    asyncio.run(scenario())


@pytest.mark.fast
def test_a_401_from_an_oauth_server_points_at_the_sign_in_not_the_headers():
    assert describe_status(401, signs_in=True).startswith("HTTP 401 Unauthorized: the OAuth sign-in gave no token")
    assert describe_status(401) == "HTTP 401 Unauthorized: check the server's headers (its token) in the config"


@pytest.mark.fast
def test_kept_tokens_others_can_read_are_ignored(tmp_path: Path):
    store = TokenFile("https://mcp.example/mcp", None, tmp_path / "oauth")
    asyncio.run(store.set_tokens(OAuthToken(access_token="secret-token", expires_in=3600)))
    assert store.bearer() == "secret-token"
    os.chmod(store.path, 0o644)
    assert store.bearer() is None and asyncio.run(store.get_tokens()) is None
    os.chmod(store.path, 0o600)
    asyncio.run(store.set_tokens(OAuthToken(access_token="old", expires_in=1)))
    assert store.bearer() is None  # within the margin of its end: a program would get a 401


@pytest.mark.fast
@pytest.mark.parametrize(
    ("server", "message"),
    [
        ({"command": "srv", "auth": {"type": "oauth"}}, "`url`/`headers`/`auth` are for `type: http|sse`"),
        ({"url": "https://a.example/mcp", "headers": {"authorization": "Bearer x"}, "auth": {"type": "oauth"}},
         "set either `auth` or an `Authorization` header"),
        ({"url": "https://a.example/mcp", "auth": {"type": "oauth", "grant": "client_credentials", "clientId": "c"}},
         "needs `clientId` and `clientSecret` (or `privateKeyFile`)"),
        ({"url": "https://a.example/mcp", "auth": {"type": "oauth", "clientId": "c", "privateKeyFile": "/k.pem"}},
         "`privateKeyFile` is for `grant: client_credentials`"),
        ({"url": "https://a.example/mcp", "auth": {"type": "oauth", "grant": "client_credentials", "clientId": "c",
                                                    "privateKeyFile": "k.pem"}},
         "`privateKeyFile` must be an absolute path"),
        ({"url": "https://a.example/mcp", "auth": {"type": "oauth", "grant": "client_credentials", "clientId": "c",
                                                    "clientSecret": "s", "privateKeyFile": "/k.pem"}},
         "give `clientSecret` or `privateKeyFile`, not both"),
        ({"url": "https://a.example/mcp", "auth": {"type": "oauth", "grant": "client_credentials", "clientId": "c",
                                                    "privateKeyFile": "/k.pem", "signingAlgorithm": "none"}},
         "signingAlgorithm"),
        ({"url": "https://a.example/mcp", "auth": {"type": "oauth", "clientSecret": "s"}}, "`clientSecret` needs `clientId`"),
        ({"url": "https://a.example/mcp", "auth": {"type": "oauth", "clientMetadataUrl": "http://a.example/c.json"}},
         "`clientMetadataUrl` must be an https URL"),
    ],
)  # fmt: skip
def test_auth_config_is_checked(server: dict, message: str):
    with pytest.raises(ValidationError, match=re.escape(message)):
        ServerConfig.model_validate(server)


@pytest.mark.parametrize("oauth_server", ["refuse-go"], indirect=True)
def test_a_direct_program_refused_its_token_points_at_the_sign_in(oauth_server: str, tmp_path: Path):
    cfg, env = configured(tmp_path, oauth_server)
    # The controller signs in and lists the tools; the program's own session gets the kept token
    # refused (as one that expired meanwhile would be), and cannot sign in again itself.
    code = 'out, err := echo(ctx, EchoInput{Text: "direct"}); if err != nil { return err }; fmt.Println(out)'
    p = gocode("exec", "-c", str(cfg), "--direct", "-", stdin=code, env=env)
    assert p.returncode != 0, p.stdout
    assert "HTTP 401 Unauthorized: the OAuth sign-in gave no token the server takes" in p.stdout + p.stderr, p.stderr
    assert "check the server's headers" not in p.stdout + p.stderr
    assert hits(oauth_server)["/authorize"] == 1
