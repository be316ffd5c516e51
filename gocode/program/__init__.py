"""The model's program: its code parsed with Go's own grammar, imports fixed by symbol,
``main.go`` and the bindings rendered, type-checked before it is compiled, and errors turned
into messages at the model's lines."""
