"""The exceptions gocode raises, grouped by the phase in which they happen.

    GocodeError                 base; ``phase`` says where it failed, ``str()`` is the whole message
    ├── ConfigError             phase "config": missing/unparsable file, wrong key or type, unknown model
    ├── ToolchainError          phase "toolchain": no ``go`` on PATH, Go too old, module cache warm-up failed
    ├── DiscoveryError          phase "discovery": a server did not start, connect, or list its tools
    ├── SchemaError             phase "schema": a tool set cannot be turned into Go (never a single odd
    │                           schema: those fall back to a documented type and a warning)
    └── CodeError               phase "code": the model's code cannot be placed into ``Run`` (e.g. it
                                declares ``func main``) — a message for the model, like a compile error

Failures of the model's program itself (compile errors, runtime errors, timeouts) are not
exceptions: they are answers, returned as a :class:`gocode.run.runner.RunResult` with ``ok=False``.
"""

from __future__ import annotations


class GocodeError(Exception):
    """Base class: every error gocode raises on purpose. ``str()`` is a complete, user-facing message."""

    phase = "gocode"


class ConfigError(GocodeError):
    phase = "config"


class ToolchainError(GocodeError):
    phase = "toolchain"


class DiscoveryError(GocodeError):
    phase = "discovery"

    def __init__(
        self,
        message: str,
        *,
        server: str | None = None,
        summary: str = "",
        brief: str = "",
        stderr: str = "",
        exit_status: int | None = None,
    ) -> None:
        super().__init__(message)
        self.server = server
        self.exit_status = exit_status  # how a stdio server's process ended, when it did
        self.summary = summary or message  # the message without the server's stderr
        # What a model is told: the summary naming the server only, never its command line
        # (its ${VAR}s expanded, perhaps a secret) or URL, which stay with the operator.
        self.brief = brief or self.summary
        self.stderr = stderr  # the server's stderr tail (also at the end of the message)


class SchemaError(GocodeError):
    phase = "schema"


class CodeError(GocodeError):
    phase = "code"

    def __init__(self, message: str, *, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line
