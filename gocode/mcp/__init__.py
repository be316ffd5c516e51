"""The MCP side of gocode: transports, tool listings and their caches, and serving (HTTP guards, health, metrics, logs)."""
