"""The ``gocode`` command line: one module per command (or small group), each a thin click
wrapper over library functions. Heavy modules (the MCP SDK, the workspace, search) are imported
inside the commands that use them, so ``gocode --help`` stays fast."""

from gocode.cli import ask, cache, demo, execute, sandbox, saved, serve, smoke, tools  # noqa: F401  (registers the commands)
from gocode.cli.app import main

__all__ = ["main"]
