"""``gocode serve``: the MCP server over stdio or streamable HTTP."""

from __future__ import annotations

import os
import sys

import click

from gocode.cli.common import config_option, handle_errors, model_option, say_error, say_progress, setup_logging
from gocode.mcp.httplimits import DEFAULT_BODY_TIMEOUT_S, DEFAULT_HEADER_TIMEOUT_S
from gocode.serve.guard import DEFAULT_MAX_BODY
from gocode.serve.sessions import DEFAULT_MAX_SESSIONS, DEFAULT_MAX_SESSIONS_PER_CLIENT, DEFAULT_SESSION_IDLE_S


@click.command()
@config_option
@model_option
@click.option(
    "--transport", type=click.Choice(["stdio", "http"]), default="stdio", show_default=True, help="How clients connect."
)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP: address to bind.")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True, help="HTTP: port (0: any).")
@click.option(
    "--token",
    envvar="GOCODE_TOKEN",
    show_envvar=True,
    help="HTTP: require `Authorization: Bearer TOKEN` on every request (prefer the variable to the flag).",
)
@click.option(
    "--metrics-token",
    envvar="GOCODE_METRICS_TOKEN",
    show_envvar=True,
    help="HTTP: a separate bearer token for /metrics (a scraper then needs no token that runs code). "
    "Without it /metrics takes the --token.",
)
@click.option(
    "--allowed-host",
    "allowed_hosts",
    multiple=True,
    metavar="NAME",
    help="HTTP: also accept this Host/Origin name (repeatable; the name clients use behind a load balancer). "
    "Default: localhost, 127.0.0.1, [::1] and the bound address. '*' accepts any.",
)
@click.option(
    "--max-body-bytes",
    type=click.IntRange(1024),
    default=DEFAULT_MAX_BODY,
    show_default=True,
    help="HTTP: larger request bodies get 413.",
)
@click.option(
    "--max-connections",
    type=click.IntRange(1),
    default=None,
    help="HTTP: open connections at most; beyond it the one waiting longest for its request is closed. "
    "Default: 1024, or a quarter of the open-files limit when lower.",
)
@click.option(
    "--header-timeout",
    type=click.FloatRange(0.1),
    default=DEFAULT_HEADER_TIMEOUT_S,
    show_default=True,
    help="HTTP: seconds a connection has to send a request's headers (and between requests).",
)
@click.option(
    "--body-timeout",
    type=click.FloatRange(0.1),
    default=DEFAULT_BODY_TIMEOUT_S,
    show_default=True,
    help="HTTP: seconds a client has to send a request's body once its headers are in.",
)
@click.option(
    "--max-sessions",
    type=click.IntRange(1),
    default=DEFAULT_MAX_SESSIONS,
    show_default=True,
    help="HTTP: MCP sessions open at once, all clients together.",
)
@click.option(
    "--max-sessions-per-client",
    type=click.IntRange(1),
    default=DEFAULT_MAX_SESSIONS_PER_CLIENT,
    show_default=True,
    help="HTTP: MCP sessions one client address may hold open; its next initialize gets 429.",
)
@click.option(
    "--session-idle-timeout",
    type=click.FloatRange(1),
    default=DEFAULT_SESSION_IDLE_S,
    show_default=True,
    help="HTTP: seconds an MCP session lives without a request.",
)
@click.option(
    "--insecure-no-auth",
    is_flag=True,
    help="HTTP: allow a non-loopback --host without a token. ANYONE WHO REACHES THE PORT CAN RUN CODE.",
)
@click.option(
    "--log-format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    envvar="GOCODE_LOG_FORMAT",
    show_envvar=True,
    help="stderr logs: text, or one JSON object per line with a request id per call.",
)
@click.option(
    "--no-prewarm",
    is_flag=True,
    help="Do not set up Go or build the bindings in the background at start (the first call does).",
)
@click.option(
    "--stateless-step",
    is_flag=True,
    help="Also offer step_go_code: Go code calling tools the client owns, over a stateless protocol "
    "(see docs/stateless.md).",
)
@handle_errors
def serve(
    config_path: str | None,
    model: str | None,
    transport: str,
    host: str,
    port: int,
    token: str | None,
    metrics_token: str | None,
    allowed_hosts: tuple[str, ...],
    max_body_bytes: int,
    max_connections: int | None,
    header_timeout: float,
    body_timeout: float,
    max_sessions: int,
    max_sessions_per_client: int,
    session_idle_timeout: float,
    insecure_no_auth: bool,
    log_format: str,
    no_prewarm: bool,
    stateless_step: bool,
) -> None:
    """Serve execute_go_code and the model's excluded tools as an MCP server (stdio or streamable HTTP).

    Over HTTP it also answers /healthz, /readyz and /metrics (see docs/operations.md).
    Binding anything but loopback needs a token (--token or $GOCODE_TOKEN).
    """
    import asyncio

    from gocode.config import load_config
    from gocode.mcp.httplimits import ConnectionLimits
    from gocode.serve import server as server_mod
    from gocode.serve import start
    from gocode.serve.guard import is_loopback
    from gocode.serve.sessions import SessionLimits

    setup_logging(log_format)
    config = load_config(config_path)
    config.code_mode_for(model)  # an unknown model ref fails before anything starts
    if not config.mcp_servers:
        say_error(f"gocode: warning: {config.source} configures no mcpServers: execute_go_code will have no tools")
    sock = None
    if transport == "http":
        try:
            # Judged and bound by address: a name is resolved once, here (127.evil.example is
            # whatever it resolves to, and a name that does not resolve is refused).
            address = server_mod.bind_address(host)
        except OSError as exc:
            raise click.UsageError(
                f"cannot listen on {host}: the name does not resolve ({exc.strerror or exc})"
            ) from None
        if not token and not is_loopback(address):
            if not insecure_no_auth:
                say_error(
                    f"gocode: refusing to serve on {host} without a token: anyone who reaches it could run code "
                    "on this machine.\n  Set one: export GOCODE_TOKEN=$(openssl rand -hex 32) (or --token), and "
                    "give clients `Authorization: Bearer <token>`.\n  To serve without one anyway (a trusted "
                    "network only), add --insecure-no-auth."
                )
                sys.exit(2)
            say_error(
                f"gocode: WARNING: --insecure-no-auth: serving on {host} WITHOUT A TOKEN: anyone who reaches "
                "this port can run code here and read /metrics"
            )
        try:
            sock = server_mod.bind(address, port)
        except OSError as exc:
            raise click.UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    elif token and os.environ.get("GOCODE_TOKEN") != token:
        say_error("gocode: warning: --token only applies to --transport http")
    options = server_mod.HttpOptions(
        tuple(allowed_hosts),
        max_body_bytes,
        metrics_token,
        connections=ConnectionLimits(header_timeout, body_timeout, max_connections),
        sessions=SessionLimits(max_sessions, max_sessions_per_client, session_idle_timeout),
    )
    server_mod.limit_malloc_arenas()  # a long-running server: resident memory stays flat
    try:
        asyncio.run(
            start.serve(
                config,
                model,
                sock,
                host,
                token,
                prewarm=not no_prewarm,
                options=options,
                stateless_step=stateless_step,
                progress=say_progress,
                warn=lambda w: say_error(f"gocode: warning: {w}"),
            )
        )
    finally:
        if sock is not None:
            sock.close()
