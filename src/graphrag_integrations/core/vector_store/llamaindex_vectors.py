"""Any LlamaIndex vector store as a core vector index, and the layer factory of graph indexes.

:class:`LlamaIndexVectorIndex` keeps one vector layer in a LlamaIndex vector store you made
(``ChromaVectorStore``, ``SimpleVectorStore``, Qdrant, PGVector...). Only
``llama_index.core``'s node and query types are imported, when the first record is written
or the first query made; the store itself is used through its methods.

* **vectors unchanged** - each record is a ``TextNode`` carrying our ``embedding``, so the
  store keeps the vector we computed (no embedding model involved);
* **one store per layer** - :class:`LlamaIndexVectors` calls ``make_store(layer)`` once per
  layer, for the reasons given in :mod:`.langchain_vectors`;
* **scores as cosine** - ``score=`` says how the store's similarity relates to the cosine
  (:data:`~graphrag_integrations.core.vector_store.external.SCORE_CONVERSIONS` or a
  callable); recognised without it: ``ChromaVectorStore`` (``exp(-distance)`` in the
  collection's space) and ``SimpleVectorStore`` (cosine);
* **filters** - translated into LlamaIndex ``MetadataFilters`` where they keep our
  semantics (``==``, numeric ``> >= < <=``, ``in`` of one type, ``and`` / ``or`` of those);
  the rest is evaluated on the returned nodes' metadata (over-fetch);
* **reading vectors** - ``get_nodes`` when the nodes come back with their embedding, the
  Chroma collection underneath a ``ChromaVectorStore``; else a one-line ``TypeError``;
* **what the index owns** - the adapter tracks its ids (see :mod:`.langchain_vectors`).

Examples
--------
>>> from llama_index.core.vector_stores import SimpleVectorStore
>>> index = LlamaIndexVectors(lambda layer: SimpleVectorStore())("units", 2, "toy")
>>> index.add(["a", "b"], [[1, 0], [0, 1]])
>>> [(i, round(s, 3)) for i, s in index.query([1, 0.2], k=2)]
[('a', 0.981), ('b', 0.196)]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, cast

from graphrag_integrations.core.encoders.embeddings import FloatMatrix
from graphrag_integrations.core.retrieval.filters import AllOf, AnyOf, Comparison, MetadataFilter
from graphrag_integrations.core.vector_store.external import (
    Candidate,
    ScoreConversion,
    StoreVectorIndex,
    chroma_score,
    chroma_space,
    to_cosine,
)
from graphrag_integrations.core.vector_store.validation import Records

_ORDER = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}
#: Keys LlamaIndex writes into a store's flat metadata (``doc_id`` overwritten with the node's
#: ``ref_doc_id``). Ours are stored as ``gi_<key>`` (and ``gi_...`` as ``gi_gi_...``).
RESERVED_KEYS = frozenset({"doc_id", "document_id", "ref_doc_id", "_node_content", "_node_type"})
_ESCAPE = "gi_"


def stored_key(key: str) -> str:
    """The metadata key under which ``key`` is stored (see :data:`RESERVED_KEYS`).

    >>> stored_key("doc_id"), stored_key("lang"), stored_key("gi_x")
    ('gi_doc_id', 'lang', 'gi_gi_x')
    """
    return _ESCAPE + key if key in RESERVED_KEYS or key.startswith(_ESCAPE) else key


def _our_metadata(stored: Mapping[str, Any]) -> dict[str, Any]:
    """Our metadata back from what a node or a store's flat metadata holds."""
    return {
        (k[len(_ESCAPE) :] if k.startswith(_ESCAPE) else k): v
        for k, v in stored.items()
        if k not in RESERVED_KEYS
    }


def _is_chroma(store: Any) -> bool:
    return type(store).__name__ == "ChromaVectorStore" and hasattr(store, "_collection")


def _is_simple(store: Any) -> bool:
    return type(store).__name__ == "SimpleVectorStore"


