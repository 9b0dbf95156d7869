"""The persist / load template of every index: :class:`IndexPersistence`, a base of
:class:`~graphrag_integrations.core.index.base.BaseIndex`.

An index implements small hooks (:meth:`IndexPersistence.manifest`,
:meth:`IndexPersistence._write_files`, :meth:`IndexPersistence._read_files` and where needed
:meth:`IndexPersistence._from_manifest`, :meth:`IndexPersistence._check_loaded`...) and never
repeats the skeleton; the rules are in the :mod:`~graphrag_integrations.core.index.base`
module notes (``persist(path, *, overwrite=False)`` / ``load(path)``).
"""

from __future__ import annotations

import logging
import math
import uuid
from collections.abc import Mapping
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from graphrag_integrations.core.index import snapshot
from graphrag_integrations.core.index.graph_changes import GraphMoved, check_moved
from graphrag_integrations.core.index.rollback import active_rollback, roll_back, rolling_back
from graphrag_integrations.core.index.store import index_stores_of
from graphrag_integrations.core.persistence import (
    Manifest,
    atomic_directory,
    check_embedder,
    check_manifest,
    read_manifest,
    reading_index,
    write_manifest,
)
from graphrag_integrations.errors import IndexMismatchError

IndexT = TypeVar("IndexT", bound="IndexPersistence")

logger = logging.getLogger(__name__)

#: Loads of a folder whose database graph another process wrote meanwhile, at most.
LOAD_ATTEMPTS = 3


