"""Limits of the controller's own process that grow with the number of configured servers.

Each stdio server holds descriptors in gocode for as long as its session lives (its stdin and
stdout pipes and a spooled stderr file), so the controller's RLIMIT_NOFILE caps how many
servers one gocode can hold open. Programs never see these descriptors: the sandbox launcher
renumbers the two it is handed and closes the rest before the program starts.
"""

from __future__ import annotations

import contextlib
import resource

DESCRIPTORS_PER_SERVER = 3  # measured: two pipes and the stderr spool of a stdio session
RESERVED_DESCRIPTORS = 128  # listeners, loopback connections, the event loop, logs, builds


def raise_open_files() -> None:
    """Raise the soft RLIMIT_NOFILE to the hard one (as Go's runtime does for its programs):
    the soft default (often 1024) would cap a controller at a few hundred servers."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = 1 << 20 if hard == resource.RLIM_INFINITY else hard
    if soft != resource.RLIM_INFINITY and soft < target:
        # A hard limit above fs.nr_open is refused: the soft one stays.
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


def server_capacity() -> dict[str, int]:
    """How many stdio servers this process can hold open at its current descriptor limit."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    limit = 1 << 20 if soft == resource.RLIM_INFINITY else soft
    return {
        "openFilesLimit": limit,
        "descriptorsPerServer": DESCRIPTORS_PER_SERVER,
        "maxStdioServers": max(0, (limit - RESERVED_DESCRIPTORS) // DESCRIPTORS_PER_SERVER),
    }


def describe_capacity() -> str:
    cap = server_capacity()
    return (
        f"up to {cap['maxStdioServers']} stdio servers (open-files limit {cap['openFilesLimit']}, "
        f"{cap['descriptorsPerServer']} descriptors each); the sandbox does not depend on the number"
    )
