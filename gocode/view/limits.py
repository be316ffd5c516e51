"""How many tools a search answer shows: by default and at most (the CLI's options use these
without importing the search index)."""

DEFAULT_LIMIT = 5
MAX_LIMIT = 25
