"""ReG (Refined Graph-based RAG): a triple retriever over a knowledge graph, trained on
LLM-refined supervision, with structure-aware evidence chains.

Stages, one module each: ``kg`` (KG sources), ``store`` (storage), ``candidates`` (candidate
pools and structural merging), ``refinement`` (LLM-guided refinement, appendix G prompt),
``subgraph`` (bounded question subgraphs and DDE), ``retriever`` (MLP scorer and its
training), ``reorganisation`` (BFS evidence chains and merging), ``index`` (``RegIndex``),
``evaluation`` (registry builder and KGQA answer metrics); ``params`` holds the parameters.
"""
