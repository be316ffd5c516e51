"""Which runtime a program is linked with: the MCP Go SDK's, or the thin loopback one.

``gocodews/rt`` has one API and two transports, chosen by a build tag (go_templates/rt):

- ``sdk``: a session of the MCP Go SDK per server (stdio, streamable HTTP, SSE). A program that
  starts or dials its servers itself needs it: ``gocode exec --direct``, ``gocode build``.
- ``loopback``: every call is one HTTP/1.1 request to the controller's loopback endpoint, over
  package ``net`` alone. Importing the SDK pulls in ``net/http`` and ``crypto/tls``, which are
  most of what a link costs; without them a one-file program links in about a third of the
  time (0.2 s instead of 0.6 s on 2 cores, 3 MB instead of 8.6 MB). Pooled runs use it.

Both give the same output and errors for the same code (tests/test_runner_diff.py runs the
model-code corpus both ways); a program that can tell them apart is linked with the SDK's:
:func:`runner_for` routes it there. The runner is part of the binary cache's key and is
reported in a run's metadata (``RunResult.runner``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Literal

Runner = Literal["sdk", "loopback"]
SDK: Runner = "sdk"
LOOPBACK: Runner = "loopback"
RUNNERS: tuple[Runner, ...] = (SDK, LOOPBACK)

# The build tags that select a runner's transport (go_templates/rt/sdk.go, loopback.go).
TAGS: dict[Runner, tuple[str, ...]] = {SDK: (), LOOPBACK: ("gocode_loopback",)}

# Packages through which a program can see how it was linked: the module and package list
# (runtime/debug.ReadBuildInfo) or its own executable's symbols. Such a program runs with the
# SDK's runtime, whose answer is the reference.
EXACT_ONLY_IMPORTS = frozenset({"runtime/debug", "debug/buildinfo", "debug/elf", "plugin"})

# GOCODE_RUNNER=sdk links every program with the SDK's runtime (the loopback one is never
# needed; a program that needs the SDK's never gets the other).
SDK_ONLY = os.environ.get("GOCODE_RUNNER", "") == SDK


def runner_for(wanted: Runner, imports: Iterable[str]) -> Runner:
    """The runner a program with ``imports`` (import paths) gets when its run wants ``wanted``."""
    if wanted == LOOPBACK and SDK_ONLY:
        return SDK
    if wanted == LOOPBACK and any(path.strip('"') in EXACT_ONLY_IMPORTS for path in imports):
        return SDK
    return wanted


def tag_args(runner: Runner) -> list[str]:
    """The ``-tags`` argument of ``go list``/``go build`` for ``runner`` (none for the SDK's)."""
    tags = TAGS[runner]
    return ["-tags", ",".join(tags)] if tags else []
