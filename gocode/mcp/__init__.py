"""The MCP side of gocode: discovery, upstream sessions and their transports, tool listings and
their caches, the loopback endpoint programs call, and ``serve`` (HTTP guards, health, metrics, logs)."""
