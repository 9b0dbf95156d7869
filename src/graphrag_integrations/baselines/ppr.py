"""Personalized-PageRank retrieval over a passage-entity graph: HippoRAG 2's mechanism
(arXiv 2502.14802) without an LLM, on Clue-RAG's spaCy extraction and the dense baseline's
embedder.

The graph (:mod:`~graphrag_integrations.core.retrieval.ppr_graph`) has a node per passage and per
entity, a passage - entity edge for every entity a passage mentions and a synonym edge between
entities whose name vectors reach a cosine threshold. A query seeds the walk
(:mod:`~graphrag_integrations.core.retrieval.ppr_seeds`) with the entities of its most similar
sentences ("facts") and of its own entity mentions, and every passage with its dense score
times the passage node weight; passages are ranked by their personalized PageRank mass
(:func:`~graphrag_integrations.core.retrieval.pagerank.personalized_pagerank`). A query that
links to no entity is ranked by the dense score, as HippoRAG 2 does.

A metadata filter is an access boundary: the walk runs on the subgraph of the matching
passages and the entities they mention (the graph a fresh index of those passages would
have), so no other passage's text or entity reaches the ranking or the explanation.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from typing_extensions import Unpack

from graphrag_integrations.adapters.surface import FrameworkSurface
from graphrag_integrations.baselines.corpus import CorpusIndex
from graphrag_integrations.baselines.dense import DenseRetriever, EmbeddedPassages
from graphrag_integrations.baselines.ppr_params import PPRIndexParams, PPRQueryParams
from graphrag_integrations.baselines.ppr_preparation import PPRPreparer, PreparedPassages
from graphrag_integrations.core.encoders.embeddings import FloatMatrix
from graphrag_integrations.core.index.base import build_from_documents
from graphrag_integrations.core.index.build_options import EmbeddingIndexOptions
from graphrag_integrations.core.index.query_binding import QueryParamsField
from graphrag_integrations.core.params import resolve_params
from graphrag_integrations.core.persistence import Manifest, read_vectors
from graphrag_integrations.core.retrieval.filters import MetadataFilter, filter_mask
from graphrag_integrations.core.retrieval.pagerank import personalized_pagerank
from graphrag_integrations.core.retrieval.ppr_graph import (
    PassageEntities,
    PPRGraph,
    SynonymPairs,
    synonym_pairs,
)
from graphrag_integrations.core.retrieval.ppr_seeds import query_seeds
from graphrag_integrations.core.retrieval.ranking import top_k
from graphrag_integrations.core.text.nlp import SpacyNLP
from graphrag_integrations.core.types import Passage, RetrievedPassage
from graphrag_integrations.core.validation import check_query
from graphrag_integrations.errors import IndexMismatchError

__all__ = ["PPRRetriever", "QuerySignals"]

logger = logging.getLogger(__name__)

#: The entity lists, facts and synonym edges of an index directory.
GRAPH_FILE = "graph.json"
#: The fact (sentence) vectors, passage order.
FACTS_FILE = "facts.npy"
#: The entity name vectors, in the order of ``graph.json``'s ``entities``.
ENTITIES_FILE = "entities.npy"
#: Entities named in an explanation.
EXPLAINED = 3

BoolVector = npt.NDArray[np.bool_]
FloatVector = npt.NDArray[np.float64]


@dataclass(frozen=True)
class QuerySignals:
    """A query's inputs to the ranking: the dense score of every passage, the cosine of
    every fact, its normalised entity mentions and their vectors (rows)."""

    dense: FloatVector
    facts: FloatVector
    names: list[str]
    mentions: FloatMatrix


class PPRRetriever(FrameworkSurface, CorpusIndex):
    """HippoRAG 2's personalized PageRank over passages and spaCy entities (no LLM).

    Parameters
    ----------
    passages : sequence of Passage
        The corpus.
    embedding : Embedder, str, LangChain Embeddings, LlamaIndex BaseEmbedding, optional
        As for :class:`~graphrag_integrations.baselines.dense.DenseRetriever` (``None``: the
        offline all-MiniLM-L6-v2); it embeds passages, facts, entity names and queries.
    index_params : PPRIndexParams, optional
        Extraction and graph options (spaCy model, excluded labels, title entity, synonym
        threshold); see :mod:`~graphrag_integrations.baselines.ppr_params`.
    query_params : PPRQueryParams, optional
        Seeds and walk (damping, passage node weight, facts, linking, activation) and ``k``.
    preset : str, optional
        ``"default"`` (tuned on the development sets), ``"paper"`` (HippoRAG 2's constants)
        or, for the query, ``"linearrag"`` (LinearRAG's entity activation).
    show_progress : bool or None
        Progress bars (``None``: by batch size).

    Examples
    --------
    With a model-free embedder (``embedding=None`` would load the offline MiniLM):

    >>> from graphrag_integrations.testing.fake_embedder import FakeEmbedder
    >>> docs = ["Paris is the capital of France.", "Rome is the capital of Italy.",
    ...         "Italy borders France."]
    >>> r = PPRRetriever.from_documents(docs, embedding=FakeEmbedder())
    >>> top = r.retrieve("What is the capital of Italy?", k=1)[0]
    >>> top.text, top.explanation["query_entities"], sorted(top.explanation["entities"])
    ('Rome is the capital of Italy.', ['italy'], ['italy', 'rome'])
    """

    method = "ppr"
    # the walk, its normalisations and counts run on the matching passages only (PPRGraph.view)
    corpus_wide_scores = False
    index_params_class = PPRIndexParams
    query_params = QueryParamsField(PPRQueryParams)
    k_param = "k"

    def __init__(
        self,
        passages: Sequence[Passage] = (),
        embedding: Any = None,
        *,
        index_params: PPRIndexParams | None = None,
        query_params: PPRQueryParams | None = None,
        preset: str | None = None,
        show_progress: bool | None = None,
    ) -> None:
        self.index_params, self.query_params = resolve_params(
            PPRIndexParams,
            PPRQueryParams,
            index_params=index_params,
            query_params=query_params,
            preset=preset,
        )
        self.show_progress = show_progress
        self.dense = DenseRetriever((), embedding, show_progress=show_progress)
        self.parser = SpacyNLP(self.index_params.spacy_model)
        self.entities: list[PassageEntities] = []
        self._facts: FloatMatrix = np.zeros((0, 0), dtype=np.float32)
        self._entity_vectors: dict[str, FloatMatrix] = {}
        self._synonyms: SynonymPairs = {}
        self._graph: PPRGraph | None = None
        if passages:
            self.add_passages(passages)

    @property
    def passages(self) -> list[Passage]:  # type: ignore[override]  # read-only: the dense side's
        """The corpus (the dense side's list)."""
        return self.dense.passages

    @property
    def embedder(self) -> Any:
        """The embedder (the dense side's)."""
        return self.dense.embedder

    @property
    def synonyms(self) -> SynonymPairs:
        """The synonym edges: ``(name, name) -> cosine`` (a copy)."""
        return dict(self._synonyms)

    # -- building -------------------------------------------------------------------------
    @classmethod
    def from_documents(  # type: ignore[override]  # typed: the base takes **kwargs
        cls,
        documents: Iterable[Any],
        **options: Unpack[EmbeddingIndexOptions[PPRIndexParams, PPRQueryParams]],
    ) -> PPRRetriever:
        """Index documents (strings, files, LangChain / LlamaIndex documents) cut into chunks.

        ``options``: the constructor's arguments and the chunking, load, checkpoint and
        executor options every index takes
        (:class:`~graphrag_integrations.core.index.build_options.EmbeddingIndexOptions`).
        """
        return build_from_documents(cls, documents, options)

    def preparer(self) -> PPRPreparer:
        """The per-passage half of the build (picklable: what an executor runs)."""
        return PPRPreparer(self.parser, self.embedder, self.index_params)

    def add_passages(self, passages: Sequence[Passage]) -> None:
        """Parse, embed and link ``passages``: the :meth:`merge` of their preparation."""
        prep = PPRPreparer(self.parser, self.embedder, self.index_params, bool(self.show_progress))
        self.merge([prep(passages)])

    def merge(self, prepared: Sequence[PreparedPassages]) -> None:
        """Append prepared batches (input order): passages, entities, facts, and the synonym
        edges of the entities that are new to the index."""
        parts = [p for p in prepared if p.passages]
        if not parts:
            return
        self.dense.merge([EmbeddedPassages(p.passages, p.vectors) for p in parts])
        facts = [self._facts] if self._facts.size else []
        self._facts = np.vstack(facts + [p.fact_vectors for p in parts])
        new: list[str] = []
        for part in parts:
            self.entities.extend(part.entities)
            for name, vector in part.entity_vectors.items():
                if name not in self._entity_vectors:
                    self._entity_vectors[name] = np.asarray(vector, dtype=np.float32)
                    new.append(name)
        params = self.index_params
        self._synonyms.update(
            synonym_pairs(
                new,
                list(self._entity_vectors),
                self._entity_vectors,
                params.synonym_threshold,
                params.synonym_min_chars,
            )
        )
        self._graph = None

    def relink_synonyms(self, threshold: float) -> int:
        """Recompute every synonym edge at another cosine ``threshold`` (no parsing, no
        embedding); returns the number of edges. The index params record the new value."""
        self.index_params = self.index_params.with_overrides({"synonym_threshold": threshold})
        names = list(self._entity_vectors)
        self._synonyms = synonym_pairs(
            names, names, self._entity_vectors, threshold, self.index_params.synonym_min_chars
        )
        self._graph = None
        return len(self._synonyms)

    def delete(self, doc_id: str) -> bool:
        """Remove every passage of ``doc_id`` and the entities no other passage mentions;
        ``False`` (and a warning) if it is unknown."""
        return bool(self.delete_many([doc_id]))

    def delete_many(self, doc_ids: Iterable[str]) -> list[str]:
        """Remove the passages of ``doc_ids`` in one pass; returns the ids that were indexed
        (each unknown one logs a warning)."""
        wanted = list(dict.fromkeys(doc_ids))
        held = {p.doc_id for p in self.passages}
        for doc_id in wanted:
            if doc_id not in held:
                self._unknown_document(doc_id)
        found = [d for d in wanted if d in held]
        if not found:
            return []
        gone = set(found)
        keep = [i for i, p in enumerate(self.passages) if p.doc_id not in gone]
        fact_rows = np.repeat(np.arange(len(self.entities)), [len(e.facts) for e in self.entities])
        self._facts = self._facts[np.isin(fact_rows, keep)]
        self.entities = [self.entities[i] for i in keep]
        for doc_id in found:
            self.dense.delete(doc_id)
        mentioned = {n for e in self.entities for n in e.names}
        self._entity_vectors = {n: v for n, v in self._entity_vectors.items() if n in mentioned}
        self._synonyms = {
            pair: w
            for pair, w in self._synonyms.items()
            if pair[0] in mentioned and pair[1] in mentioned
        }
        self._graph = None
        return found

    # -- retrieval ------------------------------------------------------------------------
    @property
    def graph(self) -> PPRGraph:
        """The sparse graph of the current corpus (built on first use after a change)."""
        graph = self._graph
        if graph is None:
            dim = self.dense.embedder.dimension if not self._facts.size else self._facts.shape[1]
            facts = self._facts if self._facts.size else np.zeros((0, dim), dtype=np.float32)
            graph = self._graph = PPRGraph.build(
                self.entities, self._entity_vectors, facts, self._synonyms
            )
        return graph

    def query_entities(self, query: str) -> list[str]:
        """The normalised spaCy entities of ``query`` (excluded labels left out)."""
        excluded = self.index_params.excluded_labels
        ents = self.parser.entities(query)
        return list(dict.fromkeys(e.norm for e in ents if e.label not in excluded))

    def signals(self, query: str, *, entities: bool | None = None) -> QuerySignals:
        """What :meth:`rank` needs of ``query``: its vector, dense and fact scores, and its
        entity mentions with their vectors (parsed when ``entities``, default: when the
        query params link or activate entities)."""
        query = check_query(query)
        params = self.query_params
        if entities is None:
            entities = bool(params.link_weight or params.activation_steps)
        vector = self.embedder.embed_query(query)
        graph = self.graph
        names = self.query_entities(query) if entities else []
        return QuerySignals(
            np.asarray(self.dense.vector_scores(vector), dtype=np.float64),
            np.asarray(graph.fact_vectors @ vector, dtype=np.float64),
            names,
            self._name_vectors(names, graph.entity_vectors.shape[1]),
        )

    def _name_vectors(self, names: list[str], dim: int) -> FloatMatrix:
        """Vectors of entity names: an indexed entity's stored vector, the others embedded
        (one call for all of them)."""
        known = self._entity_vectors
        unknown = [n for n in names if n not in known]
        embedded = (
            dict(zip(unknown, np.asarray(self.embedder.embed(unknown)), strict=True))
            if unknown
            else {}
        )
        rows = [known[n] if n in known else embedded[n] for n in names]
        return np.asarray(rows, dtype=np.float32).reshape(len(names), dim)

    def rank(
        self, signals: QuerySignals, k: int, keep: BoolVector | None = None
    ) -> list[RetrievedPassage]:
        """The top ``k`` passages (of those ``keep`` marks) for a query's ``signals``, with
        their explanations, under the current query params."""
        if not self.passages or (keep is not None and not keep.any()):
            return []
        params = self.query_params
        graph = self.graph
        view = graph.view(keep)
        dense = signals.dense
        seeds = query_seeds(graph, view, params, dense, signals.facts, signals.mentions)
        rows = np.flatnonzero(view.passages)
        names = signals.names
        if not seeds.entities.any():
            best = rows[top_k(dense[rows], k)]
            base = {"method": self.method, "fallback": "dense", "query_entities": names}
            return [RetrievedPassage(self.passages[i], float(dense[i]), dict(base)) for i in best]
        restart = np.concatenate([seeds.passages, seeds.entities])
        mass = personalized_pagerank(view.transition, restart, damping=params.damping)
        n = graph.n_passages
        best = rows[top_k(mass[rows], k)]
        seeded = top_k(seeds.entities, EXPLAINED + 2)
        base = {
            "method": self.method,
            "query_entities": names,
            "seed_entities": [graph.entity_names[e] for e in seeded if seeds.entities[e] > 0],
        }
        hits = []
        links = graph.incidence
        for i in best:
            ents = links.indices[links.indptr[i] : links.indptr[i + 1]]
            carried = ents[top_k(mass[n + ents], EXPLAINED)] if ents.size else ents
            explanation = {**base, "entities": [graph.entity_names[e] for e in carried]}
            hits.append(RetrievedPassage(self.passages[i], float(mass[i]), explanation))
        return hits

    def ranked(
        self, query: str, k: int, where: MetadataFilter | None = None
    ) -> list[RetrievedPassage]:
        """The top ``k`` passages (of those matching ``where``) with their explanations."""
        query = check_query(query)
        if not self.passages:
            return []
        keep = None if where is None else filter_mask(where, self.passages)
        if keep is not None and not keep.any():
            return []
        return self.rank(self.signals(query), k, keep)

    def _retrieve(self, query: str, k: int) -> list[RetrievedPassage]:
        return self.ranked(query, k)

    def _retrieve_filtered(
        self, query: str, k: int, where: MetadataFilter
    ) -> list[RetrievedPassage]:
        """Exact and closed: the walk runs on the matching passages' subgraph."""
        return self.ranked(query, k, where)

    # -- persistence (hooks of BaseIndex.persist / load) ----------------------------------
    def manifest(self) -> Manifest:
        """Build and query options, counts and models; the directory holds ``dense/`` (the
        passages and their vectors, a dense index), ``graph.json``, ``facts.npy`` and
        ``entities.npy``."""
        index = self.index_params
        return Manifest(
            method=self.method,
            parameters={
                "index": {
                    **index.values(),
                    "excluded_labels": sorted(index.excluded_labels),
                },
                "query": self.query_params.values(),
                "k": self.default_k,
                "passages": len(self.passages),
                "entities": len(self._entity_vectors),
                "facts": int(self._facts.shape[0]),
            },
            models={"embedding": self.embedder.model_name, "spacy": self.parser.model_name},
            embedding_dimension=self.dense.manifest().embedding_dimension,
        )

    def _write_files(self, directory: Path) -> None:
        self.dense.persist(directory / "dense")
        names = list(self._entity_vectors)
        rows = {name: i for i, name in enumerate(names)}
        graph = {
            "entities": names,
            "passages": [
                {
                    "names": [rows[n] for n in e.names],
                    "facts": [[rows[n] for n in f] for f in e.facts],
                }
                for e in self.entities
            ],
            "synonyms": [[rows[a], rows[b], w] for (a, b), w in sorted(self._synonyms.items())],
        }
        (directory / GRAPH_FILE).write_text(json.dumps(graph), encoding="utf-8")
        dim = int(self._facts.shape[1]) if self._facts.ndim == 2 else 0
        vectors = np.stack(list(self._entity_vectors.values())) if names else np.zeros((0, dim))
        np.save(
            directory / ENTITIES_FILE, np.asarray(vectors, dtype=np.float32), allow_pickle=False
        )
        np.save(directory / FACTS_FILE, self._facts, allow_pickle=False)

    @classmethod
    def _from_manifest(cls, src: Path, manifest: Manifest, options: dict[str, Any]) -> PPRRetriever:
        """The dense side loaded (``embedding=`` as for the dense baseline: default the
        recorded model), the recorded options unless ``options`` gives them."""
        dense = DenseRetriever.load(src / "dense", embedding=options.pop("embedding", None))
        recorded = manifest.parameters
        if "preset" not in options:
            if "index_params" not in options:
                index = {**recorded["index"], "spacy_model": recorded["index"].get("spacy_model")}
                options["index_params"] = PPRIndexParams.from_options(index)
            if "query_params" not in options:
                options["query_params"] = PPRQueryParams.from_options(recorded["query"])
        loaded = cls(embedding=dense.embedder, **options)
        loaded.dense = dense
        return loaded

    def _check_embedder(self, src: Path, manifest: Manifest) -> None:
        return None  # the dense side checked its embedder when it was loaded

    def _read_files(self, src: Path, manifest: Manifest) -> None:
        graph = json.loads((src / GRAPH_FILE).read_text(encoding="utf-8"))
        names: list[str] = graph["entities"]
        vectors = read_vectors(src / ENTITIES_FILE)
        facts = read_vectors(src / FACTS_FILE)
        self.entities = [
            PassageEntities(
                tuple(names[i] for i in p["names"]),
                tuple(tuple(names[i] for i in f) for f in p["facts"]),
            )
            for p in graph["passages"]
        ]
        n_facts = sum(len(e.facts) for e in self.entities)
        if (
            len(self.entities) != len(self.passages)
            or vectors.shape[0] != len(names)
            or facts.shape[0] != n_facts
        ):
            raise IndexMismatchError(
                f"{src}: {GRAPH_FILE}, {ENTITIES_FILE} and {FACTS_FILE} disagree with the "
                f"{len(self.passages)} passages of dense/ ({len(self.entities)} entity lists, "
                f"{vectors.shape[0]} vectors for {len(names)} entities, {facts.shape[0]} fact "
                f"vectors for {n_facts} facts)"
            )
        self._entity_vectors = {
            n: np.asarray(vectors[i], dtype=np.float32) for i, n in enumerate(names)
        }
        self._facts = np.asarray(facts, dtype=np.float32)
        self._synonyms = {(names[a], names[b]): float(w) for a, b, w in graph["synonyms"]}
        self._graph = None

    def _check_loaded(self, src: Path, manifest: Manifest) -> None:
        recorded = manifest.parameters
        counts = (len(self.passages), len(self._entity_vectors), int(self._facts.shape[0]))
        expected = (recorded["passages"], recorded["entities"], recorded["facts"])
        if counts != expected:
            raise IndexMismatchError(
                f"{src}: holds {counts} passages, entities and facts; the manifest records "
                f"{expected}"
            )
