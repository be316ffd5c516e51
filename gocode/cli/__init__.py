"""The ``gocode`` command line: one module per command (or small group), each a thin click
wrapper over library functions. Heavy modules (the MCP SDK, the module cache, search) are imported
inside the commands that use them, and a command's module is imported only when that command is
used (:class:`gocode.cli.app.LazyGroup`), so ``gocode --help`` and ``gocode exec --help`` stay fast."""

from gocode.cli.app import main

__all__ = ["main"]
