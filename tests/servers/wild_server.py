"""A hand-written stdio MCP server with the shapes real servers send, for fault-isolation tests.

No SDK: it writes exactly the JSON it is told to, so tools the Python SDK would refuse reach
the client as a real server would send them. Options:

    --tools SET        which tool list to serve (see TOOL_SETS)
    --tools-file PATH  serve the "tools" of a JSON file instead (a captured tools/list)
    --noise            print banners, log lines and garbage on stdout between JSON messages
    --protocol V       answer ``initialize`` with this version whatever the client offers
    --instructions T   answer ``initialize`` with these instructions
    --ttl MS           put ``ttlMs``/``cacheScope: private`` on the ``tools/list`` result
    --list-log PATH    append one line to PATH per ``tools/list`` served
    --fail-unless PATH exit 4 with a message on stderr unless PATH exists (a server that comes back)
    --start-delay S    sleep S seconds before reading stdin (a start-up spent waiting, not computing)
    --start-log PATH   append one line to PATH as the process starts (before the start delay)
    --http PORT        serve the same over streamable HTTP on 127.0.0.1:PORT (JSON answers, stateless)
    --quit-after-initialize
                       close stdin before answering ``initialize``, then exit 5 a moment later (a
                       server that quits early: the client's next write finds the pipe closed
                       while stdout is still open)

Every listed tool answers ``tools/call`` with the text ``NAME <arguments as JSON>`` (``repeat``:
its ``text`` repeated ``times`` times); the tool ``die`` exits the process with status 9 (a server that dies mid-session).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any


def _tool(name: str, schema: Any = None, description: str | None = "A tool.", **extra: Any) -> dict[str, Any]:
    tool: dict[str, Any] = {"name": name, **extra}
    if description is not None:
        tool["description"] = description
    tool["inputSchema"] = {"type": "object", "properties": {}} if schema is None else schema
    return tool


WEATHER_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
    "required": ["city"],
}

TOOL_SETS: dict[str, list[dict[str, Any]]] = {
    # CPE's weather example: get_city takes no parameters and says so with `{}`.
    "empty-schema": [
        _tool("get_city", {}, "Get the current city."),
        # Fields newer than 2024-11-05 (title, outputSchema, annotations), sent whatever the version.
        _tool(
            "get_weather",
            WEATHER_SCHEMA,
            "Get current weather data for a location.",
            title="Weather",
            outputSchema={"type": "object", "properties": {"temperature": {"type": "number"}}},
            annotations={"readOnlyHint": True},
        ),
    ],
    # Valid and invalid tools side by side, in an order that puts the bad ones first.
    "mixed": [
        {"description": "a tool without a name", "inputSchema": {"type": "object"}},
        _tool("array_params", {"type": "array", "items": {"type": "string"}}, "Parameters that are an array."),
        _tool("bool_params", True, "Parameters given as the schema `true`."),
        _tool("string_params", {"type": "string"}, "Parameters that are a string."),
        _tool("schema_not_object", "not a schema", "inputSchema is a string."),
        _tool("bad_output", None, "An output schema that is not an object.", outputSchema={"type": "string"}),
        _tool("no_description", None, None),
        _tool("long_description", None, "Lorem ipsum dolor sit amet. " * 1300),
        _tool(42, None, "A name that is not a string."),  # type: ignore[arg-type]
        _tool("echo", {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}, "Echo."),
        _tool("echo", None, "A second tool named echo."),
        _tool("die", None, "Exit the server process."),
    ],
    "many": [_tool(f"tool_{i:03d}", {"properties": {"n": {"type": "integer"}}}, f"Tool {i}.") for i in range(300)],
    "plain": [_tool("ping", None, "Answer pong."), _tool("die", None, "Exit the server process.")],
    # An echo/fetch-like tool: a result as long as asked, on one line.
    "big": [
        _tool(
            "repeat",
            {
                "type": "object",
                "properties": {"text": {"type": "string"}, "times": {"type": "integer"}},
                "required": ["text", "times"],
            },
            "Answer text repeated times times, on one line.",
        )
    ],
}

NOISE = [
    "Starting wild server v1.0 ...",
    "[info] listening on stdio",
    "\x1b[32mready\x1b[0m",
    "{not json at all",
    "Error: getaddrinfo ENOTFOUND registry.example.com",
    "",
]


class Wild:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.tools = (
            json.loads(Path(args.tools_file).read_text())["tools"] if args.tools_file else TOOL_SETS[args.tools]
        )
        self.noise = 0
        self.sent: list[dict[str, Any]] | None = None

    def send(self, msg: dict[str, Any]) -> None:
        if self.sent is not None:  # over HTTP: the answer to the request being handled
            self.sent.append(msg)
            return
        if self.args.noise:
            print(NOISE[self.noise % len(NOISE)], flush=True)
            self.noise += 1
        # Sorted keys, as some servers' serializers emit them.
        print(json.dumps(msg, sort_keys=True), flush=True)

    def answer(self, msg: dict[str, Any]) -> None:
        method, mid = msg.get("method"), msg.get("id")
        if mid is None:
            return  # a notification
        if method == "initialize":
            version = self.args.protocol or msg["params"]["protocolVersion"]
            result = {
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": "wild", "version": "1.0"},
            }
            if self.args.instructions is not None:
                result["instructions"] = self.args.instructions
            if self.args.quit_after_initialize:
                os.close(0)
            self.send({"jsonrpc": "2.0", "id": mid, "result": result})
            if self.args.quit_after_initialize:
                time.sleep(0.3)
                sys.exit(5)
        elif method == "tools/list":
            if self.args.list_log:
                with open(self.args.list_log, "a") as f:
                    f.write("list\n")
            result: dict[str, Any] = {"tools": self.tools}
            if self.args.ttl is not None:
                result |= {"ttlMs": self.args.ttl, "cacheScope": "private"}
            self.send({"jsonrpc": "2.0", "id": mid, "result": result})
        elif method == "tools/call":
            name = msg["params"].get("name")
            if name == "die":
                print("wild: told to die", file=sys.stderr, flush=True)
                sys.exit(9)
            if not any(t.get("name") == name for t in self.tools):
                self.send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32602, "message": f"Unknown tool: {name}"}})
                return
            args = msg["params"].get("arguments") or {}
            if name == "repeat":
                text = str(args.get("text", "")) * max(0, min(int(args.get("times", 1)), 1 << 25))
            else:
                text = f"{name} {json.dumps(args, sort_keys=True)}"
            self.send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": text}]}})
        elif method == "ping":
            self.send({"jsonrpc": "2.0", "id": mid, "result": {}})
        else:
            self.send(
                {"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": f"Method not found: {method}"}}
            )


def serve_http(wild: Wild, port: int) -> None:
    """The same answers over streamable HTTP at /mcp: one JSON answer per request, no sessions."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            wild.sent = []
            wild.answer(json.loads(body))
            sent, wild.sent = wild.sent, None
            if not sent:
                self.send_response(202)
                self.end_headers()
                return
            data = json.dumps(sent[0], sort_keys=True).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self.send_response(405)
            self.end_headers()

        def do_DELETE(self) -> None:
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--tools", default="plain", choices=sorted(TOOL_SETS))
    p.add_argument("--tools-file")
    p.add_argument("--noise", action="store_true")
    p.add_argument("--protocol")
    p.add_argument("--ttl", type=int)
    p.add_argument("--list-log")
    p.add_argument("--fail-unless")
    p.add_argument("--start-delay", type=float, default=0.0)
    p.add_argument("--quit-after-initialize", action="store_true")
    p.add_argument("--start-log")
    p.add_argument("--instructions", help="answer initialize with these instructions")
    p.add_argument("--http", type=int, help="serve streamable HTTP (JSON answers, stateless) on this port")
    args = p.parse_args()
    if args.start_log:
        with open(args.start_log, "a") as f:
            f.write("start\n")
    time.sleep(args.start_delay)
    if args.fail_unless and not Path(args.fail_unless).exists():
        print(f"wild: {args.fail_unless} is missing; cannot start", file=sys.stderr, flush=True)
        sys.exit(4)
    wild = Wild(args)
    if args.http is not None:
        serve_http(wild, args.http)
        return
    if args.noise:
        print("wild server banner: hello from stdout", flush=True)
    for line in sys.stdin:
        if line.strip():
            wild.answer(json.loads(line))


if __name__ == "__main__":
    main()
