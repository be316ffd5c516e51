"""Talking to MCP servers: transports, tool listings and the caches built from them."""
