"""How gocode introduces itself to the MCP servers it connects to (``clientInfo``).

The controller and the Go programs it builds say the same: ``gocode`` and the installed
package's version, so a server's logs tell which gocode spoke to it. The Go runtime reads the
version from its server spec (``clientVersion``, see go_templates/rt).
"""

from __future__ import annotations

import functools
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp_types import Implementation

CLIENT_NAME = "gocode"


@functools.cache
def client_version() -> str:
    """The installed gocode's version ("0" when it runs from a tree that is not installed)."""
    try:
        return version("gocode")
    except PackageNotFoundError:
        return "0"


def client_info() -> Implementation:
    from mcp_types import Implementation  # here: the run stage reads the version without the SDK

    return Implementation(name=CLIENT_NAME, version=client_version())
