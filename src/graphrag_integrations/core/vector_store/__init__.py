"""Vector indexes behind one protocol: exact in-memory numpy, Chroma, FalkorDB, or the user's
LangChain / LlamaIndex vector store.

Both backends store L2-normalised ``float32`` vectors and score by cosine similarity, accept
the same metadata (``str``/``int``/``float``/``bool`` values) and the same ``where`` filters:

the language of :mod:`graphrag_integrations.core.retrieval.filters` (``{"field": value}``,
``{"field": {"$gt": v}}``, ``$eq $ne $gt $gte $lt $lte $in $nin $contains``, ``$and``, ``$or``;
a record without the field never matches). The in-memory backend masks the rows; the Chroma
backend translates what Chroma can express with the same semantics into its ``where`` clause and
evaluates the rest on the records' metadata.

Modules: :mod:`.protocol` (:class:`VectorIndex`, :data:`MetadataValue`, :data:`Where`),
:mod:`.validation` (argument checks and :func:`parse_where`, shared by the backends),
:mod:`.memory` (:class:`InMemoryVectorIndex`: exact, persists to a directory) and
:mod:`.chroma` (:class:`ChromaVectorIndex`: a Chroma collection, embedded and persistent by
default or on a server over HTTP; ``chromadb`` is imported only when a client is created),
:mod:`.external` (:class:`~.external.StoreVectorIndex`, the base of the adapters below: checks,
whole-record replace, filters translated or evaluated on a growing budget, scores as cosine),
:mod:`.langchain_vectors` (:class:`LangChainVectorIndex`, factory :class:`LangChainVectors`),
:mod:`.llamaindex_vectors` (:class:`LlamaIndexVectorIndex`, factory :class:`LlamaIndexVectors`)
and :mod:`.falkordb` (:class:`FalkorDBVectorIndex`, factory :class:`FalkorDBVectors`: FalkorDB's
vector index, one server for graph and vectors).
Ranking helpers such as ``top_k`` live in :mod:`graphrag_integrations.core.retrieval.ranking`.

Examples
--------
>>> from graphrag_integrations.core.vector_store import InMemoryVectorIndex, VectorIndex
>>> index = InMemoryVectorIndex(dimension=2, model_name="toy")
>>> isinstance(index, VectorIndex)
True
"""

from __future__ import annotations

from graphrag_integrations.core.vector_store.chroma import ChromaVectorIndex
from graphrag_integrations.core.vector_store.falkordb import FalkorDBVectorIndex, FalkorDBVectors
from graphrag_integrations.core.vector_store.langchain_vectors import (
    LangChainVectorIndex,
    LangChainVectors,
    PrecomputedEmbeddings,
)
from graphrag_integrations.core.vector_store.llamaindex_vectors import (
    LlamaIndexVectorIndex,
    LlamaIndexVectors,
)
from graphrag_integrations.core.vector_store.memory import InMemoryVectorIndex
from graphrag_integrations.core.vector_store.protocol import MetadataValue, VectorIndex, Where
from graphrag_integrations.core.vector_store.validation import parse_where

__all__ = [
    "ChromaVectorIndex",
    "FalkorDBVectorIndex",
    "FalkorDBVectors",
    "InMemoryVectorIndex",
    "LangChainVectorIndex",
    "LangChainVectors",
    "LlamaIndexVectorIndex",
    "LlamaIndexVectors",
    "MetadataValue",
    "PrecomputedEmbeddings",
    "VectorIndex",
    "Where",
    "parse_where",
]
