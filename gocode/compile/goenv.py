"""Where a Go toolchain is fetched from and how it is checked, read from the environment the way
the ``go`` command reads it (``go help goproxy``, ``go help module-auth``).

- ``GOPROXY``: a list split by ``,`` (the next is tried when one has not the file) or ``|`` (when one
  fails at all); ``off`` ends it, ``direct`` is skipped (a toolchain has no repository to clone from).
- ``GOSUMDB``: ``off`` (no check), a database name Go knows, or ``<key> [<url>]``; without a URL
  the database is read through the proxy when the proxy serves it, else at ``https://<name>``.
- ``GONOSUMDB``, else ``GOPRIVATE``: module path patterns that skip the database, as do
  ``GONOSUMCHECK=1`` and ``-insecure`` in ``GOFLAGS`` (their older spellings).
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

from gocode.compile.sumdb import SUM_GOLANG_ORG
from gocode.errors import ToolchainError

DEFAULT_GOPROXY = "https://proxy.golang.org,direct"
KNOWN_SUMDBS = {"sum.golang.org": SUM_GOLANG_ORG, "sum.golang.google.cn": SUM_GOLANG_ORG}


@dataclass(frozen=True)
class Proxy:
    url: str  # no trailing slash
    any_error: bool  # after "|": the next proxy is tried on any error, not only on "not found"


def proxies(env: Mapping[str, str] | None = None) -> list[Proxy]:
    """The module proxies to try in order; a :class:`ToolchainError` when there is none to fetch from."""
    value = (env if env is not None else os.environ).get("GOPROXY") or DEFAULT_GOPROXY
    found: list[Proxy] = []
    for entry, sep in re.findall(r"([^,|]*)([,|]?)", value):
        entry = entry.strip()
        if entry == "off":
            break  # go fails here: so does every later entry
        if entry.startswith(("https://", "http://", "file://")):
            found.append(Proxy(entry.rstrip("/"), sep == "|"))
    if found:
        return found
    if "off" in (e.strip() for e in re.split(r"[,|]", value)):
        raise ToolchainError(
            f"GOPROXY={value} forbids downloading a Go toolchain: set GOPROXY to a module proxy, "
            "or install Go 1.25 or newer yourself (on PATH, or GOCODE_GO=/path/to/go)"
        )
    raise ToolchainError(
        f"GOPROXY={value} names no module proxy to download a Go toolchain from (`direct` cannot fetch one): "
        "set GOPROXY to a proxy (https://proxy.golang.org), or install Go yourself (on PATH, or GOCODE_GO)"
    )


@dataclass(frozen=True)
class Sumdb:
    key: str  # the verifier key: <name>+<hash>+<key>
    url: str | None  # None: through the proxy if it serves the database, else https://<name>

    @property
    def name(self) -> str:
        return self.key.split("+", 1)[0]


def sumdb(module: str, environ: Mapping[str, str] | None = None) -> Sumdb | None:
    """The checksum database that vouches for ``module``, or None when the environment turns it off."""
    env = environ if environ is not None else os.environ
    value = (env.get("GOSUMDB") or "sum.golang.org").strip()
    if value == "off" or env.get("GONOSUMCHECK") == "1" or "-insecure" in env.get("GOFLAGS", "").split():
        return None
    patterns = env.get("GONOSUMDB") or env.get("GOPRIVATE") or ""
    if matches_prefix(patterns, module):
        return None
    key, _, url = value.partition(" ")
    key = KNOWN_SUMDBS.get(key, key)
    if "+" not in key:
        raise ToolchainError(f"GOSUMDB={value}: not a checksum database gocode knows, nor a key (name+hash+key)")
    url = url.strip()
    if url and "://" not in url:
        url = "https://" + url
    return Sumdb(key, url.rstrip("/") or None)


def matches_prefix(patterns: str, path: str) -> bool:
    """Whether a comma-separated list of glob patterns matches ``path`` or one of its leading elements
    (golang.org/x/mod/module.MatchPrefixPatterns)."""
    elements = path.split("/")
    for pattern in (p.strip() for p in patterns.split(",")):
        if not pattern:
            continue
        n = pattern.rstrip("/").count("/") + 1
        if len(elements) >= n and fnmatch.fnmatchcase("/".join(elements[:n]), pattern.rstrip("/")):
            return True
    return False
