"""The model's code, as :mod:`gocode.program` takes it.

The code is parsed, hoisted and its imports fixed by Go's own grammar in the workspace's Go
helper (:mod:`gocode.program`); this module keeps the entry point older callers use.
"""

from __future__ import annotations

from gocode.program.code import ModelCode


def split_code(code: str) -> ModelCode:
    """The model's code, to be parsed by the workspace (see :meth:`gocode.compile.workspace.Workspace.build`)."""
    return ModelCode(code)
