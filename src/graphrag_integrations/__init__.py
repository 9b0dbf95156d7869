"""graphrag-integrations: graph-RAG research methods as LangChain / LlamaIndex retrievers.

Heavy modules (torch, spaCy, chromadb, the frameworks) are imported lazily: ``import
graphrag_integrations`` only loads this file and resolves public names on first access.

Examples
--------
>>> import graphrag_integrations as gi
>>> gi.__version__
'0.1.0'
"""

from __future__ import annotations

from typing import Any

from graphrag_integrations._lazy import resolve_lazy

__version__ = "0.1.0"

# public name -> module that defines it
_LAZY: dict[str, str] = {
    # core data and models
    "Passage": "graphrag_integrations.core.types",
    "RetrievedPassage": "graphrag_integrations.core.types",
    "SourceDocument": "graphrag_integrations.core.text.documents",
    "load_documents": "graphrag_integrations.core.text.documents",
    "TokenChunker": "graphrag_integrations.core.text.chunking",
    "SpacyNLP": "graphrag_integrations.core.text.nlp",
    "as_embedder": "graphrag_integrations.core.encoders.embeddings",
    "SentenceTransformerEmbedder": "graphrag_integrations.core.encoders.embeddings",
    "as_llm": "graphrag_integrations.core.llm",
    "LLMClient": "graphrag_integrations.core.llm",
    "TransformersLLM": "graphrag_integrations.core.llm",
    "as_reranker": "graphrag_integrations.core.encoders.rerank",
    "BiEncoderReranker": "graphrag_integrations.core.encoders.rerank",
    "CrossEncoderReranker": "graphrag_integrations.core.encoders.rerank",
    "GraphStore": "graphrag_integrations.core.graph.networkx_store",
    "FalkorDBGraph": "graphrag_integrations.core.graph.falkordb_graph",
    "IndexStore": "graphrag_integrations.core.index.store",
    "LocalExecutor": "graphrag_integrations.core.index.executors",
    "RayExecutor": "graphrag_integrations.core.index.executors",
    "ChromaVectors": "graphrag_integrations.core.vector_store.chroma_collections",
    "ChromaVectorIndex": "graphrag_integrations.core.vector_store",
    "InMemoryVectorIndex": "graphrag_integrations.core.vector_store",
    "FalkorDBVectorIndex": "graphrag_integrations.core.vector_store",
    "FalkorDBVectors": "graphrag_integrations.core.vector_store",
    "LangChainVectorIndex": "graphrag_integrations.core.vector_store",
    "LangChainVectors": "graphrag_integrations.core.vector_store",
    "LlamaIndexVectorIndex": "graphrag_integrations.core.vector_store",
    "LlamaIndexVectors": "graphrag_integrations.core.vector_store",
    # framework adapters
    "LangChainRetriever": "graphrag_integrations.adapters.langchain",
    "LlamaIndexRetriever": "graphrag_integrations.adapters.llama_index",
    # retrievers
    "DenseRetriever": "graphrag_integrations.baselines.dense",
    "BM25Retriever": "graphrag_integrations.baselines.bm25",
    "HybridRetriever": "graphrag_integrations.baselines.hybrid",
    "PPRRetriever": "graphrag_integrations.baselines.ppr",
    "ClueIndex": "graphrag_integrations.methods.clue.index",
    "ParseKGTranslatorRetriever": "graphrag_integrations.methods.kgt.index",
    "QIter": "graphrag_integrations.methods.clue.qiter",
    "QueryCentricGraphIndex": "graphrag_integrations.methods.qcg.index",
    "RefinedSubgraphRetriever": "graphrag_integrations.methods.reg.index",
    # parameter classes (one pair per method; presets "default" and, for the methods, "paper")
    "BM25QueryParams": "graphrag_integrations.baselines.params",
    "ClueIndexParams": "graphrag_integrations.methods.clue.params",
    "ClueQueryParams": "graphrag_integrations.methods.clue.params",
    "DenseQueryParams": "graphrag_integrations.baselines.params",
    "HybridQueryParams": "graphrag_integrations.baselines.params",
    "PPRIndexParams": "graphrag_integrations.baselines.ppr_params",
    "PPRQueryParams": "graphrag_integrations.baselines.ppr_params",
    "KGTIndexParams": "graphrag_integrations.methods.kgt.params",
    "KGTQueryParams": "graphrag_integrations.methods.kgt.params",
    "KGTTrainParams": "graphrag_integrations.methods.kgt.params",
    "NoParams": "graphrag_integrations.core.params",
    "QCGIndexParams": "graphrag_integrations.methods.qcg.params",
    "QCGQueryParams": "graphrag_integrations.methods.qcg.params",
    "QIterParams": "graphrag_integrations.methods.clue.params",
    "RegIndexParams": "graphrag_integrations.methods.reg.params",
    "RegQueryParams": "graphrag_integrations.methods.reg.params",
    "RegTrainParams": "graphrag_integrations.methods.reg.params",
    # the retriever as_retriever returns (Clue: QIter)
    "BoundRetriever": "graphrag_integrations.adapters.surface",
}

__all__ = ["__version__", *sorted(_LAZY)]


def __getattr__(name: str) -> Any:
    return resolve_lazy(globals(), _LAZY, name)


def __dir__() -> list[str]:
    return sorted(__all__)
