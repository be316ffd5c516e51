"""The serving side: gocode as an MCP server (transport, host guards, health and metrics endpoints).

It sits above the facade (:class:`gocode.toolbox.Toolbox`), which it dispatches to; the metrics and
logs the facade itself records stay in :mod:`gocode.mcp`, below it.
"""
