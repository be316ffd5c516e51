"""A hand-written stdio MCP server for session-lifetime tests: slow calls and a malformed answer.

Tools:

    slow {"seconds": N}   answers "slept N" after N seconds (answered from a thread, so calls overlap)
    malformed             answers with a result that is not a ``CallToolResult`` (the client rejects
                          it; the connection itself stays fine)

Each start appends one line to the file named by ``--start-log``, so a test can count sessions.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from typing import Any

TOOLS = [
    {
        "name": "slow",
        "description": "Answer after a while.",
        "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}, "required": ["seconds"]},
    },
    {"name": "malformed", "description": "Answer with a broken result.", "inputSchema": {"type": "object"}},
]

_out = threading.Lock()


def send(msg: dict[str, Any]) -> None:
    with _out:
        sys.stdout.write(json.dumps(msg) + "\n")
        sys.stdout.flush()


def answer_later(msg_id: Any, seconds: float) -> None:
    time.sleep(seconds)
    send({"jsonrpc": "2.0", "id": msg_id, "result": {"content": [{"type": "text", "text": f"slept {seconds:g}"}]}})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--start-log")
    args = parser.parse_args()
    if args.start_log:
        with open(args.start_log, "a") as fh:
            fh.write("start\n")
    for line in sys.stdin:
        msg = json.loads(line)
        method, msg_id = msg.get("method"), msg.get("id")
        if msg_id is None:
            continue  # notifications
        if method == "initialize":
            result = {
                "protocolVersion": msg["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "sessions", "version": "1"},
            }
            send({"jsonrpc": "2.0", "id": msg_id, "result": result})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": msg_id, "result": {"tools": TOOLS}})
        elif method == "tools/call" and msg["params"]["name"] == "slow":
            seconds = float(msg["params"].get("arguments", {}).get("seconds", 0))
            threading.Thread(target=answer_later, args=(msg_id, seconds), daemon=True).start()
        elif method == "tools/call" and msg["params"]["name"] == "malformed":
            send({"jsonrpc": "2.0", "id": msg_id, "result": {"content": "not a list"}})
        else:
            send({"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32601, "message": f"no method {method}"}})


if __name__ == "__main__":
    main()
