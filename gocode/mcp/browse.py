"""Tools for commands that only show them (``gocode list``, ``search``, ``describe``).

Starting every server to read its tools costs seconds per server; these commands answer from
the listings :class:`~gocode.mcp.cache.RecentListings` keeps instead, and start only the
servers without one younger than ``max_age`` (a changed server config is a different entry,
so it is listed afresh). They say on stderr which they did. The MCP SDK is imported only when
a server has to be started.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from gocode.config import Config
from gocode.mcp.cache import DEFAULT_RECENT_AGE_S, RecentListings
from gocode.mcp.listing import DiscoveryResult, server_tools

MAX_AGE_ENV = "GOCODE_LIST_MAX_AGE"


def max_age_from_env() -> float:
    """Seconds a kept listing serves (``$GOCODE_LIST_MAX_AGE``, default a day; 0: always list)."""
    try:
        return max(0.0, float(os.environ.get(MAX_AGE_ENV, DEFAULT_RECENT_AGE_S)))
    except ValueError:
        return DEFAULT_RECENT_AGE_S


def _ago(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


async def browse(
    config: Config,
    *,
    refresh: bool = False,
    max_age: float | None = None,
    recent: RecentListings | None = None,
    progress: Callable[[str], None] | None = None,
) -> DiscoveryResult:
    """Every configured server's tools: kept listings younger than ``max_age`` (default
    :func:`max_age_from_env`), the servers themselves for the rest (or all, with ``refresh``)."""
    recent = recent or RecentListings()
    age = max_age_from_env() if max_age is None else max_age
    now = time.time()
    result = DiscoveryResult()
    missing: list[str] = []
    stale = 0
    for name, server in sorted(config.mcp_servers.items()):
        hit = None if refresh or age <= 0 else recent.load(name, server)
        if hit is not None and 0 <= now - hit.listed < age:
            result.servers.append(server_tools(name, server, hit.listing, hit.protocol_version, hit.server_info))
            result.from_cache[name] = hit.listed
        else:
            missing.append(name)
            stale += hit is not None
    say = progress or (lambda _: None)
    if result.from_cache:
        oldest = now - min(result.from_cache.values())
        n = len(result.from_cache)
        say(
            f"tools of {n} server{'s' if n != 1 else ''} as listed up to {_ago(oldest)} ago "
            "(--refresh lists them again)"
        )
    if missing:
        if refresh:
            why = "as asked"
        elif stale == len(missing):
            why = f"their kept listings are older than {_ago(age)}"
        else:
            why = "no recent listing kept"
        say(f"starting {len(missing)} server{'s' if len(missing) != 1 else ''} to list their tools ({why})")
        from gocode.mcp.discovery import discover  # the MCP SDK, only when a server is started

        live = await discover(config, missing, recent=recent)
        result.servers.extend(live.servers)
        result.failures.update(live.failures)
    result.servers.sort(key=lambda s: s.server)
    return result
