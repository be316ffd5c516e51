"""Tool lists used by the schema tests: CPE's weather example and deliberately hostile ones."""

from __future__ import annotations

from gocode.toolset import ServerTools, ToolInfo, ToolSet

# CPE's example, verbatim in spirit: note "location" is required but is not a property.
CPE_WEATHER = [
    ToolInfo(
        "weather",
        "get_weather",
        "Get current weather data for a location",
        {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The name of the city to get weather for"},
                "unit": {
                    "type": "string",
                    "enum": ["celsius", "fahrenheit"],
                    "description": "Temperature unit for the weather response",
                },
            },
            "required": ["location", "unit"],
        },
        {
            "type": "object",
            "properties": {"temperature": {"type": "number", "description": "Temperature in celsius"}},
            "required": ["temperature"],
        },
    ),
    ToolInfo(
        "weather",
        "get_city",
        "Get current city location",
        {"type": "object", "properties": {}},
        {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    ),
]

NASTY = 'ends */ a comment\nnewline `backtick` "quote" \\ back \x00 nul \x1b esc \u2028 ls \ufeff bom \u202e rlo'

HOSTILE = [
    ToolInfo(
        "evil",
        "func",  # a Go keyword
        NASTY,
        {
            "type": "object",
            "properties": {
                "type": {"type": "string", "description": NASTY},
                "Type": {"type": "integer"},  # differs only in case
                "2fa": {"type": "boolean"},  # leading digit
                "naïve": {"type": "string"},  # non-ASCII
                'we`ird"name,x': {"type": "string"},  # cannot be a struct tag: left out
                "mode": {"enum": ['a"b', "line\nbreak", "", 'a"b', "*/"], "description": "enum values with quotes"},
                "nums": {"enum": [1, 2.5, 3]},
                "mixed": {"enum": ["x", 1, None]},
                "nullable": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
                "typelist": {"type": ["integer", "null"]},
                "union": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
                "nested": {
                    "type": "object",
                    "properties": {"deep": {"type": "array", "items": {"type": "object", "properties": {"x": {}}}}},
                },
                "tags": {"type": "object", "additionalProperties": {"type": "string"}},
                "anything": {},
                "never": False,
                "konst": {"const": "fixed"},
                "tuple": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "number"}]},
                "ref": {"$ref": "#/$defs/Node"},
                "remote": {"$ref": "https://example.test/schema.json"},
                "both": {"allOf": [{"$ref": "#/$defs/Named"}, {"properties": {"extra": {"type": "string"}}}]},
            },
            "required": ["type", "ghost"],
            "$defs": {
                "Node": {
                    "type": "object",
                    "description": "A recursive tree node",
                    "properties": {"value": {"type": "string"}, "child": {"$ref": "#/$defs/Node"}},
                },
                "Named": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
            },
        },
        {"type": "array", "items": {"type": "string"}},
    ),
    ToolInfo("evil", "len", "shadows a builtin", {"type": "object"}),
    ToolInfo(
        "evil",
        "FuncInput",
        "named like another tool's type",
        {"type": "object", "properties": {"a": {"type": "string"}}},
    ),
    ToolInfo("evil", "search", "same name on two servers", {"type": "object"}),
    ToolInfo("other", "search", "same name on two servers", {"type": "object"}),
    ToolInfo("other", "ctx", "a name the program uses", {"type": "object"}),
    ToolInfo("other", "exec", "the name of an auto-imported package", {"type": "object"}),
    ToolInfo("other", "天气", "non-ASCII tool name", {"type": "object"}, {"type": "string"}),
    ToolInfo("other", "weird_schema", "schemas that are not objects", True, "nope"),  # type: ignore[arg-type]
    ToolInfo(
        "other",
        "''",
        "",  # no description: the doc comment quotes the tool and property names
        {"type": "object", "properties": {"``x''": {"type": "string"}}},
    ),
    ToolInfo(
        "other",
        "map_input",
        "input with only additionalProperties",
        {"type": "object", "additionalProperties": {"type": "number"}},
        {"type": "object", "additionalProperties": True},
    ),
]


# Required lists: a nil Go slice must go out as [] (server-memory rejects null), also nested.
LISTS = ToolInfo(
    "notes",
    "add_notes",
    "required arrays",
    {
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"tags": {"type": "array", "items": {"type": "string"}}, "meta": {"type": "object"}},
                    "required": ["tags", "meta"],
                },
            },
            "extra": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["items"],
    },
)


def toolset(tools: list[ToolInfo]) -> ToolSet:
    servers: dict[str, list[ToolInfo]] = {}
    for t in tools:
        servers.setdefault(t.server, []).append(t)
    return ToolSet(tuple(ServerTools(name, tuple(ts)) for name, ts in servers.items()))
