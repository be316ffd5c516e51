"""The MCP conformance suite's client scenarios drive gocode through this command: the suite
runs ``python tests/conformance/client.py MODE SCENARIO_URL`` (the URL last) and watches what
arrives at its test server. MODE is how gocode reaches it: ``call`` (``gocode call``, the
controller's Python client), ``exec`` (``gocode exec``, a program through the pooled
controller) or ``direct`` (``gocode exec --direct``, the Go runtime's own client).

What is called follows the scenario's server: its one tool (``add_numbers`` with two numbers,
``test_reconnection`` or ``test_client_elicitation_defaults`` with no arguments, ``test-tool``
behind OAuth), or nothing past initialize and the listing. A server's elicitation is answered
as a script chooses to (``--elicit defaults``).

The ``auth/`` scenarios configure the server with ``auth: {type: oauth}`` (the pre-registered
client, or client credentials, from the suite's ``MCP_CONFORMANCE_CONTEXT``), keep tokens in a
fresh directory, and play the person at the browser: ``client.py browse URL`` (set as
``$BROWSER``) opens the authorization URL, which the suite's authorization server answers with
a redirect at once, and follows that redirect to gocode's listener on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ARGS = {"add_numbers": {"a": 2, "b": 3}}
# A script's choice: a server's form is accepted with its defaults (nobody is at a terminal).
ELICIT = ["--elicit", "defaults"]
CIMD_URL = "https://conformance-test.local/client-metadata.json"  # the suite's examples use this one


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def browse(url: str) -> int:
    """What a browser does with the authorization URL when the person agrees at once."""
    try:
        urllib.request.build_opener(_NoRedirect).open(url, timeout=30)
        return 1  # no redirect: nothing to bring back
    except urllib.error.HTTPError as e:
        location = e.headers.get("Location")
        if e.code not in (301, 302, 303, 307, 308) or not location:
            return 1
    with urllib.request.urlopen(location, timeout=30) as back:
        return 0 if back.status == 200 else 1


def oauth(scenario: str, tmp: Path) -> dict[str, Any]:
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    auth: dict[str, Any] = {"type": "oauth", "loginTimeout": 30}
    if scenario == "auth/client-credentials-basic":
        auth |= {
            "grant": "client_credentials",
            "clientId": context["client_id"],
            "clientSecret": context["client_secret"],
        }
    elif "private_key_pem" in context:  # private_key_jwt: the key as an operator keeps it, in a file
        key = tmp / "client.pem"
        key.touch(mode=0o600)
        key.write_text(context["private_key_pem"])
        auth |= {
            "grant": "client_credentials",
            "clientId": context["client_id"],
            "privateKeyFile": str(key),
            "signingAlgorithm": context.get("signing_algorithm", "RS256"),
        }
    elif "client_id" in context:
        auth |= {"clientId": context["client_id"], "clientSecret": context["client_secret"]}
    else:
        auth["clientMetadataUrl"] = CIMD_URL
    return auth


def main() -> int:
    if sys.argv[1] == "browse":
        return browse(sys.argv[2])
    mode, url = sys.argv[1], sys.argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    signs_in = scenario.startswith("auth/")
    tool = (
        "test-tool"
        if signs_in
        else {
            "tools_call": "add_numbers",
            "sse-retry": "test_reconnection",
            "elicitation-sep1034-client-defaults": "test_client_elicitation_defaults",
        }.get(scenario)
    )
    gocode = str(Path(sys.executable).parent / "gocode")
    with tempfile.TemporaryDirectory(prefix="gocode-conformance-") as tmp:
        server: dict[str, Any] = {"type": "http", "url": url, "timeout": 20}
        env = dict(os.environ)
        if signs_in:
            server["auth"] = oauth(scenario, Path(tmp))
            env |= {
                "GOCODE_OAUTH_DIR": str(Path(tmp) / "oauth"),
                "BROWSER": shlex.join([sys.executable, __file__, "browse"]) + " %s",
            }
        config = Path(tmp) / "gocode.json"
        config.write_text(
            json.dumps({"mcpServers": {"suite": server}, "defaults": {"codeMode": {"sandbox": "off", "timeout": 30}}})
        )
        if mode == "call":
            cmd = [
                gocode,
                "call",
                "-c",
                str(config),
                "suite",
                tool or "-",
                "--args",
                json.dumps(ARGS.get(tool or "", {})),
                *ELICIT,
            ]
            if tool is None:
                cmd = [gocode, "list", "-c", str(config)]
        else:
            args = "map[string]any" + json.dumps(ARGS[tool]) if tool in ARGS else "nil"
            code = f'fmt.Println(must(callTool(ctx, "suite.{tool}", {args})))' if tool else 'fmt.Println("connected")'
            cmd = [gocode, "exec", "-c", str(config), *(["--direct"] if mode == "direct" else []), *ELICIT, "-"]
            return subprocess.run(cmd, input=code, text=True, timeout=120, env=env).returncode
        return subprocess.run(cmd, timeout=120, env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
