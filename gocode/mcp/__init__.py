"""The MCP side of gocode: serving (HTTP guards, health, metrics, logs) and, later, discovery and sessions."""