class IndexPersistence:
    """The persist / load template methods and their hooks (module notes), inherited by
    :class:`~graphrag_integrations.core.index.base.BaseIndex`, which sets the class
    attributes below."""

    #: The method name recorded in the manifest (set by ``BaseIndex`` and each index).
    method: ClassVar[str]
    #: Layout version of the index directory :meth:`persist` writes (in the manifest).
    format_version: ClassVar[int]
    #: Oldest layout :meth:`load` reads (an older index must be rebuilt).
    oldest_format_version: ClassVar[int]

    @property
    def index_id(self) -> str:
        """This index's identity (32 hex digits), recorded in its manifest (module notes).

        New for a new index, kept by :meth:`load`, unchanged by ``insert`` / ``delete``: it is
        what lets ``persist`` replace a folder holding *this* index but not another one. A
        graph index's id is its :class:`~graphrag_integrations.core.index.store.IndexStore`'s
        (which names its Chroma collections).
        """
        stores = index_stores_of(self)
        if len(stores) == 1:
            return stores[0].index_id
        own = self.__dict__.get("_index_id")
        if own is None:
            own = self.__dict__["_index_id"] = uuid.uuid4().hex
        return str(own)

    def persist(self, path: str | Path, *, overwrite: bool = False) -> None:
        """Write the index to directory ``path`` atomically, with a manifest.

        The template (module notes): :meth:`manifest` completed with :attr:`index_id`,
        :attr:`format_version` and the build ``timings``, the index's files written by
        :meth:`_write_files` into the temporary directory of ``atomic_directory(path,
        overwrite=overwrite, method=self.method, index_id=self.index_id)``
        (:mod:`~graphrag_integrations.core.persistence`), then :meth:`_after_persist`.

        Parameters
        ----------
        path : str or Path
            The index directory (created if missing).
        overwrite : bool
            Allow writing into a non-empty folder that holds no index, over an index of
            another method, or over another index of this method (another ``index_id``).
            Files the index did not write are kept either way.

        Raises
        ------
        IndexExistsError
            If ``path`` is not ours to replace and ``overwrite`` is false (nothing written).
        IndexMismatchError
            If another process wrote the index's database graph since this index was loaded
            (:mod:`~graphrag_integrations.core.index.snapshot`; nothing written).
        """
        snapshot.check_persist(self)
        timings = getattr(self, "timings", None)
        manifest = replace(
            self.manifest(),
            index_id=self.index_id,
            format_version=self.format_version,
            timings=dict(timings) if isinstance(timings, Mapping) else {},
        )
        with atomic_directory(
            path, overwrite=overwrite, method=self.method, index_id=manifest.index_id
        ) as tmp:
            self._write_files(tmp)
            write_manifest(tmp, manifest)
        self._after_persist(Path(path))

    @classmethod
    def load(cls: type[IndexT], path: str | Path, **kwargs: Any) -> IndexT:
        """Load an index written by :meth:`persist`.

        The template (module notes), inside ``reading_index(path)``: ``read_manifest`` (every
        checksum verified), ``check_manifest`` (method, :attr:`format_version` down to
        :attr:`oldest_format_version`), :meth:`_from_manifest` (the index, built from the
        recorded settings and ``kwargs``), :meth:`_check_embedder` (model *and* dimension),
        :meth:`_read_files`, :func:`~graphrag_integrations.core.index.rollback.roll_back` (when
        a checkpoint resumes, a write journal records an unfinished write, or a database graph
        was written after the persist: those documents leave through ``delete``),
        :meth:`_check_loaded`; then the recorded ``index_id`` and build ``timings`` are
        restored.

        Parameters
        ----------
        path : str or Path
            The index directory.
        **kwargs
            Constructor arguments (``embedding=``...); the recorded settings fill the others.

        Raises
        ------
        IndexNotFoundError
            If ``path`` holds no index.
        CorruptIndexError
            Naming the file, if a file is missing, truncated or altered.
        IndexMismatchError
            Another method, a newer format, another embedding model or dimension, or files
            that disagree with the manifest.
        """
        for attempt in range(1, LOAD_ATTEMPTS + 1):
            try:
                return cls._load_once(path, kwargs)
            except GraphMoved as error:  # another process began or ended a write meanwhile
                if attempt == LOAD_ATTEMPTS:
                    raise
                logger.info("%s; loading again (attempt %d)", error, attempt + 1)
        raise AssertionError("unreachable")

    @classmethod
    def _load_once(cls: type[IndexT], path: str | Path, kwargs: dict[str, Any]) -> IndexT:
        """One attempt of :meth:`load`."""
        outer = active_rollback()  # a resumed checkpoint's; else one for a write journal
        with (
            reading_index(path) as src,
            nullcontext(outer) if outer else rolling_back(()) as state,
        ):
            manifest = check_manifest(
                read_manifest(src),
                method=cls.method,
                supported_format_version=cls.format_version,
                oldest_format_version=cls.oldest_format_version,
            )
            index = cls._from_manifest(src, manifest, dict(kwargs))
            index._check_embedder(src, manifest)
            try:
                index._read_files(src, manifest)
                # a resumed checkpoint's unfinished batch, an unfinished write a journal
                # records, writes to a database graph after the persist (graph_changes)
                roll_back(index, index_stores_of(index))
                _check_loaded(index, src, manifest)
            except GraphMoved:
                raise
            except Exception as error:  # met another process's write begun meanwhile?
                check_moved(src, state.observed, error)
                raise
            # what the index holds, and the graph's write state it saw (readers of a graph
            # another process writes answer from these; a running writer's are hidden)
            snapshot.take(index, hidden=state.hidden, observed=state.observed)
        index._restore_identity(manifest)
        return index

    def manifest(self) -> Manifest:
        """Hook of :meth:`persist`: what the manifest records (method, parameters - the
        counts :meth:`_check_loaded` compares -, models, embedding dimension). The template
        adds the ``index_id``, ``format_version``, ``timings`` and file checksums."""
        raise NotImplementedError(f"{type(self).__name__} must implement manifest()")

    def _write_files(self, directory: Path) -> None:
        """Hook of :meth:`persist`: write the index's files into ``directory`` (the fresh
        temporary directory of ``atomic_directory``; the manifest is written after)."""
        raise NotImplementedError(f"{type(self).__name__} must implement _write_files(directory)")

    def _after_persist(self, path: Path) -> None:
        """Hook of :meth:`persist`, after the swap: nothing by default."""
        return None

    @classmethod
    def _from_manifest(
        cls: type[IndexT], src: Path, manifest: Manifest, options: dict[str, Any]
    ) -> IndexT:
        """Hook of :meth:`load`: a new, empty index built with the recorded settings of
        ``manifest`` where ``options`` (the caller's ``load`` arguments) does not say
        otherwise. Default: ``cls(**options)``."""
        return cls(**options)

    def _check_embedder(self, src: Path, manifest: Manifest) -> None:
        """Hook of :meth:`load`: the embedder must be the recorded model, with the recorded
        dimension (:func:`~graphrag_integrations.core.persistence.check_embedder`). Default:
        checks the index's ``embedder`` when it has one and the manifest records a model."""
        embedder = getattr(self, "embedder", None)
        if embedder is not None and manifest.embedding_model is not None:
            check_embedder(manifest, embedder, source=src)

    def _read_files(self, src: Path, manifest: Manifest) -> None:
        """Hook of :meth:`load`: read the index's files from ``src`` into this index."""
        raise NotImplementedError(f"{type(self).__name__} must implement _read_files(src)")

    def _check_loaded(self, src: Path, manifest: Manifest) -> None:
        """Hook of :meth:`load`: check what was read against the manifest (counts); raise
        :class:`~graphrag_integrations.errors.IndexMismatchError` naming ``src`` when they
        disagree. Default: nothing. After a load that rolled back writes made to a database
        graph after the persist, a mismatch it raises is expected (the manifest's counts are
        those of the persist) and ignored: work it does must come before its count checks."""
        return None

    def _restore_identity(self, manifest: Manifest) -> None:
        """After :meth:`load`: the recorded ``index_id`` (an index holding an ``IndexStore``
        has read it with the store) and build ``timings``. An index that records timings but
        was written before they were recorded gets ``nan`` for each (unknown, not zero)."""
        if not index_stores_of(self):
            self.__dict__["_index_id"] = manifest.index_id or uuid.uuid4().hex
        timings = getattr(self, "timings", None)
        if not isinstance(timings, dict):
            return
        if manifest.timings:
            timings.update(manifest.timings)
        else:
            logger.info(
                "%s: the manifest records no build timings (written before they were); "
                "timings are nan (unknown)",
                type(self).__name__,
            )
            timings.update(dict.fromkeys(timings, math.nan))


def _check_loaded(index: Any, src: Path, manifest: Manifest) -> None:
    """The index's :meth:`IndexPersistence._check_loaded`; after a load that rolled back
    documents written to its graph after the persist, the manifest's counts (those of the
    persist) no longer apply: a count mismatch is expected then (logged), the graph and the
    vectors having been matched node by node by ``IndexStore.load``."""
    later = frozenset(d for store in index_stores_of(index) for d in store.later_writes)
    try:
        index._check_loaded(src, manifest)
    except IndexMismatchError as error:
        if not later:
            raise
        logger.info("%s: counts of the persist no longer apply (%s)", src, error)
