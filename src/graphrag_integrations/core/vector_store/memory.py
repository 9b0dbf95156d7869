"""Exact in-memory vector index: an L2-normalised ``float32`` numpy matrix.

It persists to a directory (``vectors.npy`` + ``records.json`` + manifest).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from graphrag_integrations.core.encoders.embeddings import FloatMatrix
from graphrag_integrations.core.persistence import (
    Manifest,
    atomic_directory,
    atomic_write_json,
    check_manifest,
    read_manifest,
    read_vectors,
    reading_index,
    write_manifest,
)
from graphrag_integrations.core.retrieval.filters import MetadataFilter, masked_top_k
from graphrag_integrations.core.retrieval.ranking import top_k
from graphrag_integrations.core.vector_store.protocol import MetadataValue, Where
from graphrag_integrations.core.vector_store.validation import (
    CheckedVectorIndex,
    Records,
    check_dimension,
    check_ids,
)
from graphrag_integrations.errors import CorruptIndexError, IndexMismatchError


class InMemoryVectorIndex(CheckedVectorIndex):
    """Exact cosine search over an L2-normalised ``float32`` matrix held in memory.

    Parameters
    ----------
    dimension : int
        Length of every vector.
    model_name : str
        Embedding model that produced the vectors; recorded by :meth:`persist` and checked by
        :meth:`load`.

    Examples
    --------
    >>> index = InMemoryVectorIndex(dimension=3, model_name="toy")
    >>> index.add(["a", "b"], [[1, 0, 0], [0, 1, 0]], metadatas=[{"lang": "en"}, {"lang": "fr"}])
    >>> index.query([1, 0.1, 0], k=1)[0][0]
    'a'
    >>> index.query([1, 0.1, 0], k=2, where={"lang": "fr"})[0][0]
    'b'
    """

    #: Method name recorded in the manifest of a persisted index.
    method = "vector_index.in_memory"

    def __init__(self, dimension: int, model_name: str) -> None:
        self.dimension = check_dimension(dimension)
        self.model_name = model_name
        self._matrix: FloatMatrix = np.zeros((0, dimension), dtype=np.float32)
        self._size = 0
        self._ids: list[str] = []
        self._rows: dict[str, int] = {}
        self._metadatas: list[dict[str, MetadataValue]] = []
        self._documents: list[str | None] = []
        # True once matrix_view() handed out a view of the current matrix: the next in-place
        # overwrite of a row copies the matrix first (copy-on-write), so views never change
        self._shared = False

    def __len__(self) -> int:
        return self._size

    def __contains__(self, id_: object) -> bool:
        return id_ in self._rows

    @property
    def ids(self) -> list[str]:
        """Stored ids in row order."""
        return list(self._ids)

    def _reserve(self, extra: int) -> None:
        need = self._size + extra
        if need <= self._matrix.shape[0]:
            return
        capacity = max(need, 2 * self._matrix.shape[0], 16)
        grown = np.zeros((capacity, self.dimension), dtype=np.float32)
        grown[: self._size] = self._matrix[: self._size]
        self._matrix = grown
        self._shared = False

    def matrix_view(self) -> FloatMatrix:
        """The stored vectors in row order (:attr:`ids`) as a read-only view, without a copy.

        The view never changes afterwards: a later ``add`` that replaces a row writes into a
        copy of the matrix (copy-on-write), ``delete`` builds a new matrix and new rows are
        appended past the view's end, so a reader holding it sees the index as it was.

        Examples
        --------
        >>> index = InMemoryVectorIndex(dimension=2, model_name="toy")
        >>> index.add(["a", "b"], [[1, 0], [0, 1]])
        >>> view = index.matrix_view()
        >>> index.add(["a"], [[0, 1]])
        >>> index.delete(["b"])
        >>> view.tolist(), view.flags.writeable
        ([[1.0, 0.0], [0.0, 1.0]], False)
        >>> index.get_embeddings(["a"]).tolist()
        [[0.0, 1.0]]
        """
        view = self._matrix[: self._size].view()
        view.flags.writeable = False
        self._shared = True
        return view

    def _add(self, records: Records) -> None:
        id_list, vecs, metas, docs = records
        self._reserve(sum(1 for i in id_list if i not in self._rows))
        if self._shared and any(i in self._rows for i in id_list):
            self._matrix = self._matrix.copy()  # a view handed out keeps the old rows
            self._shared = False
        for id_, vec, meta, doc in zip(id_list, vecs, metas, docs, strict=True):
            row = self._rows.get(id_)
            if row is None:
                row = self._size
                self._size += 1
                self._rows[id_] = row
                self._ids.append(id_)
                self._metadatas.append(meta)
                self._documents.append(doc)
            else:
                self._metadatas[row] = meta
                self._documents[row] = doc
            self._matrix[row] = vec

    def delete(self, ids: Sequence[str]) -> None:
        """Remove the records with these ids; ids not present are ignored."""
        drop = {self._rows[i] for i in check_ids(ids) if i in self._rows}
        if not drop:
            return
        keep = [r for r in range(self._size) if r not in drop]
        self._matrix = np.ascontiguousarray(self._matrix[keep])  # a new array: views keep theirs
        self._shared = False
        self._ids = [self._ids[r] for r in keep]
        self._metadatas = [self._metadatas[r] for r in keep]
        self._documents = [self._documents[r] for r in keep]
        self._size = len(keep)
        self._rows = {id_: row for row, id_ in enumerate(self._ids)}

    def _query(
        self, q: FloatMatrix, k: int, flt: MetadataFilter | None, where: Where | None
    ) -> list[tuple[str, float]]:
        """The exact top-``k`` (ties: older first)."""
        if self._size == 0:
            return []
        scores = self._matrix[: self._size] @ q
        if flt is not None:
            # mask the rows that do not match: the exact top-k among the matching ones
            mask = np.fromiter(
                (flt.matches(meta) for meta in self._metadatas), dtype=np.bool_, count=self._size
            )
            return [(self._ids[r], float(scores[r])) for r in masked_top_k(scores, mask, k)]
        return [(self._ids[r], float(scores[r])) for r in top_k(scores, k)]

    def get_embeddings(self, ids: Sequence[str]) -> FloatMatrix:
        """Stored vectors of ``ids`` in the order given; raises ``KeyError`` for unknown ids."""
        id_list = list(ids)
        missing = [i for i in id_list if i not in self._rows]
        if missing:
            raise KeyError(f"unknown ids: {missing[:5]}")
        return self._matrix[[self._rows[i] for i in id_list]].reshape(len(id_list), self.dimension)

    def get_metadata(self, id_: str) -> dict[str, MetadataValue]:
        """Metadata of one record (a copy); raises ``KeyError`` for an unknown id."""
        return dict(self._metadatas[self._rows[id_]])

    def get_document(self, id_: str) -> str | None:
        """Document text of one record; raises ``KeyError`` for an unknown id."""
        return self._documents[self._rows[id_]]

    # -- persistence -----------------------------------------------------------------------
    def persist(self, path: str | Path, *, overwrite: bool = False) -> None:
        """Write the index to directory ``path`` atomically (manifest, vectors, records).

        ``overwrite`` is passed to :func:`~graphrag_integrations.core.persistence.atomic_directory`
        (a non-empty folder that is not such an index is refused without it).
        """
        with atomic_directory(path, overwrite=overwrite, method=self.method) as tmp:
            np.save(tmp / "vectors.npy", self._matrix[: self._size], allow_pickle=False)
            atomic_write_json(
                tmp / "records.json",
                {"ids": self._ids, "metadatas": self._metadatas, "documents": self._documents},
                indent=None,
            )
            write_manifest(
                tmp,
                Manifest(
                    method=self.method,
                    models={"embedding": self.model_name},
                    embedding_dimension=self.dimension,
                    parameters={"count": self._size},
                ),
            )

    @classmethod
    def load(
        cls, path: str | Path, *, model_name: str | None = None, dimension: int | None = None
    ) -> InMemoryVectorIndex:
        """Load an index written by :meth:`persist`.

        Parameters
        ----------
        path : str or Path
            The directory.
        model_name, dimension : optional
            When given, must match the manifest (else :class:`IndexMismatchError`).

        Raises
        ------
        IndexNotFoundError
            If ``path`` holds no index.
        IndexMismatchError
            On a manifest that does not match.
        CorruptIndexError
            Naming the file, on a checksum mismatch, an unreadable or NaN/infinite
            ``vectors.npy``, or files that disagree with each other.
        """
        with reading_index(path) as src:
            return cls._load(src, model_name=model_name, dimension=dimension)

    @classmethod
    def _load(
        cls, src: Path, *, model_name: str | None, dimension: int | None
    ) -> InMemoryVectorIndex:
        manifest = check_manifest(
            read_manifest(src), method=cls.method, embedding_model=model_name, dimension=dimension
        )
        if manifest.embedding_dimension is None or manifest.embedding_model is None:
            raise IndexMismatchError(f"{src}: manifest lacks the embedding model or dimension")
        matrix = read_vectors(src / "vectors.npy")
        try:
            records = json.loads((src / "records.json").read_text(encoding="utf-8"))
            ids, metas, docs = records["ids"], records["metadatas"], records["documents"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise CorruptIndexError(f"{src / 'records.json'}: unreadable: {exc}") from exc
        n = len(ids)
        if matrix.shape != (n, manifest.embedding_dimension) or len(metas) != n or len(docs) != n:
            raise CorruptIndexError(
                f"{src}: files disagree: vectors {matrix.shape}, {n} ids, {len(metas)} "
                f"metadatas, {len(docs)} documents, dimension {manifest.embedding_dimension}"
            )
        index = cls(manifest.embedding_dimension, manifest.embedding_model)
        if n:
            index._matrix = np.ascontiguousarray(matrix, dtype=np.float32)
            index._size = n
            index._ids = list(ids)
            index._rows = {id_: row for row, id_ in enumerate(index._ids)}
            shared: dict[str, str] = {}  # one object per repeated value (doc ids)
            index._metadatas = [
                {
                    name: shared.setdefault(v, v) if isinstance(v, str) else v
                    for name, v in m.items()
                }
                for m in metas
            ]
            index._documents = list(docs)
        return index
