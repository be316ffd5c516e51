"""OAuth for remote servers, through the MCP SDK's own client (``mcp.client.auth``); docs/oauth.md.

:func:`oauth_for` gives the ``httpx2.Auth`` of a server with ``auth: {type: oauth}``: the SDK
discovers the protected resource and authorization server metadata from the server's 401,
registers (a configured ``clientId``, a client ID metadata document, or dynamic registration),
signs in (the authorization code with PKCE through :mod:`gocode.mcp.oauthredirect`, or client
credentials), refreshes, and steps up scopes on a 403 ``insufficient_scope``. Tokens are kept by
:mod:`gocode.mcp.oauthstore` and go only to the server and its authorization server: never to a
pooled program, which reaches its servers through the controller.

What a server says is checked before anything is sent where it points: every OAuth request and
the authorization URL must be https (http only to a loopback host) and on the host of the
issuer the metadata names, the server's own host, or one of ``auth.trustedHosts``; so metadata
pointing the token endpoint at another host is refused before a code or a secret is sent there.
"""

from __future__ import annotations

import contextvars
import ipaddress
import os
import socket
import warnings
from collections.abc import AsyncGenerator
from urllib.parse import urlsplit

import anyio
import httpx2
from mcp.client.auth import OAuthClientProvider, OAuthFlowError
from mcp.client.auth.extensions.client_credentials import (
    ClientCredentialsOAuthProvider,
    PrivateKeyJWTOAuthProvider,
    SignedJWTParameters,
)
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from mcp.shared.exceptions import MCPDeprecationWarning
from pydantic import AnyUrl

from gocode.config import OAuthConfig, ServerConfig
from gocode.mcp.oauthredirect import Redirect
from gocode.mcp.oauthstore import TokenFile

CLIENT_NAME = "gocode"

# The connect deadline of the session being opened: a sign-in lifts it while a person signs in
# (the connect timeout is for the server, not for them); set by gocode.mcp.discovery.
connect_scope: contextvars.ContextVar[anyio.CancelScope | None] = contextvars.ContextVar(
    "gocode_oauth_connect_scope", default=None
)


def oauth_for(name: str, server: ServerConfig) -> httpx2.Auth | None:
    """The OAuth client of a server (None when it has no ``auth``); one per session's HTTP client."""
    auth = server.auth
    if auth is None or not server.url:
        return None
    store = TokenFile(server.url, auth.client_id)
    label = f"MCP server {name!r}"
    if auth.grant == "client_credentials" and auth.private_key_file is not None:
        return _PrivateKeyJWT(server.url, store, auth)
    if auth.grant == "client_credentials":
        return _ClientCredentials(server.url, store, auth)
    return _AuthorizationCode(server.url, store, auth, label)


def bearer(server: ServerConfig) -> str | None:
    """The kept, unexpired access token of an OAuth server, for a direct run's program (None: none)."""
    if server.auth is None or not server.url:
        return None
    return TokenFile(server.url, server.auth.client_id).bearer()


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class _Checked(OAuthClientProvider):
    """The SDK's flow, with every request it sends vetted first (see the module doc)."""

    _gocode: OAuthConfig

    def _vet(self, url: str, what: str) -> None:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        if parts.scheme != "https" and not (parts.scheme == "http" and _is_loopback(host)):
            raise OAuthFlowError(f"refusing the {what} {url}: OAuth needs https (http only to a loopback host)")
        allowed = {(urlsplit(self.context.server_url).hostname or "").lower(), *self._gocode.trusted_hosts}
        if (metadata := self.context.oauth_metadata) is not None:
            allowed.add((urlsplit(str(metadata.issuer)).hostname or "").lower())
        elif self.context.auth_server_url:
            allowed.add((urlsplit(self.context.auth_server_url).hostname or "").lower())
        if host not in allowed:
            raise OAuthFlowError(
                f"refusing the {what} {url}: its host {host!r} is neither the authorization server's "
                f"({', '.join(sorted(h for h in allowed if h))}) nor in the server's `auth.trustedHosts`"
            )

    async def _auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        flow = super()._auth_flow(request)
        try:
            sent = await flow.__anext__()
            while True:
                if sent is not request:
                    self._vet(str(sent.url), "OAuth request to")
                sent = await flow.asend((yield sent))
        except StopAsyncIteration:
            return
        finally:
            await flow.aclose()

    async def _handle_token_response(self, response: httpx2.Response) -> None:
        await super()._handle_token_response(response)
        await self._kept()

    async def _handle_refresh_response(self, response: httpx2.Response) -> bool:
        refreshed = await super()._handle_refresh_response(response)
        await self._kept()
        return refreshed

    async def _kept(self) -> None:
        # The SDK keeps a token's end in memory only; a kept token must carry it across runs.
        if self.context.current_tokens is not None and isinstance(self.context.storage, TokenFile):
            self.context.token_expiry_time = self.context.storage.expires_at()

    async def _initialize(self) -> None:
        await super()._initialize()
        if isinstance(self.context.storage, TokenFile):
            self.context.token_expiry_time = self.context.storage.expires_at()

    def _ask_configured_scopes(self) -> None:
        # The SDK asks for the scopes the server's challenge names; the configured ones are added.
        if scopes := self._gocode.scopes:
            asked = (self.context.client_metadata.scope or "").split()
            self.context.client_metadata.scope = " ".join(dict.fromkeys([*asked, *scopes]))


