"""Index directories: written atomically (:func:`atomic_directory`), read under a shared
lock (:func:`reading_index`), with the data-safety rules of :mod:`..persistence`."""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from graphrag_integrations.core.persistence.atomic_files import (
    _default_mode,
    _fsync_dir,
    _fsync_tree,
    atomic_write_json,
)
from graphrag_integrations.core.persistence.manifest import (
    FILES_KEY,
    MANIFEST_NAME,
    Manifest,
    _index_files,
    _parse_manifest,
)
from graphrag_integrations.core.persistence.sibling_locks import (
    _free_sibling_name,
    _lock,
    _new_locked_sibling,
    _open_dir,
    _unlock,
    clean_stale_siblings,
)
from graphrag_integrations.errors import IndexExistsError, IndexMismatchError, IndexNotFoundError

try:  # POSIX advisory locks: readers share the lock a writer's swap takes exclusively
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

logger = logging.getLogger(__name__)


@contextlib.contextmanager
def reading_index(path: str | Path) -> Iterator[Path]:
    """Hold a shared ``flock`` on index directory ``path`` while reading it.

    A writer (:func:`atomic_directory`) takes the exclusive lock on the old directory before
    it moves it aside, so it waits for readers inside this block, and a reader never mixes the
    manifest of one version with the files of the next. No-op where ``flock`` is unavailable
    or ``path`` does not exist (the load then fails with its own error). Example: with
    :func:`atomic_directory`.
    """
    target = Path(path)
    clean_stale_siblings(target)  # may restore a backup orphaned by a crash
    fd: int | None = None
    for _attempt in range(100):
        fd = _open_dir(target) if target.is_dir() else None
        if fd is None or fcntl is None:
            break
        fcntl.flock(fd, fcntl.LOCK_SH)
        try:
            if os.stat(target).st_ino == os.fstat(fd).st_ino:
                break  # still the directory at ``path``: no swap happened meanwhile
        except FileNotFoundError:
            pass
        _unlock(fd)
        fd = None
    try:
        yield target
    finally:
        _unlock(fd)


# -- atomic directories ---------------------------------------------------------------------
def _owned_entries(
    target: Path, method: str | None, overwrite: bool, index_id: str | None = None
) -> set[str] | None:
    """Top-level entries of ``target`` its current index wrote, if others are there too.

    ``None`` when nothing else is there (missing or empty folder, or only index entries): then
    the whole directory can be swapped atomically.

    Raises :class:`IndexExistsError` when ``target`` is not ours to replace.
    """
    for _attempt in range(100):  # re-read if another writer swapped the directory meanwhile
        try:
            before = os.stat(target).st_ino
            entries = sorted(e.name for e in target.iterdir())
        except (FileNotFoundError, NotADirectoryError):
            return None
        if not entries:
            return None
        try:
            old: Manifest | None = _parse_manifest(target)
        except (IndexNotFoundError, IndexMismatchError):
            old = None
        with contextlib.suppress(FileNotFoundError):
            if os.stat(target).st_ino == before:
                break
    if old is None:
        if not overwrite:
            shown = ", ".join(entries[:3]) + (", ..." if len(entries) > 3 else "")
            raise IndexExistsError(
                f"refusing to persist into {target}: it is a non-empty folder that holds no index "
                f"({len(entries)} entries: {shown}); choose a new or empty folder, or pass "
                "overwrite=True (the files there are kept, never deleted)"
            )
        return set()
    if method is not None and old.method != method and not overwrite:
        raise IndexExistsError(
            f"refusing to replace the {old.method!r} index in {target} with a {method!r} "
            "index; choose another folder, or pass overwrite=True"
        )
    if index_id and old.index_id != index_id and not overwrite:
        held = f"index {old.index_id}" if old.index_id else "index written without an index id"
        raise IndexExistsError(
            f"refusing to replace the {old.method!r} index in {target}: it holds another "
            f"{held} (this is index {index_id}); choose another folder, or pass overwrite=True "
            "to replace it"
        )
    if not old.files:
        return None  # written before file lists existed: all its entries count as its own
    owned = {MANIFEST_NAME} | {PurePosixPath(rel).parts[0] for rel in old.files}
    if all(name in owned for name in entries):
        return None  # nothing foreign at the top: the atomic swap loses nothing
    stray = [
        p.relative_to(target).as_posix()
        for name in sorted(owned)
        if (target / name).is_dir()
        for p in sorted((target / name).rglob("*"))
        if p.is_file() and p.relative_to(target).as_posix() not in old.files
    ]
    if stray:
        raise IndexExistsError(
            f"refusing to persist into {target}: {stray[:3]} inside the index's folders were not "
            "written by it and would be lost; move them out first"
        )
    return owned


def _identity_of(directory: Path) -> tuple[str | None, str | None]:
    """``(method, index_id)`` of the manifest in ``directory`` (``None`` where unknown)."""
    try:
        manifest = _parse_manifest(directory)
    except (IndexNotFoundError, IndexMismatchError):
        return None, None
    return manifest.method, manifest.index_id or None


def _seal(tmp: Path) -> None:
    """Record the SHA-256 of every file in ``tmp`` in its manifest (if it has one)."""
    manifest_path = tmp / MANIFEST_NAME
    if not manifest_path.is_file():
        return
    data = json.loads(manifest_path.read_text(encoding="utf-8"))
    if isinstance(data, dict):
        data[FILES_KEY] = _index_files(tmp)
        atomic_write_json(manifest_path, data)


