"""The environment a stdio MCP server starts with: one policy for every mode.

A server is someone else's program: it gets the config's ``env`` for it plus a minimal base
taken from the environment of whoever starts it (the controller in pooled mode and for
discovery, the Go program in direct mode and in a built binary), never the rest of that
environment (``GOCODE_TOKEN``, API keys, cloud credentials, a shell's variables).

The base follows what the MCP SDKs pass by default (Python's ``get_default_environment()``,
TypeScript's ``getDefaultEnvironment()``: ``HOME``, ``LOGNAME``, ``PATH``, ``SHELL``, ``TERM``,
``USER``, and on Windows its system directories and profile), plus the locale, the timezone and
the temporary directory, which servers written for a terminal read, and the paths of the
machine's TLS trust (``SSL_CERT_FILE`` and its kin), which a server needs to reach anything over
HTTPS on a machine with a private CA. Proxies are not passed (their URLs may carry credentials):
a server that needs one gets it through its config ``env``. A value that starts with
``()`` is a shell function exported by bash, never passed (the SDKs' rule). The Go runtime
keeps the same list (``go_templates/rt/serverenv.go``; ``tests/test_server_env.py`` checks that
both agree).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

PASSED = (
    # what both MCP SDKs pass on POSIX
    "HOME",
    "LOGNAME",
    "PATH",
    "SHELL",
    "TERM",
    "USER",
    # locale, timezone, temporary files
    "LANG",
    "LANGUAGE",
    "TZ",
    "TMPDIR",
    # where the machine's TLS trust is (a private CA): paths, not secrets, without which a
    # server behind an intercepting proxy cannot reach anything over HTTPS
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
    # what both MCP SDKs pass on Windows
    "APPDATA",
    "HOMEDRIVE",
    "HOMEPATH",
    "LOCALAPPDATA",
    "PROCESSOR_ARCHITECTURE",
    "PROGRAMFILES",
    "SYSTEMDRIVE",
    "SYSTEMROOT",
    "TEMP",
    "USERNAME",
    "USERPROFILE",
)
PASSED_PREFIXES = ("LC_",)


def base_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The part of ``environ`` (default ``os.environ``) every stdio server gets."""
    source = os.environ if environ is None else environ
    return {
        k: v for k, v in source.items() if (k in PASSED or k.startswith(PASSED_PREFIXES)) and not v.startswith("()")
    }


def server_environment(env: Mapping[str, str], environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """A stdio server's environment: the base, then the config's ``env`` for it (which wins)."""
    return {**base_environment(environ), **env}
