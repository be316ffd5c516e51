"""Which ``Host`` and ``Origin`` headers the HTTP transport accepts (DNS-rebinding protection).

A web page the user visits can make the browser send requests to ``127.0.0.1`` under a name
the attacker controls (DNS rebinding); the MCP spec asks servers to check ``Origin`` (and
``Host``) for that reason. Accepted by default: ``localhost``, ``127.0.0.1``, ``[::1]`` and the
address gocode is bound to, on any port; ``--allowed-host NAME`` adds the names clients use
behind a load balancer (``*`` accepts any name — only sensible with a token). A request
without ``Origin`` (not a browser) is fine; a foreign ``Host`` gets 421, a foreign ``Origin`` 403.

Pure: no I/O (a name is resolved by :func:`gocode.serve.server.bind_address`, which asks
:func:`is_loopback` about the address it found).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
WILDCARD_BINDS = ("0.0.0.0", "::", "")


DEFAULT_MAX_BODY = 4 * 1024 * 1024


def is_loopback(address: str) -> bool:
    """Whether binding ``address`` keeps the server to this machine: an IP address in
    127.0.0.0/8 or ``::1`` (an IPv4-mapped one included). A name is never taken at its word
    (``127.evil.example`` is a name like any other): resolve it first and ask about the address."""
    try:
        ip = ipaddress.ip_address(address.strip().strip("[]"))
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback


def _hostname(value: str) -> str:
    """``name:port`` / ``[v6]:port`` / ``name`` → the lowercased name (brackets removed)."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value[1:]
    if value.count(":") == 1:
        return value.split(":", 1)[0]
    return value  # a bare IPv6 address or a name without a port


@dataclass(frozen=True)
class HostPolicy:
    """The names accepted in ``Host`` and in ``Origin``'s host part."""

    names: frozenset[str]
    any_host: bool = False

    @classmethod
    def for_bind(cls, bind_host: str, extra: Iterable[str] = ()) -> HostPolicy:
        names = set(LOOPBACK_NAMES)
        if bind_host not in WILDCARD_BINDS:
            names.add(_hostname(bind_host) if not bind_host.count(":") > 1 else bind_host.strip("[]").lower())
        extra = [e.strip() for e in extra if e.strip()]
        names.update(_hostname(e) for e in extra if e != "*")
        return cls(frozenset(names), any_host="*" in extra)

    def host_ok(self, host: str | None) -> bool:
        if self.any_host:
            return True
        return bool(host) and _hostname(host or "") in self.names

    def origin_ok(self, origin: str | None) -> bool:
        if not origin:
            return True  # not a browser: nothing to rebind
        if self.any_host:
            return True
        try:
            parts = urlsplit(origin)
        except ValueError:
            return False
        return parts.scheme in ("http", "https") and (parts.hostname or "") in self.names

    def check(self, host: str | None, origin: str | None) -> tuple[int, str] | None:
        """None when both headers are acceptable, else the status (421 or 403) and a message."""
        if not self.host_ok(host):
            return 421, (
                f"Host {host!r} is not served here (DNS-rebinding protection); "
                "an operator can allow it with `gocode serve --allowed-host NAME`"
            )
        if not self.origin_ok(origin):
            return 403, f"Origin {origin!r} is not allowed (DNS-rebinding protection)"
        return None
