"""Finding tools: the searchable tools (``entries``), how text is read (``analysis``), BM25
(``bm25``) fused with ranking by meaning in one index (``index``; ``semantic`` the embeddings,
``learned`` the learned weighing, ``kept_index`` BM25's index kept on disk), and the ``search_go_tools`` tool with its answer format (``answer``). ``limits``
holds the bounds the CLI reads without importing the index. Fields, weights and figures:
docs/search.md.

Nothing is imported here, so that ``gocode.search.limits`` stays as cheap as it is.
"""
