"""Identifiers and literals from untrusted names and text (pure, no Go)."""

from __future__ import annotations

import pytest

from gocode.schema.names import Registry, camel, clean_text, go_string, pascal

pytestmark = pytest.mark.fast


@pytest.mark.parametrize(
    ("name", "pascal_name", "camel_name"),
    [
        ("get_weather", "GetWeather", "getWeather"),
        ("get-tiny-image", "GetTinyImage", "getTinyImage"),
        ("getHTTPResponse", "GetHTTPResponse", "getHTTPResponse"),
        ("user_id", "UserID", "userID"),
        ("URL_fetch", "URLFetch", "urlFetch"),
        ("HTTPServer", "HTTPServer", "httpServer"),
        ("3d_render", "X3dRender", "x3dRender"),
        ("", "X", "x"),
        ("___", "X", "x"),
        ("météo", "Meteo", "meteo"),
        ("天气", "U5929U6c14", "U5929U6c14"),
        ("a.b/c d", "ABCD", "aBCD"),
        ("utf8_text", "UTF8Text", "utf8Text"),
    ],
)
def test_identifiers(name, pascal_name, camel_name):
    assert pascal(name) == pascal_name
    assert camel(name) == camel_name


def test_registry_suffixes_in_order_and_reserves_twins():
    reg = Registry({"ctx"})
    assert reg.claim("ctx") == "ctx2"
    assert reg.claim("search", also=("Search",)) == "search"
    assert reg.claim("Search") == "Search2"  # the twin was reserved
    assert reg.claim("search", also=("Search",)) == "search3"


@pytest.mark.parametrize(
    "text",
    ['plain', 'quote " and backslash \\', "new\nline\ttab\r", "nul \x00 byte", "emoji 😀 and é", "lone \ud800 surrogate",
     "bom \ufeff here", "`backtick` */ /*"],
)  # fmt: skip
def test_go_string_is_one_ascii_line(text):
    lit = go_string(text)
    assert lit.startswith('"') and lit.endswith('"')
    assert lit.isascii() and "\n" not in lit and "\x00" not in lit
    assert '"' not in lit[1:-1].replace('\\"', "")


def test_clean_text_makes_comment_safe_lines():
    lines = clean_text("first\r\nsecond\u2028third\x00\x07 \ufeffbom\u202e\n\n\n")
    assert lines == ["first", "second", "third bom"]
    assert clean_text("x" * 50, 10) == ["x" * 10 + "…"]
