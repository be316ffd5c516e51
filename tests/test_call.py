"""``gocode call SERVER TOOL``: one tool from the shell, arguments read by the tool's schema."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from gocode.calling import coerce, parse_arguments
from gocode.errors import CallError
from gocode.toolset import ServerTools, ToolInfo
from tests.conftest import ROOT, demo_stdio
from tests.test_cli import gocode

SCHEMA = {
    "type": "object",
    "properties": {
        "amount": {"type": "integer", "minimum": 0},
        "ratio": {"type": "number"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "urgent": {"type": "boolean"},
        "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "when": {"$ref": "#/$defs/When"},
        "meta": {"type": "object"},
        "free": {},
    },
    "required": ["amount"],
    "additionalProperties": False,
    "$defs": {"When": {"type": "string", "enum": ["now", "later"]}},
}


@pytest.mark.fast
def test_values_are_read_as_the_schema_types_them():
    assert coerce(SCHEMA, "amount", "12") == 12
    assert coerce(SCHEMA, "ratio", "2") == 2 and coerce(SCHEMA, "ratio", "0.5") == 0.5
    assert coerce(SCHEMA, "tags", "a") == ["a"] and coerce(SCHEMA, "tags", '["a", "b"]') == ["a", "b"]
    assert coerce(SCHEMA, "urgent", "true") is True and coerce(SCHEMA, "urgent", "False") is False
    assert coerce(SCHEMA, "note", "12") == "12" and coerce(SCHEMA, "note", "null") is None
    assert coerce(SCHEMA, "when", "now") == "now"
    assert coerce(SCHEMA, "meta", '{"a": 1}') == {"a": 1}
    assert coerce(SCHEMA, "free", "3") == 3 and coerce(SCHEMA, "free", "three") == "three"
    with pytest.raises(ValueError, match="not an integer"):
        coerce(SCHEMA, "amount", "twelve")
    with pytest.raises(ValueError, match="takes no argument 'amout'"):
        coerce(SCHEMA, "amout", "1")


@pytest.mark.fast
def test_bad_arguments_are_refused_with_the_go_declaration():
    tool = ToolInfo("ledger", "record", "Record an amount.", SCHEMA)
    listed = ServerTools("ledger", (tool,))
    got = parse_arguments(listed, tool, '{"note": "x"}', ["amount=5", "tags=a", "tags=b"])
    assert got == {"note": "x", "amount": 5, "tags": ["a", "b"]}
    for args_json, pairs, why in [
        (None, ["amount=-1"], "amount: -1 is less than the minimum of 0"),
        (None, ["urgent=true"], "'amount' is a required property"),
        ("[1]", [], "--args must be a JSON object, not list"),
        ("{", [], "--args is not JSON"),
        (None, ["amount"], "'amount' is not key=value"),
        ('{"amount": 5}', ["amount=6"], "'amount' is given both in --args and as amount=..."),
        ('{"tags": ["a"]}', ["tags=b"], "'tags' is given both in --args and as tags=..."),
        (None, ["amount=5", "amount=6"], "'amount' is given more than once"),
    ]:
        with pytest.raises(CallError) as caught:
            parse_arguments(listed, tool, args_json, pairs)
        text = str(caught.value)
        assert text.startswith("bad arguments for ledger.record: ") and why in text, text
        assert "func record(context.Context, RecordInput) (string, error)" in text
        assert "type RecordInput struct {" in text


# --- from the shell, against a real server --------------------------------------------------------


@pytest.fixture
def ledger(tmp_path: Path) -> tuple[Path, Path]:
    book = tmp_path / "ledger.jsonl"
    server = {"command": sys.executable, "args": [str(ROOT / "tests/servers/ledger_server.py"), "--ledger", str(book)]}
    cfg = tmp_path / "gocode.json"
    cfg.write_text(json.dumps({"mcpServers": {"ledger": server, "weather": demo_stdio()}}))
    return cfg, book


def entries(book: Path) -> list[dict]:
    return [json.loads(line) for line in book.read_text().splitlines()] if book.exists() else []


def test_call_with_key_value_pairs_and_json(ledger, tmp_path):
    cfg, book = ledger
    p = gocode("call", "-c", str(cfg), "ledger", "record", "amount=250", "tags=food", "tags=travel", "urgent=true")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == {"amount": 250, "tags": ["food", "travel"], "urgent": True, "note": None}
    # --args, the Go name, --json (the whole MCP result) and --out.
    out = tmp_path / "result.json"
    args = '{"amount": 7, "tags": [], "note": "12"}'
    p = gocode("call", "-c", str(cfg), "ledger", "record", "--args", args, "--json", "--out", str(out))
    assert p.returncode == 0 and p.stdout == "", p.stderr
    doc = json.loads(out.read_text())
    assert doc["structuredContent"] == {"amount": 7, "tags": [], "urgent": False, "note": "12"}
    assert doc["isError"] is False
    p = gocode("call", "-c", str(cfg), "weather", "getWeather", "city=Oslo", "unit=fahrenheit")
    assert p.returncode == 0 and json.loads(p.stdout)["temperature"] == 39.2, p.stderr
    assert [e["amount"] for e in entries(book)] == [250, 7]


def test_a_bad_argument_is_refused_before_the_call(ledger):
    cfg, book = ledger
    p = gocode("call", "-c", str(cfg), "ledger", "record", "amount=lots", "tags=x")
    assert p.returncode == 2
    assert "bad arguments for ledger.record: amount=lots: not an integer" in p.stderr
    assert "func record(context.Context, RecordInput) (RecordOutput, error)" in p.stderr
    p = gocode("call", "-c", str(cfg), "ledger", "record", "amount=5")
    assert p.returncode == 2 and "'tags' is a required property" in p.stderr
    assert entries(book) == []  # nothing was recorded
    p = gocode("call", "-c", str(cfg), "ledger", "recrd")
    assert p.returncode == 2 and "has no tool 'recrd'; did you mean record?" in p.stderr
    p = gocode("call", "-c", str(cfg), "ledgr", "record")
    assert p.returncode == 2 and "no server 'ledgr'" in p.stderr and "did you mean ledger?" in p.stderr


def test_a_tool_error_exits_non_zero(ledger):
    cfg, _ = ledger
    p = gocode("call", "-c", str(cfg), "ledger", "refuse", "reason=closed")
    assert p.returncode == 1 and p.stdout == ""
    assert "gocode: ledger.refuse failed: Error executing tool refuse: refused: closed" in p.stderr
    p = gocode("call", "-c", str(cfg), "ledger", "refuse", "reason=closed", "--json")
    assert p.returncode == 1 and json.loads(p.stdout)["isError"] is True
