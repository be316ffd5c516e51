"""JSON Schema → Go: the Go IR of a tool set (types, enums, unions, tool functions) and Go names."""
