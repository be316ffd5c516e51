"""gocode: Go code mode for LLM agents.

Every tool of the configured MCP servers becomes a typed Go function; an agent gets one tool,
``execute_go_code``, whose Go code gocode builds and runs against the servers.

    from gocode import CodeMode, load_config

    async with CodeMode(load_config("gocode.yaml"), model="sonnet") as cm:
        tool = cm.tool_definition()          # execute_go_code, with the Go declarations
        result = await cm.execute(code)      # RunResult: ok, phase, output, stderr, …
"""

from gocode.codemode import TOOL_NAME, CodeMode
from gocode.config import CodeModeConfig, Config, ServerConfig, load_config, parse_config
from gocode.errors import CodeError, ConfigError, DiscoveryError, GocodeError, SchemaError, ToolchainError
from gocode.runner import Diagnostic, RunResult

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
    "RunResult",
    "SchemaError",
    "ServerConfig",
    "ToolchainError",
    "load_config",
    "parse_config",
]
