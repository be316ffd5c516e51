"""A test MCP server that starts, completes the handshake, and crashes on the next request.

It answers ``initialize`` properly (so connecting succeeds), then exits with status 3 and a
message on stderr at the first request after it (``tools/list``).
"""

import json
import sys


def main() -> None:
    for line in sys.stdin:
        msg = json.loads(line)
        if msg.get("method") == "initialize":
            result = {
                "protocolVersion": msg["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "crasher", "version": "1"},
            }
            print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
        elif "id" in msg:
            print(f"crasher: giving up on {msg.get('method')}", file=sys.stderr, flush=True)
            sys.exit(3)


if __name__ == "__main__":
    main()
