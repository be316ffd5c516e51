"""The MCP conformance suite's client scenarios drive gocode through this command: the suite
runs ``python tests/conformance/client.py MODE SCENARIO_URL`` (the URL last) and watches what
arrives at its test server. MODE is how gocode reaches it: ``call`` (``gocode call``, the
controller's Python client), ``exec`` (``gocode exec``, a program through the pooled
controller) or ``direct`` (``gocode exec --direct``, the Go runtime's own client).

What is called follows the scenario's server: its one tool (``add_numbers`` with two numbers,
``test_reconnection`` with no arguments), or nothing past initialize and the listing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ARGS = {"add_numbers": {"a": 2, "b": 3}}


def main() -> int:
    mode, url = sys.argv[1], sys.argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    tool = {"tools_call": "add_numbers", "sse-retry": "test_reconnection"}.get(scenario)
    gocode = str(Path(sys.executable).parent / "gocode")
    with tempfile.TemporaryDirectory(prefix="gocode-conformance-") as tmp:
        config = Path(tmp) / "gocode.json"
        config.write_text(
            json.dumps(
                {
                    "mcpServers": {"suite": {"type": "http", "url": url, "timeout": 20}},
                    "defaults": {"codeMode": {"sandbox": "off", "timeout": 30}},
                }
            )
        )
        if mode == "call":
            cmd = [gocode, "call", "-c", str(config), "suite", tool or "-", "--args", json.dumps(ARGS.get(tool, {}))]
            if tool is None:
                cmd = [gocode, "list", "-c", str(config)]
        else:
            args = "map[string]any" + json.dumps(ARGS[tool]) if tool in ARGS else "nil"
            code = f'fmt.Println(must(callTool(ctx, "suite.{tool}", {args})))' if tool else 'fmt.Println("connected")'
            cmd = [gocode, "exec", "-c", str(config), *(["--direct"] if mode == "direct" else []), "-"]
            return subprocess.run(cmd, input=code, text=True, timeout=120).returncode
        return subprocess.run(cmd, timeout=120).returncode


if __name__ == "__main__":
    sys.exit(main())
