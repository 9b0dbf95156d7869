"""The base of the baselines: an index over an in-memory list of passages.

:class:`CorpusIndex` holds what the dense, BM25 and hybrid baselines share: ``from_passages``
(the constructor over the passages), ``insert`` (cut, skip the documents already indexed,
``add_passages``), ``doc_ids`` and the ``load`` hook that takes the recorded ``k``. A
baseline implements ``add_passages``, ``delete``, the retrieval and the persistence hooks of
:class:`~graphrag_integrations.core.index.base.BaseIndex`.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from graphrag_integrations.core.index.base import BaseIndex
from graphrag_integrations.core.index.building import document_ids, drop_indexed
from graphrag_integrations.core.persistence import Manifest
from graphrag_integrations.core.types import Passage
from graphrag_integrations.errors import EmptyCorpusError

CorpusT = TypeVar("CorpusT", bound="CorpusIndex")


class CorpusIndex(BaseIndex):
    """A :class:`~graphrag_integrations.core.index.base.BaseIndex` whose documents are the
    ``doc_id`` of its :attr:`passages` (corpus order)."""

    #: The corpus, in index order.
    passages: list[Passage]

    if TYPE_CHECKING:  # the constructor of the baselines built from passages

        def __init__(self, passages: Sequence[Passage] = (), *args: Any, **kwargs: Any) -> None: ...

    @classmethod
    def from_passages(cls: type[CorpusT], passages: Sequence[Passage], **kwargs: Any) -> CorpusT:
        """Build from already chunked passages (what the evaluation harness uses):
        ``cls(passages, **kwargs)``, the constructor's arguments."""
        if not passages:
            raise EmptyCorpusError("no passages to index")
        return cls(passages, **kwargs)

    @abstractmethod
    def add_passages(self, passages: Sequence[Passage]) -> None:
        """Index ``passages`` (already cut, none of them indexed yet)."""

    def insert(self, documents: Iterable[Any], **options: Any) -> list[str]:
        """Cut documents and add their passages; returns the ids of the documents added.

        Documents already indexed (same id) are skipped with a warning; ``options`` (load
        and chunking options) go to :meth:`~BaseIndex.document_passages`.
        """
        indexed = {p.doc_id for p in self.passages}
        passages = drop_indexed(self.document_passages(documents, options), indexed)
        if passages:
            self.add_passages(passages)
        return document_ids(passages)

    def doc_ids(self) -> list[str]:
        """The ids of the documents indexed, sorted."""
        return sorted(document_ids(self.passages))

    @classmethod
    def _from_manifest(
        cls: type[CorpusT], src: Path, manifest: Manifest, options: dict[str, Any]
    ) -> CorpusT:
        """The index with the recorded ``k`` as its query params' default ``k``, unless
        ``options`` gives query params or a preset."""
        recorded_k = manifest.parameters.get("k")
        given = "query_params" in options or "preset" in options
        if isinstance(recorded_k, int) and not isinstance(recorded_k, bool) and not given:
            options["query_params"] = cls.query_params_class().from_options({"k": recorded_k})
        return cls(**options)
