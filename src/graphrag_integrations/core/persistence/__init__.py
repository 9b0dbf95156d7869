"""Index directories: a validated ``manifest.json`` and crash-safe writes.

Every persisted index is a directory holding its data files and a ``manifest.json`` that
records which method wrote it, with which parameters and models. :func:`check_manifest`
compares a manifest with what is loading it and raises
:class:`~graphrag_integrations.errors.IndexMismatchError` naming what was expected and what
was found, so a user never queries an index with the wrong embedding model.

Writes are atomic: :func:`atomic_write_text` and friends write a temporary file in the same
directory, ``fsync`` it and ``os.replace`` it over the target; :func:`atomic_directory` builds a
whole index directory next to the target and swaps it in only when the block succeeds, so a
crash or an exception mid-way leaves the previous index untouched.

Data safety rules (every method inherits them through :func:`atomic_directory` and
:func:`read_manifest`):

* **No foreign deletions.** ``persist`` refuses a non-empty folder that holds no index, or an
  index of another method, unless ``overwrite=True``; even then, files the index did not write
  (anything not listed in the old manifest's ``files``) are kept, never deleted.
* **Checksums.** The manifest lists the SHA-256 of every file written (``files``);
  :func:`read_manifest` verifies them and raises :class:`CorruptIndexError` naming the file.
  Indexes written before checksums existed load with a logged note.
* **Stale siblings.** A writer holds an exclusive ``flock`` on its ``.NAME.tmp-*`` directory
  (and on the ``.NAME.old-*`` backup it moves aside) for as long as it lives; the kernel drops
  the lock when the process dies. The next persist or load of ``NAME`` deletes every such
  sibling whose lock it can take (no live writer), and if ``NAME`` itself is missing (a crash
  between the two renames of a swap) it first moves the newest stale backup back in place.
  Where ``flock`` is unavailable (Windows) a sibling counts as stale once it is older than
  :data:`STALE_AFTER_SECONDS`.

The package has one module per idea: :mod:`.manifest` (the manifest and file checksums),
:mod:`.checks` (manifest against loader), :mod:`.atomic_files` (crash-safe file writes),
:mod:`.sibling_locks` (writer locks and stale siblings), :mod:`.directories`
(:func:`atomic_directory`, :func:`reading_index`) and :mod:`.data_files` (passages and
vectors). Everything public is re-exported here.
"""

from __future__ import annotations

from graphrag_integrations.core.persistence.atomic_files import (
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_text,
)
from graphrag_integrations.core.persistence.checks import check_embedder, check_manifest
from graphrag_integrations.core.persistence.data_files import (
    PASSAGES_NAME,
    read_passages,
    read_vectors,
    write_passages,
)
from graphrag_integrations.core.persistence.directories import atomic_directory, reading_index
from graphrag_integrations.core.persistence.manifest import (
    FILES_KEY,
    FORMAT_VERSION,
    MANIFEST_NAME,
    Manifest,
    file_sha256,
    read_manifest,
    verify_files,
    write_manifest,
)
from graphrag_integrations.core.persistence.sibling_locks import (
    STALE_AFTER_SECONDS,
    clean_stale_siblings,
)

__all__ = [
    "FILES_KEY",
    "FORMAT_VERSION",
    "MANIFEST_NAME",
    "PASSAGES_NAME",
    "STALE_AFTER_SECONDS",
    "Manifest",
    "atomic_directory",
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_write_text",
    "check_embedder",
    "check_manifest",
    "clean_stale_siblings",
    "file_sha256",
    "read_manifest",
    "read_passages",
    "read_vectors",
    "reading_index",
    "verify_files",
    "write_manifest",
    "write_passages",
]
