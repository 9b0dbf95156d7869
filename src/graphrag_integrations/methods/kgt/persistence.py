"""Persisting a KG-Translator index: the hooks of the core persist / load template
(:class:`~graphrag_integrations.core.index.persistence.IndexPersistence`) as
:class:`KGTPersistence`, a base of
:class:`~graphrag_integrations.methods.kgt.index.ParseKGTranslatorRetriever`.

The directory holds the ParseKG store (``graph.json``, ``vectors/``) and, once the translator's
constraint indexes were built, their cache (``constraints/<tokenizer>/``), so a loaded index
does not build them again; the manifest records the build and query settings, the models and
the graph's counts, which :meth:`KGTPersistence._check_loaded` compares with what was read.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from graphrag_integrations.core.encoders.embeddings import Embedder
from graphrag_integrations.core.graph.backends import resolve_graph_backend
from graphrag_integrations.core.graph.protocol import GraphBackend
from graphrag_integrations.core.index.store_base import VectorIndexFactory
from graphrag_integrations.core.persistence import Manifest
from graphrag_integrations.core.text.nlp import SpacyNLP
from graphrag_integrations.errors import IndexMismatchError
from graphrag_integrations.methods.kgt.constraints import ConstraintIndexes, tokenizer_fingerprint
from graphrag_integrations.methods.kgt.params import KGTIndexParams, KGTQueryParams
from graphrag_integrations.methods.kgt.reads import ParseKGReads
from graphrag_integrations.methods.kgt.store import (
    CONSTRAINTS_DIR,
    ParseKGStore,
    save_constraint_cache,
)
from graphrag_integrations.methods.kgt.translator_model import translator_name

if TYPE_CHECKING:
    from graphrag_integrations.methods.kgt.parsekg import ParseKGStats
    from graphrag_integrations.methods.kgt.store import ParseKGView

IndexT = TypeVar("IndexT", bound="KGTPersistence")


class KGTPersistence:
    """``manifest``, ``_write_files``, ``_after_persist``, ``_from_manifest``, ``_read_files``
    and ``_check_loaded`` of a KG-Translator index (see the module docstring); the attributes
    below are the index's."""

    method: ClassVar[str]
    query_params: KGTQueryParams
    index_params: KGTIndexParams
    embedder: Embedder
    parser: SpacyNLP
    store: ParseKGStore
    vector_index: VectorIndexFactory | None
    graph_backend: type[GraphBackend] | None
    _translator_spec: Any
    _indexes: ConstraintIndexes | None
    _cache_dir: Path | None

    if TYPE_CHECKING:  # the index's, used by the hooks

        @property
        def view(self) -> ParseKGView: ...

        def stats(self) -> ParseKGStats: ...

        @property
        def translator_dtype(self) -> str | None: ...

        def _refresh(self, reuse: dict[str, tuple[int, ...]] | None = None) -> None: ...

    def manifest(self) -> Manifest:
        """The manifest :meth:`persist` writes; the directory holds ``graph.json``,
        ``vectors/`` and, when the constraint indexes were built, ``constraints/<tokenizer>/``."""
        stats = self.stats()
        return Manifest(
            method=self.method,
            parameters={
                "index": self.index_params.to_dict(),
                "query": self.query_params.to_dict(),
                "passages": stats.passages,
                "hyperrelations": stats.hyperrelations,
                "entities": stats.entities,
            },
            models={
                "embedding": self.embedder.model_name,
                "spacy": self.parser.model_name,
                "translator": translator_name(self._translator_spec),
                # resolved ("auto" -> this machine's precision); "checkpoint": the model's own
                "translator_dtype": self.translator_dtype or "checkpoint",
            },
            # lazy vectors: none may exist yet, the embedder still fixes the dimension
            embedding_dimension=self.store.dimension or int(self.embedder.dimension) or None,
        )

    def _write_files(self, directory: Path) -> None:
        self.store.persist(directory)
        old = self._cache_dir
        if self._indexes is not None:
            ix = self._indexes
            save_constraint_cache(
                directory / CONSTRAINTS_DIR / tokenizer_fingerprint(ix.tokenizer),
                fingerprint=self.view.fingerprint(),
                rel_tokens=None if ix.lazy else ix.rel_tokens,
                tries=ix.tries,
                entity_tokens=ix.entity_tokens,
            )
        elif old is not None and old.is_dir():
            import shutil

            shutil.copytree(old, directory / CONSTRAINTS_DIR)

    def _after_persist(self, path: Path) -> None:
        self._cache_dir = path / CONSTRAINTS_DIR

    @classmethod
    def _from_manifest(
        cls: type[IndexT], src: Path, manifest: Manifest, options: dict[str, Any]
    ) -> IndexT:
        """Build and query settings come from the manifest unless given; the recorded
        translator (a local path) too; ``graph_store`` says where the graph is now
        (``None``: where the index says)."""
        graph_store = options.pop("graph_store", None)
        params = manifest.parameters
        if options.get("preset") is None:
            options.pop("preset", None)
            options.setdefault("index_params", KGTIndexParams.from_dict(params["index"]))
            options.setdefault("query_params", KGTQueryParams.from_options(params["query"]))
        recorded = manifest.models.get("translator", "default")
        if "translator" not in options and recorded != "default" and Path(recorded).exists():
            options["translator"] = recorded
        index = cls(**options)
        # opened by _read_files: None = where the index says (IndexStore.load)
        index.graph_backend = None if graph_store is None else resolve_graph_backend(graph_store)
        return index

    def _read_files(self, src: Path, manifest: Manifest) -> None:
        self.store = ParseKGStore.load(
            src,
            model_name=self.embedder.model_name,
            dimension=int(manifest.embedding_dimension or 0),
            excluded_head_labels=self.index_params.excluded_head_labels,
            factory=self.vector_index,
            graph=self.graph_backend,
        )
        self.store.reads_class = ParseKGReads
        self._cache_dir = src / CONSTRAINTS_DIR

    def _check_loaded(self, src: Path, manifest: Manifest) -> None:
        self.view  # noqa: B018 - the read mode of the query params
        build = self.index_params.passage_vectors == "build"
        if self.store.reads_per_query:  # counts only: no scan of the graph
            missing = self.store.summary.head["passages"] - self.store.check_node_count(src)
        else:
            missing = len(self.store.passages_without_vector()) if build else 0
        if build and missing:
            raise IndexMismatchError(
                f"{src}: {missing} passages without a vector in a "
                "passage_vectors='build' index (corrupt index)"
            )
        self._refresh()
        stats = self.stats()
        params = manifest.parameters
        counts = (stats.passages, stats.hyperrelations, stats.entities)
        expected = (params["passages"], params["hyperrelations"], params["entities"])
        if counts != expected:
            raise IndexMismatchError(
                f"{src}: graph holds {counts} passages/hyperrelations/entities, the manifest "
                f"{expected} (corrupt index)"
            )
