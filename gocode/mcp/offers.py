"""What the servers offer besides tools: resources, resource templates, prompts, completions.

One :class:`Offers` over the controller's upstream sessions answers ``gocode serve``'s clients
(:mod:`gocode.serve.offered`) and programs (``readResource``, ``listResources``, ``getPrompt``
through the loopback, :mod:`gocode.mcp.loopoffers`).

**Ownership.** A resource URI is untrusted text (a model wrote it, or a server handed it out),
so a read goes only to the server that owns the URI: the one that lists it
(``resources/list``), else, for a program, the one that returned it during the run (a resource
link or an embedded resource in a tool's result), else the one whose template matches it
(``resources/templates/list``; after the links, so a server's catch-all template never claims
a link another server handed out). A URI no server owns is refused, and so is one several servers
own unless it is named ``gocode://<server>/<uri>`` — and then only when that server owns it.
So a link one server returned is never sent to another server, whatever it names.

**Namespacing.** Offered together (serve), a resource keeps its URI and a prompt its name when
no other server has the same; otherwise the resource becomes ``gocode://<server>/<uri>`` (the
template likewise) and the prompt ``<server>_<name>``, so two servers' offers never collide.

**Bounds.** Each server's listings are kept :data:`LIST_TTL_S` seconds (forgotten at once when
the server says they changed), read at most :data:`MAX_PAGES` pages and :data:`MAX_ENTRIES`
entries of each kind; a URI or name over :data:`MAX_URI` characters is refused unread.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, runtime_checkable

import anyio
import mcp_types as types
from mcp import Client
from mcp.shared.exceptions import MCPError

from gocode.errors import OfferError, ToolProviderError

log = logging.getLogger("gocode.mcp.offers")

T = TypeVar("T")
NAMED_SCHEME = "gocode://"  # gocode://<server>/<uri>: a URI with the server that owns it
LIST_TTL_S = 30.0
MAX_PAGES = 20
MAX_ENTRIES = 5000
MAX_URI = 8192


@runtime_checkable
class Source(Protocol):
    """A server session that can be asked for more than tools (an :class:`~gocode.mcp.upstream.Upstream`)."""

    name: str
    notices: list[Callable[[types.ServerNotification], Awaitable[None]]]

    def capabilities(self) -> types.ServerCapabilities | None: ...

    async def use(self, what: str, request: Callable[[Client], Awaitable[T]], timeout: float | None = None) -> T: ...


@dataclass(frozen=True)
class Listing:
    """One server's resources, templates and prompts, as listed at ``at`` (monotonic)."""

    resources: tuple[types.Resource, ...] = ()
    templates: tuple[types.ResourceTemplate, ...] = ()
    prompts: tuple[types.Prompt, ...] = ()
    at: float = 0.0


def named(server: str, uri: str) -> str:
    """``uri`` with the server that owns it: ``gocode://<server>/<uri>``."""
    return f"{NAMED_SCHEME}{server}/{uri}"


def split_named(uri: str) -> tuple[str | None, str]:
    """The server a ``gocode://<server>/<uri>`` names and the URI; (None, uri) for any other."""
    if uri.startswith(NAMED_SCHEME):
        server, sep, rest = uri[len(NAMED_SCHEME) :].partition("/")
        if sep and server and rest:
            return server, rest
    return None, uri


def template_matches(template: str, uri: str) -> bool:
    """Whether ``uri`` is an expansion of an RFC 6570 ``template``: a simple ``{var}`` stands for
    one path segment, a reserved or multi-part one (``{+var}``, ``{/var}``, ``{?var}`` …) for any text."""
    pattern, pos = [], 0
    for m in re.finditer(r"\{([^}]*)\}", template):
        pattern.append(re.escape(template[pos : m.start()]))
        pattern.append(r"[^/?#]*" if m.group(1)[:1].isalnum() or m.group(1)[:1] == "_" else r".*")
        pos = m.end()
    pattern.append(re.escape(template[pos:]))
    if pos == 0:
        return template == uri
    return re.fullmatch("".join(pattern), uri, re.S) is not None


def literal_length(template: str) -> int:
    """How much of a template is literal text: of two templates matching a URI, the more
    specific one (more literal text) owns it, so a catch-all (``{+uri}``) never wins."""
    return len(re.sub(r"\{[^}]*\}", "", template))


