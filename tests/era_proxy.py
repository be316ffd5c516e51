"""A stdio MCP proxy that changes which protocol era a real server appears to speak.

Used by the tests to reproduce servers that exit on the discover probe or speak only the modern era, around a real server:

    python era_proxy.py modern-only -- mcp-server-time
        refuses ``initialize`` (-32022, like a server of the stateless 2026-07-28 revision only)
    python era_proxy.py exit-on-discover -- mcp-server-time
        exits when the first request is ``server/discover`` (like rmcp-based servers, go-sdk #1177)

Everything else is forwarded unchanged, line by line, in both directions.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading


def main() -> None:
    mode = sys.argv[1]
    child = subprocess.Popen(sys.argv[sys.argv.index("--") + 1 :], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    lock = threading.Lock()

    def reply(line: bytes) -> None:
        with lock:
            sys.stdout.buffer.write(line if line.endswith(b"\n") else line + b"\n")
            sys.stdout.buffer.flush()

    def pump() -> None:
        assert child.stdout is not None
        for line in child.stdout:
            reply(line)

    threading.Thread(target=pump, daemon=True).start()
    first = True
    for line in sys.stdin.buffer:
        try:
            msg = json.loads(line)
        except ValueError:
            msg = {}
        method = msg.get("method") if isinstance(msg, dict) else None
        if mode == "exit-on-discover" and first and method == "server/discover":
            print("ExpectedInitializeRequest -> exiting", file=sys.stderr)
            child.kill()
            sys.exit(1)
        first = False
        if mode == "modern-only" and method == "initialize":
            error = {
                "code": -32022,
                "message": "this server only speaks 2026-07-28; use server/discover",
                "data": {"supported": ["2026-07-28"]},
            }
            reply(json.dumps({"jsonrpc": "2.0", "id": msg.get("id"), "error": error}).encode())
            continue
        child.stdin.write(line)
        child.stdin.flush()
    child.stdin.close()
    child.wait()


if __name__ == "__main__":
    main()
