"""ReG (Refined Graph-based RAG): a triple retriever over a knowledge graph, trained on
LLM-refined supervision, with structure-aware evidence chains.

Stages, one module each: ``kg`` (KG sources), ``store`` (storage), ``candidates`` (candidate
pools and structural merging), ``refinement`` (LLM-guided refinement, appendix G prompt),
``subgraph`` (bounded question subgraphs and DDE), ``retriever`` (MLP scorer and its
training), ``reorganisation`` (BFS evidence chains and merging), ``index``
(``RefinedSubgraphRetriever``, alias ``RegIndex``), ``kgqa`` (the KGQA harness wrapper),
``registration`` (registry entries; the trainer is
``evaluation.metaqa.train_reg``), ``artefacts``
(committed scorers); ``params`` holds the parameters.
"""
