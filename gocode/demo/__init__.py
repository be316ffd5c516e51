"""The bundled demo: a small weather MCP server and the example program run against it."""