def to_metadata_filters(where: MetadataFilter, *, nested: bool = True) -> Any:
    """LlamaIndex ``MetadataFilters`` of ``where`` when they keep its semantics, else ``None``.

    Stores differ on ``!=`` / ``nin`` for records without the key and on comparing strings,
    so only ``==``, numeric order, ``in`` of one value type, ``and`` and ``or`` are translated
    (and no ``bool`` value: LlamaIndex's filters refuse them). Keys are those of
    :func:`stored_key`.
    ``nested=False``: ``None`` for a filter that needs nested groups (stores such as
    ``SimpleVectorStore`` refuse them).

    Examples
    --------
    >>> from graphrag_integrations.core.retrieval.filters import parse_filter
    >>> f = to_metadata_filters(parse_filter({"lang": "en", "year": {"$gt": 2000}}))
    >>> [(x.key, x.operator.value, x.value) for x in f.filters], f.condition.value
    ([('lang', '==', 'en'), ('year', '>', 2000)], 'and')
    >>> to_metadata_filters(parse_filter({"lang": {"$ne": "en"}})) is None
    True
    """
    from llama_index.core.vector_stores.types import (
        FilterCondition,
        FilterOperator,
        MetadataFilters,
    )
    from llama_index.core.vector_stores.types import MetadataFilter as LlamaFilter

    def convert(node: MetadataFilter) -> Any:
        if isinstance(node, (AllOf, AnyOf)):
            parts = [convert(f) for f in node.filters]
            if any(p is None for p in parts):
                return None
            if not nested and any(isinstance(p, MetadataFilters) for p in parts):
                return None
            condition = FilterCondition.AND if isinstance(node, AllOf) else FilterCondition.OR
            return MetadataFilters(filters=parts, condition=condition)
        if not isinstance(node, Comparison):
            return None
        op, value, key = node.operator, node.value, stored_key(node.key)
        if isinstance(value, bool) or (isinstance(value, tuple) and bool in map(type, value)):
            return None  # LlamaIndex's filter values take no bool
        if op == "eq":
            return LlamaFilter(key=key, value=cast(Any, value), operator=FilterOperator.EQ)
        if op in _ORDER and isinstance(value, (int, float)) and not isinstance(value, bool):
            return LlamaFilter(key=key, value=value, operator=FilterOperator(_ORDER[op]))
        if op == "in" and isinstance(value, tuple) and len({type(v) for v in value}) == 1:
            return LlamaFilter(key=key, value=cast(Any, list(value)), operator=FilterOperator.IN)
        return None

    out = convert(where)
    if out is None or isinstance(out, MetadataFilters):
        return out
    return MetadataFilters(filters=[out])


