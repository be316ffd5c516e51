"""The client side of MCP: discovery, upstream sessions and their transports, tool listings and
their caches, the loopback endpoint programs call, and the metrics and logs of those calls (the
facade records them, so they live below it; serving them is :mod:`gocode.serve`)."""
