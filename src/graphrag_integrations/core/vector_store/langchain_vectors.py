"""Any LangChain ``VectorStore`` as a core vector index, and the layer factory of graph indexes.

:class:`LangChainVectorIndex` keeps one vector layer in a store you made (Chroma, the
in-memory store of ``langchain_core``, FAISS, PGVector...). Nothing of ``langchain`` is
imported here: the store is used through its methods (duck typing).

* **vectors unchanged** - our vectors are precomputed. A store with ``add_embeddings`` gets
  them directly; any other store must be built with the :class:`PrecomputedEmbeddings` the
  factory hands you (``Chroma(embedding_function=embeddings)``,
  ``InMemoryVectorStore(embeddings)``): its ``embed_documents`` returns the vectors of the
  ``add_texts`` call in progress, so nothing is embedded again and no model is loaded;
* **one store per layer** - :class:`LangChainVectors` calls ``make_store(layer, embeddings)``
  once per layer (chunks, units, entities...). Separate stores rather than one store with a
  layer field: the layers are separate id spaces, a query needs no filter to stay in its
  layer (stores that cannot filter still give exact results) and counting or clearing a layer
  never touches another;
* **scores as cosine** - ``score=`` names how the store's raw score relates to the cosine
  (:data:`~graphrag_integrations.core.vector_store.external.SCORE_CONVERSIONS`) or is a
  callable; recognised without it: ``langchain_chroma.Chroma`` (from the collection's space)
  and ``langchain_core``'s ``InMemoryVectorStore`` (cosine);
* **filters** - a Chroma store gets the Chroma ``where`` clause of what Chroma expresses with
  the same semantics, the in-memory store a predicate; other stores are filtered here on the
  returned metadata (over-fetch), unless ``native_filter=`` translates for them;
* **reading vectors** (``get_embeddings``, what persisting and Clue's query views need) works
  where the store returns them: ``get(ids=..., include=["embeddings"])`` (Chroma) or the
  ``store`` dict of the in-memory store; any other store gives a one-line ``TypeError``
  (pass ``read_vectors=`` to teach it);
* **what the index owns** - the adapter tracks the ids it added: ``len``, queries and deletes
  see only them, so records already in your store are never returned, counted or removed.
  The data stays in your store; a persisted index holds a copy of its vectors on disk and a
  load adds them to the store ``make_store`` gives again.

Examples
--------
>>> from langchain_core.vectorstores import InMemoryVectorStore
>>> factory = LangChainVectors(lambda layer, embeddings: InMemoryVectorStore(embeddings))
>>> index = factory("units", 2, "toy")
>>> index.add(["a", "b"], [[1, 0], [0, 1]], metadatas=[{"lang": "en"}, {"lang": "fr"}])
>>> [(i, round(s, 3)) for i, s in index.query([1, 0.2], k=2)]
[('a', 0.981), ('b', 0.196)]
>>> index.query([1, 0.2], k=2, where={"lang": "fr"})[0][0]
'b'
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from graphrag_integrations.core.encoders.embeddings import FloatMatrix
from graphrag_integrations.core.retrieval.filters import MetadataFilter
from graphrag_integrations.core.vector_store.chroma import _to_chroma_where
from graphrag_integrations.core.vector_store.external import (
    Candidate,
    ScoreConversion,
    StoreVectorIndex,
    chroma_score,
    chroma_space,
    to_cosine,
)
from graphrag_integrations.core.vector_store.validation import Records

logger = logging.getLogger(__name__)

if TYPE_CHECKING:  # type checkers see an Embeddings; at run time a registered virtual subclass
    from langchain_core.embeddings import Embeddings as _EmbeddingsBase
else:
    _EmbeddingsBase = object

#: ``native_filter(where) -> the store's filter= argument or None`` (None: filter here).
NativeFilter = Callable[[MetadataFilter], Any]
#: ``read_vectors(store, ids) -> {id: vector}`` of the ids found.
VectorReader = Callable[[Any, list[str]], Mapping[str, Any]]


class PrecomputedEmbeddings(_EmbeddingsBase):
    """A LangChain ``Embeddings`` that hands back vectors computed elsewhere.

    Build your store with it; :class:`LangChainVectorIndex` sets the vectors of each
    ``add_texts`` call (and of each query) just before calling the store, which asks for them
    through :meth:`embed_documents` / :meth:`embed_query`. Asked for anything else, it raises:
    it holds no model. It registers itself as a virtual subclass of
    ``langchain_core.embeddings.Embeddings`` when that is installed, so stores checking the
    type accept it.

    Examples
    --------
    >>> emb = PrecomputedEmbeddings(2)
    >>> with emb.providing([[1.0, 0.0]]):
    ...     emb.embed_documents(["any text"])
    [[1.0, 0.0]]
    """

    _registered = False

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension
        self._pending: list[list[float]] | None = None
        if not PrecomputedEmbeddings._registered:
            try:
                from langchain_core.embeddings import Embeddings

                Embeddings.register(PrecomputedEmbeddings)
            except ImportError:  # pragma: no cover - only without langchain-core
                pass
            PrecomputedEmbeddings._registered = True

    def providing(self, vectors: Any) -> _Providing:
        """A ``with`` block during which the store is handed ``vectors``."""
        return _Providing(self, [list(map(float, v)) for v in vectors])

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """The vectors of the add in progress (one per text)."""
        pending = self._pending
        if pending is None or len(pending) != len(texts):
            raise RuntimeError(
                "PrecomputedEmbeddings holds no model: the store asked for "
                f"{len(texts)} vectors outside an add of LangChainVectorIndex"
            )
        return pending

    def embed_query(self, text: str) -> list[float]:
        """The query vector of the search in progress."""
        pending = self._pending
        if pending is None or len(pending) != 1:
            raise RuntimeError(
                "PrecomputedEmbeddings holds no model: query the store by vector "
                "(LangChainVectorIndex.query), not by text"
            )
        return pending[0]

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        """Async :meth:`embed_documents`."""
        return self.embed_documents(texts)

    async def aembed_query(self, text: str) -> list[float]:
        """Async :meth:`embed_query`."""
        return self.embed_query(text)


class _Providing:
    def __init__(self, owner: PrecomputedEmbeddings, vectors: list[list[float]]) -> None:
        self.owner, self.vectors = owner, vectors

    def __enter__(self) -> None:
        self.owner._pending = self.vectors

    def __exit__(self, *exc: object) -> None:
        self.owner._pending = None


def _is_chroma(store: Any) -> bool:
    return type(store).__module__.startswith("langchain_chroma") and hasattr(store, "_collection")


def _is_in_memory(store: Any) -> bool:
    return type(store).__name__ == "InMemoryVectorStore" and isinstance(
        getattr(store, "store", None), dict
    )


def chroma_filter(where: MetadataFilter) -> dict[str, Any] | None:
    """The Chroma-style ``filter=`` dict of ``where`` when it keeps our semantics, else ``None``.

    >>> from graphrag_integrations.core.retrieval.filters import parse_filter
    >>> chroma_filter(parse_filter({"lang": "en"}))
    {'lang': {'$eq': 'en'}}
    """
    return _to_chroma_where(where)


class LangChainVectorIndex(StoreVectorIndex):
    """One vector layer in a LangChain ``VectorStore`` (see the module docstring).

    Parameters
    ----------
    store : langchain_core.vectorstores.VectorStore
        Your store, empty or shared with other records (never returned or removed).
    dimension : int
        Length of every vector.
    model_name : str
        Embedding model that produced the vectors.
    embeddings : PrecomputedEmbeddings, optional
        The embeddings the store was built with; required for a store without
        ``add_embeddings``.
    score : str or callable, optional
        How the store's raw score becomes the cosine: a name of
        :data:`~graphrag_integrations.core.vector_store.external.SCORE_CONVERSIONS` or a
        callable. ``None``: recognised for Chroma and the in-memory store, else an error.
    native_filter : callable, optional
        ``native_filter(where)`` -> the store's ``filter=`` value, or ``None`` to filter here.
        ``None``: :func:`chroma_filter` for Chroma, a predicate for the in-memory store, none
        for other stores (exact filtering on the returned metadata). Pass
        ``native_filter=chroma_filter`` for another store taking Chroma-style dicts.
    read_vectors : callable, optional
        ``read_vectors(store, ids) -> {id: vector}`` for a store the adapter cannot read.

    Raises
    ------
    ValueError
        If the score conversion is unknown and not given, or ``embeddings`` is missing for a
        store without ``add_embeddings`` or is not the store's.
    """

    def __init__(
        self,
        store: Any,
        *,
        dimension: int,
        model_name: str,
        embeddings: PrecomputedEmbeddings | None = None,
        score: str | ScoreConversion | None = None,
        native_filter: NativeFilter | None = None,
        read_vectors: VectorReader | None = None,
    ) -> None:
        super().__init__(dimension, model_name, track_ids=True)
        self.store = store
        self.embeddings = embeddings
        kind = type(store).__name__
        if not hasattr(store, "add_embeddings"):
            if embeddings is None:
                raise ValueError(
                    f"{kind} has no add_embeddings: build it with the PrecomputedEmbeddings "
                    "LangChainVectors gives make_store, and pass it as embeddings="
                )
            if getattr(store, "embeddings", embeddings) is not embeddings:
                raise ValueError(
                    f"{kind} does not use the PrecomputedEmbeddings given: build it with them "
                    "(e.g. Chroma(embedding_function=embeddings))"
                )
        if score is None:
            if _is_chroma(store):
                score = chroma_score(chroma_space(store._collection))
            elif _is_in_memory(store):
                score = "cosine"
            else:
                raise ValueError(
                    f"cannot tell how {kind} scores: pass score= (one of 'cosine', "
                    "'cosine_distance', 'squared_l2', 'l2'... or a callable raw score -> cosine)"
                )
        self._to_cosine = to_cosine(score)
        self._native_filter = native_filter
        self._read_vectors = read_vectors

    def __repr__(self) -> str:
        return f"LangChainVectorIndex({type(self.store).__name__}, {len(self)} records)"

    def _write(self, records: Records) -> None:
        ids, vectors, metadatas, documents = records
        texts = [d if d is not None else "" for d in documents]  # stores drop records without
        metas: list[dict[str, Any]] = [dict(m) for m in metadatas]
        if hasattr(self.store, "add_embeddings"):
            pairs = list(zip(texts, vectors.tolist(), strict=True))
            self.store.add_embeddings(pairs, metadatas=metas, ids=ids)
            return
        assert self.embeddings is not None
        with self.embeddings.providing(vectors):
            self.store.add_texts(texts, metadatas=metas, ids=ids)

    def _remove(self, ids: list[str]) -> None:
        try:
            self.store.delete(ids=ids)
        except ValueError:  # stores such as FAISS refuse ids they do not hold
            present = [str(d.id) for d in self.store.get_by_ids(ids) if d.id is not None]
            if present:
                self.store.delete(ids=present)

    def _native(self, where: MetadataFilter) -> Any:
        if self._native_filter is not None:
            return self._native_filter(where)
        if _is_chroma(self.store):
            return chroma_filter(where)
        if _is_in_memory(self.store):
            return lambda doc: where.matches(doc.metadata or {})
        return None

    def _search(self, query: FloatMatrix, n: int, native: Any) -> list[Candidate]:
        vector = query.tolist()
        options = {} if native is None else {"filter": native}
        if hasattr(self.store, "similarity_search_with_score_by_vector"):
            pairs = self.store.similarity_search_with_score_by_vector(vector, k=n, **options)
        elif hasattr(self.store, "similarity_search_by_vector_with_relevance_scores"):
            # langchain_chroma: the raw distance despite the name
            pairs = self.store.similarity_search_by_vector_with_relevance_scores(
                vector, k=n, **options
            )
        else:
            raise TypeError(
                f"{type(self.store).__name__} has no scored search by vector "
                "(similarity_search_with_score_by_vector)"
            )
        out: list[Candidate] = []
        for doc, raw in pairs:
            if doc.id is None:
                raise TypeError(
                    f"{type(self.store).__name__} returns documents without their id "
                    "(Document.id): it cannot hold a layer"
                )
            out.append((str(doc.id), self._to_cosine(float(raw)), doc.metadata or {}))
        return out

    def _vectors(self, ids: list[str]) -> dict[str, Any]:
        if self._read_vectors is not None:
            return dict(self._read_vectors(self.store, ids))
        if _is_in_memory(self.store):
            return {i: self.store.store[i]["vector"] for i in ids if i in self.store.store}
        if _is_chroma(self.store):
            got = self.store.get(ids=ids, include=["embeddings"])
            return dict(zip(got["ids"], got["embeddings"], strict=True))
        raise TypeError(
            f"{type(self.store).__name__} cannot return stored vectors (get_embeddings, needed "
            "to persist the index and by Clue's query views): pass read_vectors="
        )

    def _records(self, ids: list[str]) -> dict[str, tuple[Mapping[str, Any], str | None]]:
        if _is_chroma(self.store):  # its get_by_ids fails on a record without metadata
            got = self.store.get(ids=ids, include=["metadatas", "documents"])
            return {
                i: (m or {}, d or None)
                for i, m, d in zip(got["ids"], got["metadatas"], got["documents"], strict=True)
            }
        docs = self.store.get_by_ids(ids)
        return {
            str(d.id): (d.metadata or {}, d.page_content or None) for d in docs if d.id is not None
        }


class LangChainVectors:
    """Factory putting each vector layer of an index in a LangChain store you make.

    Parameters
    ----------
    make_store : callable
        ``make_store(layer, embeddings) -> VectorStore``: the store of one layer (e.g. a Chroma
        collection named after ``layer``), built with ``embeddings`` (a
        :class:`PrecomputedEmbeddings`) unless it has ``add_embeddings``.
    **options
        Passed to :class:`LangChainVectorIndex` (``score``, ``native_filter``,
        ``read_vectors``).

    Examples
    --------
    ``ClueIndex.from_documents(docs, embedding=..., vector_index=LangChainVectors(
    lambda layer, emb: Chroma(collection_name=f"my-{layer}", embedding_function=emb,
    client=client, collection_metadata={"hnsw:space": "cosine"})))``
    """

    def __init__(self, make_store: Callable[[str, PrecomputedEmbeddings], Any], **options: Any):
        if not callable(make_store):
            raise TypeError(f"make_store must be callable, got {type(make_store).__name__}")
        self.make_store = make_store
        self.options = options

    def __call__(self, layer: str, dimension: int, model_name: str) -> LangChainVectorIndex:
        """The index of one layer, in a new store from ``make_store``."""
        embeddings = PrecomputedEmbeddings(dimension)
        store = self.make_store(layer, embeddings)
        return LangChainVectorIndex(
            store,
            dimension=dimension,
            model_name=model_name,
            embeddings=embeddings,
            **self.options,
        )

    def __repr__(self) -> str:
        return f"LangChainVectors({getattr(self.make_store, '__name__', self.make_store)!r})"
