"""The model view of a tool set: what the model reads, the disclosure budget and the search index."""