class LlamaIndexVectorIndex(StoreVectorIndex):
    """One vector layer in a LlamaIndex vector store (see the module docstring).

    Parameters
    ----------
    store : llama_index.core.vector_stores.types.BasePydanticVectorStore
        Your store, empty or shared with other records (never returned or removed).
    dimension : int
        Length of every vector.
    model_name : str
        Embedding model that produced the vectors.
    score : str or callable, optional
        How the store's similarity becomes the cosine (``None``: recognised for Chroma and
        the simple store, else an error).
    native_filter : callable, optional
        ``native_filter(where)`` -> ``MetadataFilters`` or ``None`` (filter here); ``None``:
        :func:`to_metadata_filters` (without nested groups for ``SimpleVectorStore``).

    Raises
    ------
    ValueError
        If the score conversion is unknown and not given.
    """

    def __init__(
        self,
        store: Any,
        *,
        dimension: int,
        model_name: str,
        score: str | ScoreConversion | None = None,
        native_filter: Callable[[MetadataFilter], Any] | None = None,
    ) -> None:
        super().__init__(dimension, model_name, track_ids=True)
        self.store = store
        if score is None:
            if _is_chroma(store):
                score = chroma_score(chroma_space(store._collection), exp_neg=True)
            elif _is_simple(store):
                score = "cosine"
            else:
                raise ValueError(
                    f"cannot tell how {type(store).__name__} scores: pass score= (one of "
                    "'cosine', 'cosine_distance', 'exp_neg_cosine_distance'... or a callable)"
                )
        self._to_cosine = to_cosine(score)
        if native_filter is None and _is_simple(store):
            native_filter = partial(to_metadata_filters, nested=False)
        self._native_filter = native_filter or to_metadata_filters

    def __repr__(self) -> str:
        return f"LlamaIndexVectorIndex({type(self.store).__name__}, {len(self)} records)"

    def _write(self, records: Records) -> None:
        from llama_index.core.schema import TextNode

        nodes = [
            TextNode(
                id_=i, text=d or "", metadata={stored_key(k): x for k, x in m.items()}, embedding=v
            )
            for i, v, m, d in records.rows()
        ]
        self.store.add(nodes)

    def _remove(self, ids: list[str]) -> None:
        self.store.delete_nodes(node_ids=ids)

    def _native(self, where: MetadataFilter) -> Any:
        return self._native_filter(where)

    def _search(self, query: FloatMatrix, n: int, native: Any) -> list[Candidate]:
        from llama_index.core.vector_stores.types import VectorStoreQuery

        result = self.store.query(
            VectorStoreQuery(query_embedding=query.tolist(), similarity_top_k=n, filters=native)
        )
        ids = list(result.ids or [])
        sims = list(result.similarities or [])
        nodes = list(result.nodes or [])
        if len(sims) != len(ids):
            raise TypeError(f"{type(self.store).__name__} returned no similarities")
        metas: list[Mapping[str, Any]] = (
            [_our_metadata(node.metadata or {}) for node in nodes] if len(nodes) == len(ids) else []
        )
        if not metas:
            metas = self._metadata_of(ids)
        return [
            (str(i), self._to_cosine(float(s)), m) for i, s, m in zip(ids, sims, metas, strict=True)
        ]

    def _metadata_of(self, ids: list[str]) -> list[Mapping[str, Any]]:
        data = getattr(getattr(self.store, "data", None), "metadata_dict", None)
        if isinstance(data, dict):  # SimpleVectorStore keeps metadata there, not in nodes
            return [_our_metadata(data.get(i) or {}) for i in ids]
        records = self._records(ids)
        return [records.get(i, ({}, None))[0] for i in ids]

    def _vectors(self, ids: list[str]) -> dict[str, Any]:
        if _is_chroma(self.store):
            got = self.store._collection.get(ids=ids, include=["embeddings"])
            return dict(zip(got["ids"], got["embeddings"], strict=True))
        embedding_dict = getattr(getattr(self.store, "data", None), "embedding_dict", None)
        if isinstance(embedding_dict, dict):  # SimpleVectorStore
            return {i: embedding_dict[i] for i in ids if i in embedding_dict}
        try:
            nodes = self.store.get_nodes(node_ids=ids)
        except NotImplementedError:
            nodes = []
        found = {n.node_id: n.embedding for n in nodes if n.embedding is not None}
        if len(found) < len(ids) and len(nodes) > len(found):
            raise TypeError(
                f"{type(self.store).__name__} returns nodes without their embedding: it cannot "
                "give back stored vectors (needed to persist the index and by Clue's views)"
            )
        return found

    def _records(self, ids: list[str]) -> dict[str, tuple[Mapping[str, Any], str | None]]:
        try:
            nodes = self.store.get_nodes(node_ids=ids)
        except NotImplementedError:
            data = getattr(getattr(self.store, "data", None), "metadata_dict", None)
            if isinstance(data, dict):  # SimpleVectorStore: metadata only, no text
                return {i: (_our_metadata(data[i]), None) for i in ids if i in data}
            raise TypeError(
                f"{type(self.store).__name__} cannot return stored records (get_nodes)"
            ) from None
        return {
            n.node_id: (_our_metadata(n.metadata or {}), n.get_content() or None) for n in nodes
        }


class LlamaIndexVectors:
    """Factory putting each vector layer of an index in a LlamaIndex store you make.

    Parameters
    ----------
    make_store : callable
        ``make_store(layer) -> vector store``: the store of one layer (e.g. a
        ``ChromaVectorStore`` on a collection named after ``layer``).
    **options
        Passed to :class:`LlamaIndexVectorIndex` (``score``, ``native_filter``).

    Examples
    --------
    ``ClueIndex.from_documents(docs, embedding=..., vector_index=LlamaIndexVectors(
    lambda layer: ChromaVectorStore(chroma_collection=client.get_or_create_collection(
    f"my-{layer}", metadata={"hnsw:space": "cosine"}))))``
    """

    def __init__(self, make_store: Callable[[str], Any], **options: Any) -> None:
        if not callable(make_store):
            raise TypeError(f"make_store must be callable, got {type(make_store).__name__}")
        self.make_store = make_store
        self.options = options

    def __call__(self, layer: str, dimension: int, model_name: str) -> LlamaIndexVectorIndex:
        """The index of one layer, in a new store from ``make_store``."""
        return LlamaIndexVectorIndex(
            self.make_store(layer), dimension=dimension, model_name=model_name, **self.options
        )

    def __repr__(self) -> str:
        return f"LlamaIndexVectors({getattr(self.make_store, '__name__', self.make_store)!r})"