def _best_templates(listings: Mapping[str, Listing], uri: str) -> list[str]:
    """The servers whose most specific template matching ``uri`` is the most specific of all."""
    best: dict[str, int] = {}
    for server, listing in listings.items():
        scores = [literal_length(t.uri_template) for t in listing.templates if template_matches(t.uri_template, uri)]
        if scores:
            best[server] = max(scores)
    top = max(best.values(), default=0)
    return [s for s, score in best.items() if score == top]


class Offers:
    """The resources, templates and prompts of the servers ``sources()`` returns, by server name.

    Shared by every caller (one per controller); what it keeps is each server's listings."""

    def __init__(self, sources: Callable[[], Mapping[str, object]]) -> None:
        self._sources = sources
        self._listings: dict[str, Listing] = {}
        self._heard: set[str] = set()  # servers whose change notices reach forget()
        self.listeners: list[Callable[[str, types.ServerNotification], Awaitable[None]]] = []

    def servers(self, allowed: Callable[[str], bool] | None = None) -> list[str]:
        """The servers that may offer resources or prompts (sessions, not Python tools), sorted."""
        return sorted(
            n for n, s in self._sources().items() if isinstance(s, Source) and (allowed is None or allowed(n))
        )

    def source(self, server: str) -> Source:
        found = self._sources().get(server)
        if not isinstance(found, Source):
            raise OfferError(f"no server {server!r} offers resources or prompts")
        if server not in self._heard:
            self._heard.add(server)

            async def heard(notice: types.ServerNotification) -> None:
                await self._notice(server, notice)

            found.notices.append(heard)
        return found

    async def _notice(self, server: str, notice: types.ServerNotification) -> None:
        if not isinstance(notice, types.ResourceUpdatedNotification):
            self._listings.pop(server, None)
        for listener in list(self.listeners):
            try:
                await listener(server, notice)
            except Exception as exc:  # one listener failing must not silence the others
                log.warning("a listener of %s's notifications failed: %s", server, exc)

    async def use(self, server: str, what: str, request: Callable[[Client], Awaitable[T]]) -> T:
        try:
            return await self.source(server).use(what, request)
        except ToolProviderError as exc:
            raise OfferError(f"server {server!r}: {exc}") from None

    # --- listings -----------------------------------------------------------------------------

    async def listing(self, server: str) -> Listing:
        """``server``'s listings, from what is kept while it is fresh."""
        kept = self._listings.get(server)
        if kept is not None and time.monotonic() - kept.at < LIST_TTL_S:
            return kept
        caps = self.source(server).capabilities()
        offers_resources = caps is None or caps.resources is not None
        offers_prompts = caps is None or caps.prompts is not None
        listing = Listing(
            tuple(await self._pages(server, "resources/list", _list_resources)) if offers_resources else (),
            tuple(await self._pages(server, "resources/templates/list", _list_templates)) if offers_resources else (),
            tuple(await self._pages(server, "prompts/list", _list_prompts)) if offers_prompts else (),
            time.monotonic(),
        )
        self._listings[server] = listing
        return listing

    async def _pages(self, server: str, method: str, page_of: Page) -> list[Any]:
        """Every entry of a paginated list (bounded); a server without the method has none."""
        entries: list[Any] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):

            async def ask(client: Client, cursor: str | None = cursor) -> tuple[list[Any], str | None]:
                return await page_of(client, cursor)

            try:
                got, cursor = await self.use(server, method, ask)
            except MCPError as exc:
                if exc.code == types.METHOD_NOT_FOUND:
                    return entries
                raise OfferError(f"server {server!r} answered {method} with an error: {exc}") from None
            entries.extend(got[: MAX_ENTRIES - len(entries)])
            if not cursor or len(entries) >= MAX_ENTRIES:
                break
        return entries

    async def listings(self, servers: Sequence[str]) -> dict[str, Listing]:
        """The listings of ``servers``, asked in parallel; a server that fails lists nothing
        (said in the log): one server down never hides the others."""
        found: dict[str, Listing] = {}

        async def one(server: str) -> None:
            try:
                found[server] = await self.listing(server)
            except (OfferError, MCPError) as exc:
                log.info("listing the resources and prompts of %s failed: %s", server, exc)
                found[server] = Listing()

        async with anyio.create_task_group() as tg:
            for server in servers:
                tg.start_soon(one, server)
        return {s: found[s] for s in servers}

    # --- ownership ----------------------------------------------------------------------------

    async def owner(self, uri: str, servers: Sequence[str], returned: Mapping[str, set[str]] | None = None) -> str:
        """The one server of ``servers`` that owns ``uri`` (see the module's docstring), or an
        :class:`OfferError` saying why there is none."""
        if len(uri) > MAX_URI:
            raise OfferError(f"the URI is {len(uri)} characters; at most {MAX_URI} are accepted")
        want, raw = split_named(uri)
        if want is not None and want not in servers:
            raise OfferError(f"{uri!r} names server {want!r}, which is not one of {', '.join(servers) or 'none'}")
        listings = await self.listings([want] if want is not None else servers)
        owners = [s for s, lst in listings.items() if any(r.uri == raw for r in lst.resources)]
        if not owners and returned:  # before templates: a catch-all template claims no server's link
            owners = [s for s in listings if raw in returned.get(s, ())]
        if not owners:
            owners = _best_templates(listings, raw)
        if len(owners) == 1:
            return owners[0]
        if not owners:
            where = f"server {want!r}" if want is not None else "no server"
            raise OfferError(
                f"{where} lists resource {raw!r}, has a template matching it or returned it"
                + (" (the server named does not own it)" if want is not None else "")
            )
        choices = ", ".join(repr(named(s, raw)) for s in owners)
        raise OfferError(f"several servers have resource {raw!r}: name the one to read ({choices})")

    async def read(
        self, uri: str, servers: Sequence[str], returned: Mapping[str, set[str]] | None = None
    ) -> tuple[str, types.ReadResourceResult]:
        """Read ``uri`` from the server that owns it: (that server, its answer)."""
        server = await self.owner(uri, servers, returned)
        _, raw = split_named(uri)
        try:
            return server, await self.use(server, "resources/read", lambda c: c.read_resource(raw))
        except MCPError as exc:
            raise OfferError(f"reading {raw!r} (server {server!r}): {exc}") from None

    # --- prompts and completions --------------------------------------------------------------

    async def prompt(self, server: str, name: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
        if len(name) > MAX_URI:
            raise OfferError(f"the prompt name is {len(name)} characters; at most {MAX_URI} are accepted")
        return await self.use(server, "prompts/get", lambda c: c.get_prompt(name, arguments))

    async def complete(
        self,
        server: str,
        ref: types.ResourceTemplateReference | types.PromptReference,
        argument: dict[str, str],
        context: dict[str, str] | None,
    ) -> types.CompleteResult:
        return await self.use(server, "completion/complete", lambda c: c.complete(ref, argument, context))


Page = Callable[[Client, "str | None"], Awaitable[tuple[list[Any], "str | None"]]]


async def _list_resources(client: Client, cursor: str | None) -> tuple[list[Any], str | None]:
    page = await client.list_resources(cursor=cursor)
    return list(page.resources), page.next_cursor


async def _list_templates(client: Client, cursor: str | None) -> tuple[list[Any], str | None]:
    page = await client.list_resource_templates(cursor=cursor)
    return list(page.resource_templates), page.next_cursor


async def _list_prompts(client: Client, cursor: str | None) -> tuple[list[Any], str | None]:
    page = await client.list_prompts(cursor=cursor)
    return list(page.prompts), page.next_cursor


# --- namespacing ------------------------------------------------------------------------------


def exposed_uris(pairs: Sequence[tuple[str, str]]) -> dict[str, tuple[str, str]]:
    """The URI each (server, URI) is offered under: its own, or ``gocode://<server>/<uri>``
    when another server has the same."""
    counts: dict[str, int] = {}
    for _, uri in pairs:
        counts[uri] = counts.get(uri, 0) + 1
    return {(uri if counts[uri] == 1 else named(server, uri)): (server, uri) for server, uri in pairs}


def exposed_prompt_names(pairs: Sequence[tuple[str, str]]) -> dict[str, tuple[str, str]]:
    """The name each (server, prompt) is offered under: its own, or ``<server>_<name>`` when
    another server has the same (suffixed with a short hash if that is taken too)."""
    counts: dict[str, int] = {}
    for _, name in pairs:
        counts[name] = counts.get(name, 0) + 1
    out: dict[str, tuple[str, str]] = {}
    for server, name in sorted(pairs):
        shown = name if counts[name] == 1 else f"{server}_{name}"
        if shown in out:
            shown += "_" + hashlib.sha256(f"{server}\0{name}".encode()).hexdigest()[:8]
        out[shown] = (server, name)
    return out
