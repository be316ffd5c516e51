"""The pure parts of resources and prompts (gocode/mcp/offers.py): which URIs a template
matches, the names two servers' resources and prompts are offered under, named URIs, what a
listing keeps of a server's capabilities, and the rules naming resources only where a server
offers them."""

from __future__ import annotations

import pytest

from gocode.config import CodeModeConfig
from gocode.mcp.cache import ListingCache
from gocode.mcp.listing import Listing, server_tools
from gocode.mcp.offers import (
    exposed_prompt_names,
    exposed_uris,
    literal_length,
    named,
    split_named,
    template_matches,
)
from gocode.view.rules import rules
from tests.conftest import config_from

pytestmark = pytest.mark.fast


@pytest.mark.parametrize(
    ("template", "uri", "matches"),
    [
        ("vault://a/items/{id}", "vault://a/items/7", True),
        ("vault://a/items/{id}", "vault://a/items/7/x", False),  # a simple variable is one segment
        ("vault://a/items/{id}", "vault://b/items/7", False),
        ("file:///{+path}", "file:///etc/hosts", True),
        ("a.b/{x}", "aXb/1", False),  # the literal text is literal, dots included
        ("plain://uri", "plain://uri", True),
        ("plain://uri", "plain://uri2", False),
    ],
)
def test_template_matches(template, uri, matches):
    assert template_matches(template, uri) is matches


def test_the_more_literal_text_a_template_has_the_more_specific_it_is():
    assert literal_length("{+uri}") == 0 < literal_length("file:///{+path}") < literal_length("vault://a/items/{id}")


def test_named_uris_round_trip_and_other_uris_name_no_server():
    assert split_named(named("b.c", "shared://doc")) == ("b.c", "shared://doc")
    for uri in ("shared://doc", "gocode://b/", "gocode:///x"):
        assert split_named(uri) == (None, uri)


def test_a_uri_or_prompt_two_servers_have_is_namespaced_and_the_rest_keep_theirs():
    assert exposed_uris([("a", "shared://doc"), ("b", "shared://doc"), ("a", "vault://a")]) == {
        "gocode://a/shared://doc": ("a", "shared://doc"),
        "gocode://b/shared://doc": ("b", "shared://doc"),
        "vault://a": ("a", "vault://a"),
    }
    names = exposed_prompt_names([("a", "greet"), ("b", "greet"), ("a", "only"), ("x", "a_greet")])
    assert names["only"] == ("a", "only") and names["b_greet"] == ("b", "greet")
    # "a_greet" is another server's own prompt too: both stay reachable, under distinct names.
    assert sorted(names.values()) == [("a", "greet"), ("a", "only"), ("b", "greet"), ("x", "a_greet")]


def test_a_listing_keeps_what_the_server_offers(tmp_path):
    server = config_from({"s": {"command": "x"}}).mcp_servers["s"]
    listing = Listing(tools=[{"name": "t", "inputSchema": {"type": "object"}}], ttl_ms=60_000, offers=["prompts"])
    assert server_tools("s", server, listing, "2025-11-25", None).offers == ("prompts",)
    cache = ListingCache(tmp_path)
    cache.save("s", server, listing, "2025-11-25", "")
    hit = cache.load("s", server)
    assert hit is not None and hit.listing.offers == ["prompts"]
    # A listing kept before gocode asked does not know: the server may offer them.
    assert server_tools("s", server, Listing(), "2025-11-25", None).offers == ("resources", "prompts")


def test_the_rules_name_resources_and_prompts_only_where_a_server_offers_them():
    settings = CodeModeConfig()
    with_them, without = rules(settings, "1.26", offers=True), rules(settings, "1.26", offers=False)
    assert "readResource(ctx, uri)" in with_them and "getPrompt(" in with_them
    assert "readResource" not in without and "getPrompt" not in without
    assert "callToolContent(" in with_them and "callToolContent(" in without
