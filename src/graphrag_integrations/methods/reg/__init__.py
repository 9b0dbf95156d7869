"""ReG (Refined Graph-based RAG): a triple retriever over a knowledge graph, trained on
LLM-refined supervision, with structure-aware evidence chains.

Stages, one module each: ``kg`` (KG sources and the index's KG constructors), ``store``
(storage), ``linking`` (query anchors), ``candidates`` (candidate pools and structural
merging), ``refinement`` (LLM-guided refinement, appendix G prompt), ``subgraph`` (bounded
question subgraphs and DDE), ``scorer`` (the DDE + MLP triple scorer), ``training``
(supervision labels, training examples, the training loop, the ``train --method reg`` core),
``reorganisation`` (BFS evidence chains and merging), ``retrieval`` (top-K triples, chain
passages, the bound retriever), ``index`` (``RefinedSubgraphRetriever``, alias ``RegIndex``),
``kgqa`` (the KGQA harness wrapper), ``registration`` (registry entries; the trainer entry is
``evaluation.metaqa.train_reg``, which loads MetaQA), ``assets`` (committed scorers);
``params`` holds ``RegIndexParams`` / ``RegQueryParams`` / ``RegTrainParams`` /
``RefinementParams``.
"""
