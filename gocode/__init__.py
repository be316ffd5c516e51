"""gocode: Go code mode for LLM agents.

Every tool of the configured MCP servers becomes a typed Go function; an agent gets one tool,
``execute_go_code``, whose Go code gocode builds and runs against the servers.

    from gocode import Toolbox

    async with Toolbox("gocode.yaml", model="sonnet") as tools:
        definitions = tools.definitions("openai")    # or "anthropic", "gemini", "mcp", …
        result = await tools.call(name, arguments)   # a tool call the model made
        message = result.openai(tool_call_id)        # the reply to send back

``Toolbox(..., tools=[fn])`` adds Python functions as typed Go functions (:func:`python_tool`).
:class:`SyncToolbox` is the same without an event loop; :class:`CodeMode` is the lower level
(declarations, one-shot runs); :func:`exec_code` runs code once as ``gocode exec`` does.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gocode.blocking import SyncToolbox
    from gocode.codemode import TOOL_NAME, CodeMode
    from gocode.config import CodeModeConfig, Config, ServerConfig, load_config, parse_config
    from gocode.errors import (
        ConfigError,
        DiscoveryError,
        ExecRequestError,
        GocodeError,
        ToolchainError,
        UnknownToolError,
    )
    from gocode.execution import ExecOutcome, ExecRequest, exec_code
    from gocode.program.diagnostics import Diagnostic
    from gocode.results import ToolResult
    from gocode.run.runner import RunResult
    from gocode.toolbox import Toolbox
    from gocode.tools.python import PythonTool, python_tool

# Public name -> the module defining it. Importing them lazily keeps ``import gocode`` (and so
# ``gocode --help``) from loading the MCP SDK and the rest before anything needs them.
_WHERE = {
    "TOOL_NAME": "gocode.codemode",
    "CodeMode": "gocode.codemode",
    "CodeModeConfig": "gocode.config",
    "Config": "gocode.config",
    "ServerConfig": "gocode.config",
    "load_config": "gocode.config",
    "parse_config": "gocode.config",
    "CodeError": "gocode.errors",  # deprecated: never raised (gocode.errors warns)
    "ConfigError": "gocode.errors",
    "DiscoveryError": "gocode.errors",
    "ExecRequestError": "gocode.errors",
    "GocodeError": "gocode.errors",
    "SchemaError": "gocode.errors",  # deprecated: never raised (gocode.errors warns)
    "ToolchainError": "gocode.errors",
    "Diagnostic": "gocode.program.diagnostics",
    "ExecOutcome": "gocode.execution",
    "ExecRequest": "gocode.execution",
    "exec_code": "gocode.execution",
    "RunResult": "gocode.run.runner",
    "SyncToolbox": "gocode.blocking",
    "Toolbox": "gocode.toolbox",
    "ToolResult": "gocode.results",
    "UnknownToolError": "gocode.errors",
    "PythonTool": "gocode.tools.python",
    "python_tool": "gocode.tools.python",
}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'gocode' has no attribute {name!r}")
    value = getattr(importlib.import_module(where), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])


__all__ = [
    "TOOL_NAME",
    "CodeMode",
    "CodeModeConfig",
    "Config",
    "ConfigError",
    "Diagnostic",
    "DiscoveryError",
    "ExecOutcome",
    "ExecRequest",
    "ExecRequestError",
    "GocodeError",
    "PythonTool",
    "RunResult",
    "ServerConfig",
    "SyncToolbox",
    "ToolResult",
    "Toolbox",
    "ToolchainError",
    "UnknownToolError",
    "exec_code",
    "load_config",
    "parse_config",
    "python_tool",
]
