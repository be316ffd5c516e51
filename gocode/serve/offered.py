"""``gocode serve``'s resources, resource templates, prompts and completions: the upstream
servers' own, passed through and namespaced (see :mod:`gocode.mcp.offers`).

A resource keeps its URI and a prompt its name unless another server has the same; then the
resource is offered as ``gocode://<server>/<uri>`` and the prompt as ``<server>_<name>``. A
read, a subscription and a completion go only to the server that owns the URI, template or
prompt; a bare URI that several servers own is refused with the names to use instead.

Subscriptions (handshake-era clients): ``resources/subscribe`` is forwarded to the owner, and
its ``notifications/resources/updated`` reach the sessions that subscribed to that resource
(under the URI they subscribed with), and no other; the upstream subscription is dropped with
the last ``resources/unsubscribe``. A session holds at most :data:`MAX_SUBSCRIPTIONS`. A 2026-07-28 client has no ``resources/subscribe``.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPError

from gocode.errors import OfferError
from gocode.mcp import sdk_private
from gocode.mcp.offers import Offers, exposed_prompt_names, exposed_uris, named, split_named

log = logging.getLogger("gocode.serve.offered")

RESOURCE_NOT_FOUND = -32002  # the MCP specification's code for a resource that does not exist
NOTIFY_TIMEOUT_S = 2.0
MAX_SUBSCRIPTIONS = 256  # per session: a template matches endless URIs, each one an entry here


class Offered:
    """The handlers of one :class:`~gocode.serve.server.ToolServer` for resources, prompts and
    completions, and the sessions subscribed to each resource."""

    def __init__(self, offers: Offers, ready: anyio.Event) -> None:
        self.offers = offers
        self.ready = ready
        # (server, URI) -> {connection: (its session, the URI it subscribed with)}
        self._subscribed: dict[tuple[str, str], dict[object, tuple[ServerSession, str]]] = {}
        offers.listeners.append(self._notice)

    async def _servers(self) -> list[str]:
        await self.ready.wait()
        return self.offers.servers()

    async def list_resources(self, ctx: ServerRequestContext[Any], params: Any) -> types.ListResourcesResult:
        listings = await self.offers.listings(await self._servers())
        pairs = [(s, r.uri) for s, lst in listings.items() for r in lst.resources]
        shown = {key: uri for uri, key in exposed_uris(pairs).items()}
        resources = [
            r.model_copy(update={"uri": shown[(s, r.uri)]}) for s, lst in listings.items() for r in lst.resources
        ]
        return types.ListResourcesResult(resources=resources)

    async def list_templates(self, ctx: ServerRequestContext[Any], params: Any) -> types.ListResourceTemplatesResult:
        listings = await self.offers.listings(await self._servers())
        pairs = [(s, t.uri_template) for s, lst in listings.items() for t in lst.templates]
        shown = {key: uri for uri, key in exposed_uris(pairs).items()}
        templates = [
            t.model_copy(update={"uri_template": shown[(s, t.uri_template)]})
            for s, lst in listings.items()
            for t in lst.templates
        ]
        return types.ListResourceTemplatesResult(resource_templates=templates)

    async def read_resource(
        self, ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        try:
            server, result = await self.offers.read(str(params.uri), await self._servers())
        except OfferError as exc:
            raise MCPError(code=RESOURCE_NOT_FOUND, message=str(exc)) from None
        want, raw = split_named(str(params.uri))
        if want is None:
            return result
        # Read by its namespaced URI: the contents name it so too.
        contents = [c.model_copy(update={"uri": named(server, c.uri)}) if c.uri == raw else c for c in result.contents]
        return result.model_copy(update={"contents": contents})

    async def subscribe(
        self, ctx: ServerRequestContext[Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        uri = str(params.uri)
        server, raw = await self._owned(uri)
        connection = sdk_private.connection_of(ctx.session)
        if connection is None:
            raise MCPError(code=types.INVALID_REQUEST, message="subscriptions need a session")
        held = sum(1 for subs in self._subscribed.values() if connection in subs)
        if held >= MAX_SUBSCRIPTIONS and connection not in self._subscribed.get((server, raw), {}):
            raise MCPError(code=types.INVALID_REQUEST, message=f"at most {MAX_SUBSCRIPTIONS} subscriptions per session")
        subscribers = self._subscribed.setdefault((server, raw), {})
        if not subscribers:
            await self._upstream(server, "resources/subscribe", raw, subscribe=True)
        if connection not in subscribers:
            connection.exit_stack.callback(self._forget, (server, raw), connection)
        subscribers[connection] = (ctx.session, uri)
        return types.EmptyResult()

    async def unsubscribe(
        self, ctx: ServerRequestContext[Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        server, raw = await self._owned(str(params.uri))
        self._forget((server, raw), sdk_private.connection_of(ctx.session))
        if not self._subscribed.get((server, raw)):
            self._subscribed.pop((server, raw), None)
            await self._upstream(server, "resources/unsubscribe", raw, subscribe=False)
        return types.EmptyResult()

    def _forget(self, key: tuple[str, str], connection: object) -> None:
        self._subscribed.get(key, {}).pop(connection, None)

    async def _owned(self, uri: str) -> tuple[str, str]:
        try:
            return await self.offers.owner(uri, await self._servers()), split_named(uri)[1]
        except OfferError as exc:
            raise MCPError(code=RESOURCE_NOT_FOUND, message=str(exc)) from None

    async def _upstream(self, server: str, what: str, uri: str, *, subscribe: bool) -> None:
        try:
            if subscribe:
                await self.offers.use(server, what, lambda c: c.subscribe_resource(uri))
            else:
                await self.offers.use(server, what, lambda c: c.unsubscribe_resource(uri))
        except OfferError as exc:
            raise MCPError(code=types.INTERNAL_ERROR, message=str(exc)) from None

    async def _notice(self, server: str, notice: types.ServerNotification) -> None:
        if not isinstance(notice, types.ResourceUpdatedNotification):
            return
        for session, uri in list(self._subscribed.get((server, str(notice.params.uri)), {}).values()):
            try:
                with anyio.fail_after(NOTIFY_TIMEOUT_S):
                    await session.send_resource_updated(uri)
            except Exception as exc:  # a client that left or reads slowly loses this one
                log.debug("a resource update was not delivered: %s", exc)

    async def list_prompts(self, ctx: ServerRequestContext[Any], params: Any) -> types.ListPromptsResult:
        listings = await self.offers.listings(await self._servers())
        pairs = [(s, p.name) for s, lst in listings.items() for p in lst.prompts]
        shown = {key: name for name, key in exposed_prompt_names(pairs).items()}
        prompts = [
            p.model_copy(update={"name": shown[(s, p.name)]}) for s, lst in listings.items() for p in lst.prompts
        ]
        return types.ListPromptsResult(prompts=prompts)

    async def _prompt(self, name: str) -> tuple[str, str]:
        listings = await self.offers.listings(await self._servers())
        names = exposed_prompt_names([(s, p.name) for s, lst in listings.items() for p in lst.prompts])
        if name not in names:
            raise MCPError(code=types.INVALID_PARAMS, message=f"unknown prompt {name!r}")
        return names[name]

    async def get_prompt(
        self, ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        server, name = await self._prompt(params.name)
        try:
            return await self.offers.prompt(server, name, params.arguments)
        except OfferError as exc:
            raise MCPError(code=types.INTERNAL_ERROR, message=str(exc)) from None

    async def complete(
        self, ctx: ServerRequestContext[Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        ref = params.ref
        if isinstance(ref, types.PromptReference):
            server, name = await self._prompt(ref.name)
            ref = ref.model_copy(update={"name": name})
        else:
            listings = await self.offers.listings(await self._servers())
            pairs = [(s, t.uri_template) for s, lst in listings.items() for t in lst.templates]
            found = exposed_uris(pairs).get(ref.uri)
            if found is None:
                raise MCPError(code=types.INVALID_PARAMS, message=f"no resource template {ref.uri!r}")
            server, template = found
            ref = ref.model_copy(update={"uri": template})
        argument = {"name": params.argument.name, "value": params.argument.value}
        context = params.context.arguments if params.context is not None else None
        try:
            return await self.offers.complete(server, ref, argument, context)
        except OfferError as exc:
            raise MCPError(code=types.INTERNAL_ERROR, message=str(exc)) from None
