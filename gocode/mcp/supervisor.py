"""The configured servers of one controller, kept connected, and who hears when tools change.

:class:`Upstreams` starts an :class:`~gocode.mcp.upstream.Upstream` per configured server,
each supervised in its own task (connected, retried with backoff while down, until shut
down), and names the providers a program reaches (the servers, and any other providers given,
like the toolbox's Python tools). When a server's tools change after the start, or the result
types learned from calls do, the controller's tool list is regenerated (``rebuild``), the Go
bindings warmed again (``rewarm``) and the listeners told (``gocode serve`` notifies its clients).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping

import anyio
from anyio.abc import TaskGroup

from gocode.config import ServerConfig
from gocode.mcp.cache import ListingCache
from gocode.mcp.discovery import server_label
from gocode.mcp.offers import Offers
from gocode.mcp.provider import ToolProvider
from gocode.mcp.upstream import Upstream
from gocode.toolset import ServerTools

log = logging.getLogger("gocode.toolbox")  # the controller's logger, as operators filter it

ChangeListener = Callable[[], Awaitable[None]]


class Upstreams:
    """The servers of ``servers`` (by name), and ``extra`` providers beside them.

    ``retry``: the first delay and the cap, in seconds, of reconnecting a server that is down;
    ``start_wait``: how long :meth:`wait_started` waits for the first attempts."""

    def __init__(
        self,
        servers: Mapping[str, ServerConfig],
        listing_cache: ListingCache | None,
        extra: tuple[ToolProvider, ...],
        retry: tuple[float, float],
        start_wait: float,
        *,
        rebuild: Callable[[], None],
        rewarm: Callable[[], None],
        inferred_changed: Callable[[], bool],
    ) -> None:
        self._servers, self._listing_cache, self._extra = servers, listing_cache, extra
        self._retry, self._start_wait = retry, start_wait
        self._rebuild, self._rewarm, self._inferred_changed = rebuild, rewarm, inferred_changed
        self.upstreams: dict[str, Upstream] = {}
        self.offers = Offers(lambda: self.upstreams)  # their resources and prompts
        self.providers: dict[str, ToolProvider] = {p.name: p for p in extra}
        self.started = False  # tool-list changes before the first build are part of it
        self._listeners: list[ChangeListener] = []

    def start(self, tg: TaskGroup) -> None:
        """Connect every server in ``tg``, each kept connected until :meth:`stop`."""
        self.upstreams = {
            name: Upstream(name, server, tg, self._changed, self._listing_cache)
            for name, server in sorted(self._servers.items())
        }
        self.providers = {**self.upstreams, **{p.name: p for p in self._extra}}
        for u in self.upstreams.values():
            tg.start_soon(u.supervise, *self._retry)

    async def wait_started(self) -> None:
        """Wait (at most ``start_wait`` seconds) for every server's first attempt: one still
        connecting after that keeps connecting, and its tools are announced when it answers."""
        with anyio.move_on_after(self._start_wait):
            for u in self.upstreams.values():
                await u.attempted.wait()
        self.started = True

    def stop(self) -> None:
        for u in self.upstreams.values():
            u.shutdown()

    def known(self) -> list[ServerTools]:
        """The tools of every provider that has listed any."""
        return [t for p in self.providers.values() if (t := p.known_tools) is not None]

    def down(self) -> dict[str, str]:
        """Why each server that is not up is not (briefly)."""
        down = {u.name: e.brief for u in self.upstreams.values() if (e := u.error) is not None}
        for u in self.upstreams.values():
            if not u.attempted.is_set():
                down[u.name] = f"{server_label(u.name)} is still starting (its tools come when it answers)"
        return down

    def connected(self) -> dict[str, bool]:
        return {n: u.connected for n, u in self.upstreams.items()}

    async def _changed(self, server: str) -> None:
        if not self.started:
            return
        log.info("tools of %r changed; regenerating", server)
        await self.regenerate()

    async def retype(self) -> None:
        """After a run: when the result types inferred from what tools returned changed (one
        typed after enough calls, or learned again after a result that did not fit), the Go
        and the definitions change, and listeners are told as for a server's new tools."""
        if self.started and self._inferred_changed():
            log.info("result types inferred from the tools' results changed; regenerating")
            await self.regenerate()

    async def regenerate(self) -> None:
        self._rebuild()
        self._rewarm()
        await self.tell()

    async def tell(self) -> None:
        """Tell every listener that the tool list changed."""
        for listener in list(self._listeners):
            try:
                await listener()
            except Exception as exc:  # one broken listener must not stop the others
                log.warning("tool-list listener failed: %s", exc)

    def on_tools_changed(self, listener: ChangeListener) -> Callable[[], None]:
        """Call ``listener`` after the tool list changed; returns a function that unsubscribes."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None