def _swap(target: Path, tmp: Path) -> None:
    """Replace directory ``target`` by ``tmp`` with two renames (old one kept until done)."""
    backups: list[Path] = []
    locks: list[int | None] = []
    try:
        for attempt in range(5):
            if target.exists():
                fd = _lock(target)  # waits for readers; follows the directory through the rename
                locks.append(fd)
                if fd is not None and os.stat(target).st_ino != os.fstat(fd).st_ino:
                    continue  # another writer swapped meanwhile: lock the new one
                backup = _free_sibling_name(target, "old")
                os.replace(target, backup)
                backups.append(backup)
            try:
                os.replace(tmp, target)
                break
            except OSError as exc:
                # another writer swapped its directory in between our two renames: go again
                raced = exc.errno in (errno.ENOTEMPTY, errno.EEXIST) and target.exists()
                if not raced or attempt == 4:
                    if backups and not target.exists():
                        os.replace(backups.pop(0), target)
                    raise
        _fsync_dir(target.parent)
        for backup in backups:
            shutil.rmtree(backup, ignore_errors=True)
    finally:
        for fd in locks:
            _unlock(fd)


def _replace_in_place(target: Path, tmp: Path, owned: set[str]) -> None:
    """Replace the index files in ``target`` entry by entry, keeping every other entry.

    The old manifest goes first and the new one comes last, so an interrupted call leaves no
    manifest (no index) rather than a mix, and the foreign files are never touched.
    """
    new_entries = sorted(tmp.iterdir(), key=lambda e: e.name == MANIFEST_NAME)
    clash = [
        e.name for e in new_entries if e.name not in owned and os.path.lexists(target / e.name)
    ]
    if clash:
        raise IndexExistsError(
            f"refusing to persist into {target}: {clash} there were not written by an index and "
            "would be overwritten; move them away or choose another folder"
        )
    with contextlib.suppress(FileNotFoundError):
        (target / MANIFEST_NAME).unlink()
    for name in sorted(owned):
        old = target / name
        if old.is_dir() and not old.is_symlink():
            shutil.rmtree(old)
        elif os.path.lexists(old):
            old.unlink()
    for entry in new_entries:
        os.replace(entry, target / entry.name)
    _fsync_dir(target)
    kept = sorted(e.name for e in target.iterdir() if e.name not in {n.name for n in new_entries})
    logger.info("wrote the index into %s, keeping %d file(s) it did not write", target, len(kept))


@contextlib.contextmanager
def atomic_directory(
    path: str | Path,
    *,
    overwrite: bool = False,
    method: str | None = None,
    index_id: str | None = None,
) -> Iterator[Path]:
    """Build a directory next to ``path`` and swap it in only if the block succeeds.

    Yields an empty temporary sibling directory; write the whole index into it (with a
    ``manifest.json``). When the ``with`` block ends normally the SHA-256 of every file is
    recorded in the manifest's ``files``, everything is ``fsync``-ed, and it replaces ``path``
    (an existing directory is moved aside first and deleted after the swap; if the swap fails
    it is moved back). When the block raises, the temporary directory is deleted and ``path``
    keeps its old contents. Stale siblings of ``path`` left by killed writers are removed
    first (:func:`clean_stale_siblings`).

    What may be replaced: a missing or empty folder, or an index of the same method *and* the
    same ``index_id`` (a re-persist of the index that is there). A non-empty folder holding no
    index, another method's index, or another index of the same method (another
    ``index_id``, or one recorded before index ids existed) is refused unless
    ``overwrite=True``. A writer without an ``index_id`` (neither given nor in the manifest
    it writes) skips the identity check. Files in ``path`` the old index did not write are
    never deleted: if there are any, the index files are replaced entry by entry around them
    (not atomically: the manifest is removed first and written last) and a name clash is
    refused. An index
    written before manifests listed their files counts as owning all its entries.

    Parameters
    ----------
    path : str or Path
        The index directory to write.
    overwrite : bool
        Allow writing into a non-empty non-index folder or over another method's index.
    method : str, optional
        The writer's method, to refuse another method's index before the block runs; when
        ``None`` it is read from the manifest written in the block.
    index_id : str, optional
        The writer's index id, to refuse another index of the same method before the block
        runs; when ``None`` it is read from the manifest written in the block.

    Raises
    ------
    NotADirectoryError
        If ``path`` exists and is not a directory.
    IndexExistsError
        If ``path`` is not ours to replace (see above; nothing is written).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from graphrag_integrations.core.persistence import Manifest, read_manifest, write_manifest
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "index"
    >>> with atomic_directory(target) as tmp:
    ...     _ = write_manifest(tmp, Manifest(method="toy"))
    ...     _ = (tmp / "data.txt").write_text("new")
    >>> (target / "data.txt").read_text(), list(read_manifest(target).files)
    ('new', ['data.txt'])
    >>> with reading_index(target) as src:
    ...     read_manifest(src).method
    'toy'
    """
    target = Path(path)
    try:
        is_dir = stat.S_ISDIR(os.stat(target).st_mode)
    except FileNotFoundError:  # (also between the two renames of another writer's swap)
        is_dir = True
    if not is_dir:
        raise NotADirectoryError(f"cannot write an index to {target}: it is not a directory")
    target.parent.mkdir(parents=True, exist_ok=True)
    clean_stale_siblings(target)
    _owned_entries(target, method, overwrite, index_id)  # refuse early, before the work
    mode = _default_mode(target, 0o777)
    tmp, fd = _new_locked_sibling(target, "tmp")
    try:
        try:
            os.chmod(tmp, mode)
            yield tmp
            _seal(tmp)
            _fsync_tree(tmp)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        try:
            written_method, written_id = _identity_of(tmp)
            owned = _owned_entries(
                target, method or written_method, overwrite, index_id or written_id
            )
            if owned is None:
                _swap(target, tmp)
            else:
                _replace_in_place(target, tmp, owned)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    finally:
        _unlock(fd)
    logger.debug("wrote index directory %s", target)