class _AuthorizationCode(_Checked):
    """A person signs in in a browser; the code comes back to a listener on 127.0.0.1."""

    def __init__(self, url: str, store: TokenFile, auth: OAuthConfig, label: str) -> None:
        self._gocode = auth
        self._store = store
        self._redirect = Redirect(auth.redirect_port, label, timeout=auth.login_timeout, open_browser=auth.open_browser)
        super().__init__(
            url,
            OAuthClientMetadata(
                redirect_uris=None,  # the port is chosen when the flow starts (_initialize)
                client_name=CLIENT_NAME,
                grant_types=["authorization_code", "refresh_token"],
                response_types=["code"],
            ),
            store,
            redirect_handler=self._send,
            callback_handler=self._redirect.receive,
            client_metadata_url=auth.client_metadata_url,
        )

    async def _initialize(self) -> None:
        await super()._initialize()
        auth = self._gocode
        if auth.client_id is not None:  # registered beforehand: no dynamic registration
            self.context.client_info = OAuthClientInformationFull(
                client_id=auth.client_id,
                client_secret=auth.client_secret,
                token_endpoint_auth_method="client_secret_basic" if auth.client_secret else "none",
                redirect_uris=None,
            )
        # A registration names its redirect URI: keep its port, else the configured one, else any free one.
        port = auth.redirect_port or _kept_port(self.context.client_info) or _free_port()
        self._redirect.port = port
        self.context.client_metadata.redirect_uris = [AnyUrl(self._redirect.uri)]

    async def _perform_authorization(self) -> httpx2.Request:
        self._ask_configured_scopes()
        return await super()._perform_authorization()

    async def _send(self, authorization_url: str) -> None:
        self._vet(authorization_url, "authorization URL")
        if (scope := connect_scope.get()) is not None:
            scope.deadline = max(scope.deadline, anyio.current_time() + self._gocode.login_timeout + 30)
        await self._redirect.send(authorization_url)


class _ClientCredentials(ClientCredentialsOAuthProvider, _Checked):
    """A machine client: ``clientId`` and ``clientSecret`` sent (HTTP Basic) for a token."""

    def __init__(self, url: str, store: TokenFile, auth: OAuthConfig) -> None:
        self._gocode = auth
        scope = " ".join(auth.scopes) if auth.scopes else None
        with warnings.catch_warnings():  # no `issuer`: the SDK warns that it will be required
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            super().__init__(
                url, store, auth.client_id or "", auth.client_secret or "", scope=scope, issuer=auth.issuer
            )

    async def _perform_authorization(self) -> httpx2.Request:
        self._ask_configured_scopes()
        return await super()._perform_authorization()

    async def _initialize(self) -> None:
        await super()._initialize()  # the SDK's: kept tokens and the configured client
        if isinstance(self.context.storage, TokenFile):
            self.context.token_expiry_time = self.context.storage.expires_at()


class _PrivateKeyJWT(_Checked, PrivateKeyJWTOAuthProvider):
    """A machine client that proves itself with a JWT signed by its private key (RFC 7523,
    ``private_key_jwt``): no secret is sent. The key file is read for each assertion (a rotated
    key is used at once); an assertion lives five minutes and names the authorization server
    the metadata gave (vetted like every other OAuth request) as its audience."""

    def __init__(self, url: str, store: TokenFile, auth: OAuthConfig) -> None:
        self._gocode = auth
        scope = " ".join(auth.scopes) if auth.scopes else None
        with warnings.catch_warnings():  # no `issuer`: the SDK warns that it will be required
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            super().__init__(url, store, auth.client_id or "", self._assertion, scope=scope, issuer=auth.issuer)

    async def _assertion(self, audience: str) -> str:
        auth = self._gocode
        assert auth.private_key_file is not None and auth.client_id is not None
        try:
            key = await anyio.Path(os.path.expanduser(auth.private_key_file)).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise OAuthFlowError(f"`auth.privateKeyFile` {auth.private_key_file} cannot be read: {exc}") from None
        params = SignedJWTParameters(
            issuer=auth.client_id, subject=auth.client_id, signing_key=key, signing_algorithm=auth.signing_algorithm
        )
        try:
            return await params.create_assertion_provider()(audience)
        except Exception as exc:  # a key that is not PEM, or not of the algorithm's kind
            raise OAuthFlowError(
                f"`auth.privateKeyFile` cannot sign a {auth.signing_algorithm} assertion: {type(exc).__name__}: {exc}"
            ) from None

    async def _perform_authorization(self) -> httpx2.Request:
        self._ask_configured_scopes()
        return await super()._perform_authorization()


def _kept_port(client: OAuthClientInformationFull | None) -> int:
    for uri in (client.redirect_uris or []) if client is not None else []:
        parts = urlsplit(str(uri))
        if parts.hostname == "127.0.0.1" and parts.port:
            return parts.port
    return 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


__all__ = ["OAuthToken", "bearer", "connect_scope", "oauth_for"]
