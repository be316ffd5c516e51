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
(declarations, one-shot runs) that ``gocode exec`` uses.
"""

from gocode.codemode import TOOL_NAME, CodeMode
from gocode.config import CodeModeConfig, Config, ServerConfig, load_config, parse_config
from gocode.errors import CodeError, ConfigError, DiscoveryError, GocodeError, SchemaError, ToolchainError
from gocode.run.runner import Diagnostic, RunResult
from gocode.toolbox import SyncToolbox, Toolbox, ToolResult, UnknownToolError
from gocode.tools.python import PythonTool, python_tool

__all__ = [
    "TOOL_NAME",
    "CodeError",
    "CodeMode",
    "CodeModeConfig",
    "Config",
    "ConfigError",
    "Diagnostic",
    "DiscoveryError",
    "GocodeError",
    "PythonTool",
    "RunResult",
    "SchemaError",
    "ServerConfig",
    "SyncToolbox",
    "ToolResult",
    "Toolbox",
    "ToolchainError",
    "UnknownToolError",
    "load_config",
    "parse_config",
    "python_tool",
]
