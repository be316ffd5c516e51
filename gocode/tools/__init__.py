"""Tools gocode offers beside the servers' own (saved programs)."""
