"""QCG-RAG: query-centric graph retrieval (extended Doc2Query / Doc2Query--, query kNN graph).

Stages, one module each: ``generation`` (extended Doc2Query: query-answer pairs per chunk,
tolerant parsing, on-disk cache, reusable :class:`~.generation.QuerySet`), ``filtering``
(extended Doc2Query--: per-chunk top-alpha by cosine to the chunk), ``graph`` (the query-query
kNN layer, kept equal to a rebuild under insert / delete), ``retrieval`` (threshold, top-n,
h-hop expansion, mean-score chunk ranking), ``index`` (:class:`~.index.QueryCentricGraphIndex`, the
lifecycle); ``store`` is the schema on the core ``IndexStore``, ``params`` the parameters and
presets, ``registration`` the ``"qcg"`` method of the evaluation registry and CLI.
"""
