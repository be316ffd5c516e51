"""Tools that are not MCP servers: Python callables (:mod:`gocode.tools.python`), tools the
caller declares (:mod:`gocode.tools.declared`) and saved programs (:mod:`gocode.tools.saved`).

Each kind answers calls for a server name through :class:`gocode.mcp.provider.ToolProvider`
and lists its tools as a :class:`gocode.toolset.ServerTools`, so a program calls them as typed
Go functions, through the controller's loopback endpoint, like any MCP tool.
"""
