"""Whether a listed tool runs as an MCP task (``execution.taskSupport``), read without the SDK.

The model view and ``gocode list`` ask it of kept listings, which load no SDK
(tests/test_cli_imports.py); calling such a tool is :mod:`gocode.mcp.tasks`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def task_support(definition: Mapping[str, Any]) -> str:
    """A listed tool's ``execution.taskSupport``: ``"required"``, ``"optional"`` or (absent or
    anything else) ``"forbidden"``."""
    execution = definition.get("execution")
    support = execution.get("taskSupport") if isinstance(execution, Mapping) else None
    return support if support in ("required", "optional") else "forbidden"


def as_plain_tool(definition: Mapping[str, Any]) -> dict[str, Any]:
    """A tool's definition as gocode offers it on: gocode makes the task, so its client calls plainly."""
    return {k: v for k, v in definition.items() if k != "execution"}
