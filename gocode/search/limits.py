"""How many tools a search answer shows (by default and at most), and how much of a query it
reads: the CLI uses these without importing the search index."""

DEFAULT_LIMIT = 5
MAX_LIMIT = 25
MAX_QUERY_CHARS = 1000  # a request is untrusted input: what is past this is ignored
