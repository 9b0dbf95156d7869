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
"""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import json
import logging
import os
import re
import secrets
import shutil
import stat
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from graphrag_integrations.core.types import Passage
from graphrag_integrations.errors import (
    CorruptIndexError,
    IndexExistsError,
    IndexMismatchError,
    IndexNotFoundError,
)

if TYPE_CHECKING:
    from graphrag_integrations.core.embeddings import Embedder, FloatMatrix

try:  # POSIX advisory locks mark the temporary directories of live writers
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

logger = logging.getLogger(__name__)

#: Name of the manifest file inside every index directory.
MANIFEST_NAME = "manifest.json"
#: Newest manifest/index layout this version of the package reads and writes.
FORMAT_VERSION = 1
#: Manifest key of the file -> SHA-256 map (optional, so format 1 readers ignore it).
FILES_KEY = "files"
#: Where ``flock`` is unavailable, a ``.NAME.tmp-*``/``.NAME.old-*`` sibling older than this
#: is taken for the leftover of a dead writer.
STALE_AFTER_SECONDS = 3600.0


def _package_version() -> str:
    from graphrag_integrations import __version__

    return __version__


def _now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass(frozen=True)
class Manifest:
    """What an index directory holds and how it was built.

    Parameters
    ----------
    method : str
        Name of the method that wrote the index (``"dense"``, ``"clue"``...).
    parameters : dict
        The method's build parameters (JSON-serialisable), recorded for reproducibility.
    models : dict of str to str
        Role -> model name, e.g. ``{"embedding": "sentence-transformers/all-MiniLM-L6-v2"}``.
    embedding_dimension : int, optional
        Length of the stored vectors (``None`` when the index stores none).
    format_version : int
        Layout version of the directory; readers refuse versions newer than they know.
    package_version : str
        ``graphrag_integrations.__version__`` of the writer.
    created_at : str
        ISO-8601 UTC timestamp of the write.
    files : dict of str to str
        Relative POSIX path -> SHA-256 hex digest of every file the writer wrote (filled in by
        :func:`atomic_directory`); empty for indexes written before checksums existed.
    extra : dict
        Keys found in a manifest that this version does not know; kept so a round trip
        through an older reader loses nothing.

    Examples
    --------
    >>> m = Manifest(method="dense", models={"embedding": "all-MiniLM-L6-v2"},
    ...              embedding_dimension=384)
    >>> m.embedding_model
    'all-MiniLM-L6-v2'
    >>> Manifest.from_dict(m.to_dict()) == m
    True
    """

    method: str
    parameters: dict[str, Any] = field(default_factory=dict)
    models: dict[str, str] = field(default_factory=dict)
    embedding_dimension: int | None = None
    format_version: int = FORMAT_VERSION
    package_version: str = field(default_factory=_package_version)
    created_at: str = field(default_factory=_now_iso)
    files: dict[str, str] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def embedding_model(self) -> str | None:
        """The model recorded under the ``"embedding"`` role, if any."""
        return self.models.get("embedding")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (the ``extra`` keys are written back at the top level)."""
        data: dict[str, Any] = dict(self.extra)
        data.update(
            {
                "method": self.method,
                "parameters": dict(self.parameters),
                "models": dict(self.models),
                "embedding_dimension": self.embedding_dimension,
                "format_version": self.format_version,
                "package_version": self.package_version,
                "created_at": self.created_at,
                FILES_KEY: dict(self.files),
            }
        )
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "manifest") -> Manifest:
        """Validate and build a manifest; raises :class:`IndexMismatchError` on bad fields."""
        if not isinstance(data, Mapping):
            raise IndexMismatchError(f"{source}: expected a JSON object, found {_kind(data)}")
        _require(data, "method", str, source)
        _require(data, "format_version", int, source)
        method = data["method"]
        format_version = data["format_version"]
        parameters = data.get("parameters", {})
        if not isinstance(parameters, Mapping):
            raise IndexMismatchError(
                f"{source}: 'parameters' must be an object, found {_kind(parameters)}"
            )
        models = data.get("models", {})
        if not isinstance(models, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in models.items()
        ):
            raise IndexMismatchError(
                f"{source}: 'models' must map roles to model names, found {models!r}"
            )
        dim = data.get("embedding_dimension")
        if dim is not None and (not isinstance(dim, int) or isinstance(dim, bool) or dim < 0):
            raise IndexMismatchError(
                f"{source}: 'embedding_dimension' must be a non-negative integer or null, "
                f"found {dim!r}"
            )
        files = _parse_files(data.get(FILES_KEY, {}), source)
        known = {
            FILES_KEY,
            "method",
            "parameters",
            "models",
            "embedding_dimension",
            "format_version",
            "package_version",
            "created_at",
        }
        return cls(
            method=method,
            parameters=dict(parameters),
            models=dict(models),
            embedding_dimension=dim,
            format_version=format_version,
            package_version=str(data.get("package_version", "unknown")),
            created_at=str(data.get("created_at", "")),
            files=files,
            extra={k: v for k, v in data.items() if k not in known},
        )


_SHA256 = re.compile(r"[0-9a-f]{64}")


def _parse_files(value: Any, source: str) -> dict[str, str]:
    """The ``files`` map: safe relative POSIX paths to SHA-256 hex digests."""
    if not isinstance(value, Mapping):
        raise CorruptIndexError(f"{source}: {FILES_KEY!r} must be an object, found {_kind(value)}")
    out: dict[str, str] = {}
    for rel, digest in value.items():
        parts = PurePosixPath(rel).parts if isinstance(rel, str) else ()
        if not parts or rel.startswith("/") or ".." in parts or "\\" in rel:
            raise CorruptIndexError(f"{source}: {FILES_KEY!r} holds a bad path {rel!r}")
        if not isinstance(digest, str) or not _SHA256.fullmatch(digest):
            raise CorruptIndexError(
                f"{source}: {FILES_KEY!r}[{rel!r}] must be a SHA-256 hex digest, found {digest!r}"
            )
        out[rel] = digest
    return out


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _require(data: Mapping[str, Any], key: str, kind: type, source: str) -> None:
    if key not in data:
        raise IndexMismatchError(f"{source}: required field {key!r} is missing")
    value = data[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise IndexMismatchError(
            f"{source}: field {key!r} must be {kind.__name__}, found {_kind(value)} {value!r}"
        )


# -- manifest files ------------------------------------------------------------------------
def write_manifest(directory: str | Path, manifest: Manifest) -> Path:
    """Write ``manifest`` as ``directory/manifest.json`` (atomically); returns the file path.

    Examples
    --------
    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> _ = write_manifest(d, Manifest(method="dense"))
    >>> read_manifest(d).method
    'dense'
    """
    path = Path(directory) / MANIFEST_NAME
    atomic_write_json(path, manifest.to_dict())
    return path


def read_manifest(directory: str | Path, *, verify: bool = True) -> Manifest:
    """Read and validate ``directory/manifest.json``, and check the files it lists.

    Stale ``.NAME.tmp-*``/``.NAME.old-*`` siblings of ``directory`` left by dead writers are
    cleaned up first (see :func:`clean_stale_siblings`).

    Parameters
    ----------
    directory : str or Path
        The index directory.
    verify : bool
        Check the SHA-256 of every file the manifest lists (:func:`verify_files`).

    Raises
    ------
    IndexNotFoundError
        If the directory or its manifest does not exist.
    CorruptIndexError
        If the manifest is not valid JSON, or a listed file is missing or altered.
    IndexMismatchError
        If the manifest lacks required fields.

    Examples
    --------
    >>> read_manifest("/no/such/index")
    Traceback (most recent call last):
    ...
    graphrag_integrations.errors.IndexNotFoundError: no index at /no/such/index: \
/no/such/index/manifest.json does not exist
    """
    directory = Path(directory)
    clean_stale_siblings(directory)
    manifest = _parse_manifest(directory)
    if verify:
        verify_files(directory, manifest)
    return manifest


def _parse_manifest(directory: Path) -> Manifest:
    path = directory / MANIFEST_NAME
    if not path.is_file():
        raise IndexNotFoundError(f"no index at {directory}: {path} does not exist")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:  # swapped away by a writer in between
        raise IndexNotFoundError(f"no index at {directory}: {path} does not exist") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CorruptIndexError(f"{path} is not valid JSON: {exc}") from exc
    return Manifest.from_dict(data, source=str(path))


def file_sha256(path: str | Path) -> str:
    """SHA-256 hex digest of a file, read in 1 MiB blocks.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "x"
    >>> _ = p.write_bytes(b"abc")
    >>> file_sha256(p)[:16]
    'ba7816bf8f01cfea'
    """
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(functools.partial(fh.read, 1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _index_files(root: Path) -> dict[str, str]:
    """Relative POSIX path -> SHA-256 of every file under ``root`` but its manifest."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            if rel != MANIFEST_NAME:
                out[rel] = file_sha256(path)
    return out


def verify_files(directory: str | Path, manifest: Manifest) -> None:
    """Check every file ``manifest.files`` lists against its SHA-256.

    A manifest without ``files`` (an index written before checksums existed) is accepted
    with a logged note. Files in ``directory`` that the manifest does not list are ignored.

    Raises
    ------
    CorruptIndexError
        Naming the first file that is missing, unreadable or altered.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "data.txt").write_text("hello")
    >>> m = Manifest(method="toy", files={"data.txt": file_sha256(d / "data.txt")})
    >>> verify_files(d, m)
    >>> _ = (d / "data.txt").write_text("hellO")
    >>> verify_files(d, m)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    graphrag_integrations.errors.CorruptIndexError: .../data.txt: checksum mismatch ...
    """
    directory = Path(directory)
    if not manifest.files:
        logger.info(
            "%s: the manifest lists no file checksums (written by graphrag-integrations %s, "
            "before checksums existed); its files are not verified",
            directory,
            manifest.package_version,
        )
        return
    for rel, digest in manifest.files.items():
        path = directory / rel
        if not path.is_file():
            raise CorruptIndexError(
                f"{path}: missing, but the manifest lists it (corrupt index; rebuild it)"
            )
        try:
            found = file_sha256(path)
        except OSError as exc:
            raise CorruptIndexError(f"{path}: unreadable ({exc}); rebuild the index") from exc
        if found != digest:
            raise CorruptIndexError(
                f"{path}: checksum mismatch (sha256 {found[:12]}..., the manifest records "
                f"{digest[:12]}...): the file was modified or damaged; rebuild the index"
            )


def check_manifest(
    manifest: Manifest,
    *,
    method: str,
    embedding_model: str | None = None,
    dimension: int | None = None,
    supported_format_version: int = FORMAT_VERSION,
    oldest_format_version: int = 1,
) -> Manifest:
    """Check that ``manifest`` matches what is loading it; returns it unchanged.

    Parameters
    ----------
    manifest : Manifest
        As read by :func:`read_manifest`.
    method : str
        The loader's method name.
    embedding_model : str, optional
        The loader's embedding model name (not checked when ``None``).
    dimension : int, optional
        The loader's embedding dimension (not checked when ``None``).
    supported_format_version : int
        Newest layout the loader reads.
    oldest_format_version : int
        Oldest layout the loader reads (an older one must be rebuilt).

    Raises
    ------
    IndexMismatchError
        With "expected ... found ..." for the first field that differs, checked in this order:
        method, format version, embedding model, dimension (so loading another method's index
        always says the method differs, whatever its format version).

    Examples
    --------
    >>> m = Manifest(method="dense", models={"embedding": "a"}, embedding_dimension=3)
    >>> check_manifest(m, method="dense", embedding_model="b")
    Traceback (most recent call last):
    ...
    graphrag_integrations.errors.IndexMismatchError: embedding model mismatch: expected 'b', \
found 'a' (the index was built with another model; load it with the same model or rebuild it)
    """
    if manifest.method != method:
        raise IndexMismatchError(
            f"method mismatch: expected {method!r}, found {manifest.method!r} "
            f"(load it with the class for {manifest.method!r})"
        )
    if manifest.format_version > supported_format_version:
        raise IndexMismatchError(
            f"index format version {manifest.format_version} is newer than supported "
            f"{supported_format_version} (written by graphrag-integrations "
            f"{manifest.package_version}, this is {_package_version()}); upgrade the package"
        )
    if manifest.format_version < oldest_format_version:
        raise IndexMismatchError(
            f"index format version {manifest.format_version} predates the oldest layout this "
            f"loader reads ({oldest_format_version}); rebuild the index"
        )
    if embedding_model is not None and manifest.embedding_model != embedding_model:
        raise IndexMismatchError(
            f"embedding model mismatch: expected {embedding_model!r}, found "
            f"{manifest.embedding_model!r} (the index was built with another model; load it "
            "with the same model or rebuild it)"
        )
    if dimension is not None and manifest.embedding_dimension != dimension:
        raise IndexMismatchError(
            f"embedding dimension mismatch: expected {dimension}, found "
            f"{manifest.embedding_dimension}"
        )
    return manifest


def check_embedder(manifest: Manifest, embedder: Embedder, *, source: str | Path = "") -> None:
    """Check that ``embedder`` matches the embedding model *and* dimension of ``manifest``.

    Call it at load time, so an embedding with the recorded model name but another vector
    length fails there with a clear message instead of at the first query. The dimension is
    only checked when the manifest records one (an index of no vectors records none).

    Raises
    ------
    IndexMismatchError
        If the model name or the dimension differs.

    Examples
    --------
    >>> class Toy:
    ...     model_name, dimension = "toy", 8
    >>> check_embedder(Manifest(method="dense", models={"embedding": "toy"},
    ...                         embedding_dimension=4), Toy())  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    graphrag_integrations.errors.IndexMismatchError: embedding dimension mismatch: the index \
holds vectors of dimension 4, the embedding 'toy' makes 8 ...
    """
    prefix = f"{source}: " if str(source) else ""
    if manifest.embedding_model != embedder.model_name:
        raise IndexMismatchError(
            f"{prefix}embedding model mismatch: expected {embedder.model_name!r}, found "
            f"{manifest.embedding_model!r} (the index was built with another model; load it "
            "with the same model or rebuild it)"
        )
    recorded = manifest.embedding_dimension
    if recorded is not None and recorded != embedder.dimension:
        raise IndexMismatchError(
            f"{prefix}embedding dimension mismatch: the index holds vectors of dimension "
            f"{recorded}, the embedding {embedder.model_name!r} makes {embedder.dimension} "
            "(same model name, another configuration?); load it with the embedding it was "
            "built with or rebuild it"
        )


# -- atomic writes -------------------------------------------------------------------------
def _fsync_dir(directory: Path) -> None:
    """Flush a directory entry (renames) to disk; a no-op where directories can't be opened."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - e.g. Windows
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - some filesystems refuse fsync on directories
        pass
    finally:
        os.close(fd)


@functools.lru_cache(maxsize=1)
def _umask() -> int:
    # os.umask can only be read by setting it; done once, then cached.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _default_mode(target: Path, base: int) -> int:
    """Mode for a new file/dir replacing ``target``: keep the old one's, else ``base & ~umask``."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        return base & ~_umask()


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so readers see the old or the new content, never a mix.

    The bytes go to a temporary file in the same directory (created if needed), which is
    flushed with ``fsync`` and moved over ``path`` with ``os.replace``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "x.bin"
    >>> atomic_write_bytes(p, b"abc")
    >>> p.read_bytes()
    b'abc'
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    mode = _default_mode(target, 0o666)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        os.chmod(tmp_name, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
    _fsync_dir(target.parent)


def atomic_write_text(path: str | Path, text: str, *, encoding: str = "utf-8") -> None:
    """:func:`atomic_write_bytes` for text.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "x.txt"
    >>> atomic_write_text(p, "héllo")
    >>> p.read_text(encoding="utf-8")
    'héllo'
    """
    atomic_write_bytes(path, text.encode(encoding))


def atomic_write_json(path: str | Path, data: Any, *, indent: int | None = 2) -> None:
    """Serialise ``data`` as UTF-8 JSON and write it atomically.

    Raises
    ------
    TypeError
        If ``data`` is not JSON-serialisable (nothing is written).

    Examples
    --------
    >>> import tempfile, pathlib, json
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "x.json"
    >>> atomic_write_json(p, {"a": [1, 2]})
    >>> json.loads(p.read_text())
    {'a': [1, 2]}
    """
    text = json.dumps(data, indent=indent, ensure_ascii=False, allow_nan=False)
    atomic_write_text(path, text + "\n")


def _fsync_tree(root: Path) -> None:
    for dirpath, _dirnames, filenames in os.walk(root):
        for name in filenames:
            fd = os.open(os.path.join(dirpath, name), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        _fsync_dir(Path(dirpath))


# -- writer locks and stale siblings -------------------------------------------------------
def _sibling_pattern(target: Path) -> re.Pattern[str]:
    # tempfile.mkdtemp names: prefix + 8 characters of [a-z0-9_]
    return re.compile(rf"\.{re.escape(target.name)}\.(tmp|old)-[a-z0-9_]{{8}}")


def _open_dir(path: Path) -> int | None:
    try:
        return os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - directories cannot be opened (Windows)
        return None


def _lock(path: Path) -> int | None:
    """Take an exclusive ``flock`` on directory ``path`` (waiting); returns the fd to keep."""
    fd = _open_dir(path)
    if fd is not None and fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def _unlock(fd: int | None) -> None:
    if fd is not None:
        os.close(fd)  # closing the last fd of the open file drops its flock


def _take_if_stale(path: Path) -> tuple[bool, int | None]:
    """``(True, fd)`` holding the lock if no live writer holds ``path``, else ``(False, None)``."""
    if fcntl is None:  # pragma: no cover - Windows: age is all we have
        try:
            age = time.time() - path.stat().st_mtime
        except FileNotFoundError:
            return False, None
        return age > STALE_AFTER_SECONDS, None
    fd = _open_dir(path)
    if fd is None:
        return False, None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return False, None
    return True, fd


def clean_stale_siblings(path: str | Path) -> int:
    """Delete the ``.NAME.tmp-*``/``.NAME.old-*`` siblings of ``path`` no live writer holds.

    A writer (:func:`atomic_directory`) keeps an exclusive ``flock`` on its temporary directory
    and on the backup it moves aside until it finishes, and the kernel drops the lock when the
    process dies, so a sibling whose lock can be taken is the leftover of a killed writer; one
    still locked belongs to a writer at work (another process persisting the same target) and
    is left alone. If ``path`` itself is missing, the newest stale backup (the previous index,
    orphaned by a crash between the two renames of a swap) is moved back first.

    Returns
    -------
    int
        How many siblings were deleted (logged as a warning when > 0).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> (root / ".index.tmp-abcd1234").mkdir()
    >>> clean_stale_siblings(root / "index"), sorted(p.name for p in root.iterdir())
    (1, [])
    """
    target = Path(path)
    try:
        entries = list(target.parent.iterdir())
    except OSError:
        return 0
    pattern = _sibling_pattern(target)
    stale: list[tuple[Path, int | None]] = []
    for entry in entries:
        match = pattern.fullmatch(entry.name)
        if match is None or entry.is_symlink() or not entry.is_dir():
            continue
        free, fd = _take_if_stale(entry)
        if free:
            stale.append((entry, fd))
    removed = 0
    try:
        doomed = [entry for entry, _fd in stale]
        backups = [entry for entry in doomed if ".old-" in entry.name]
        if backups and not target.exists():
            newest = max(backups, key=lambda entry: entry.stat().st_mtime)
            os.replace(newest, target)
            logger.warning("restored %s from %s, left by an interrupted persist", target, newest)
            doomed.remove(newest)
        for entry in doomed:
            shutil.rmtree(entry, ignore_errors=True)
            removed += not entry.exists()
    finally:
        for _entry, fd in stale:  # every lock taken, the restored directory's too
            _unlock(fd)
    if removed:
        logger.warning("deleted %d stale temporary sibling(s) of %s", removed, target)
    return removed


_NAME_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789_"


def _free_sibling_name(target: Path, kind: str) -> Path:
    """An unused ``.NAME.<kind>-XXXXXXXX`` path next to ``target`` (not created: an empty
    placeholder directory would look stale to a concurrent cleaner)."""
    while True:
        suffix = "".join(secrets.choice(_NAME_CHARS) for _ in range(8))
        candidate = target.parent / f".{target.name}.{kind}-{suffix}"
        if not os.path.lexists(candidate):
            return candidate


def _new_locked_sibling(target: Path, kind: str) -> tuple[Path, int | None]:
    """Create ``.NAME.<kind>-XXXXXXXX`` next to ``target`` and lock it before anyone sees it
    unlocked for long; retried if a cleaner deleted it in between."""
    while True:
        tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.{kind}-"))
        fd = _lock(tmp)
        try:
            if fd is None and tmp.is_dir():
                return tmp, None  # no directory fds on this platform
            if fd is not None and os.stat(tmp).st_ino == os.fstat(fd).st_ino:
                return tmp, fd
        except FileNotFoundError:
            pass
        _unlock(fd)  # a cleaner took it for stale in the instant before we locked it


@contextlib.contextmanager
def reading_index(path: str | Path) -> Iterator[Path]:
    """Hold a shared ``flock`` on index directory ``path`` while reading it.

    A writer (:func:`atomic_directory`) takes the exclusive lock on the old directory before
    it moves it aside, so it waits for readers inside this block, and a reader never mixes the
    manifest of one version with the files of the next. No-op where ``flock`` is unavailable
    or ``path`` does not exist (the load then fails with its own error).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "index"
    >>> with atomic_directory(target) as tmp:
    ...     _ = write_manifest(tmp, Manifest(method="toy"))
    >>> with reading_index(target) as src:
    ...     read_manifest(src).method
    'toy'
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
def _owned_entries(target: Path, method: str | None, overwrite: bool) -> set[str] | None:
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


def _method_of(directory: Path) -> str | None:
    try:
        return _parse_manifest(directory).method
    except (IndexNotFoundError, IndexMismatchError):
        return None


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
    path: str | Path, *, overwrite: bool = False, method: str | None = None
) -> Iterator[Path]:
    """Build a directory next to ``path`` and swap it in only if the block succeeds.

    Yields an empty temporary sibling directory; write the whole index into it (with a
    ``manifest.json``). When the ``with`` block ends normally the SHA-256 of every file is
    recorded in the manifest's ``files``, everything is ``fsync``-ed, and it replaces ``path``
    (an existing directory is moved aside first and deleted after the swap; if the swap fails
    it is moved back). When the block raises, the temporary directory is deleted and ``path``
    keeps its old contents. Stale siblings of ``path`` left by killed writers are removed
    first (:func:`clean_stale_siblings`).

    What may be replaced: a missing or empty folder, or an index of the same method. A
    non-empty folder holding no index, or another method's index, is refused unless
    ``overwrite=True``. Files in ``path`` the old index did not write are never deleted: if
    there are any, the index files are replaced entry by entry around them (not atomically:
    the manifest is removed first and written last) and a name clash is refused. An index
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

    Raises
    ------
    NotADirectoryError
        If ``path`` exists and is not a directory.
    IndexExistsError
        If ``path`` is not ours to replace (see above; nothing is written).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "index"
    >>> with atomic_directory(target) as tmp:
    ...     _ = write_manifest(tmp, Manifest(method="toy"))
    ...     _ = (tmp / "data.txt").write_text("new")
    >>> (target / "data.txt").read_text(), list(read_manifest(target).files)
    ('new', ['data.txt'])
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
    _owned_entries(target, method, overwrite)  # refuse early, before the work of the block
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
            owned = _owned_entries(target, method or _method_of(tmp), overwrite)
            if owned is None:
                _swap(target, tmp)
            else:
                _replace_in_place(target, tmp, owned)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    finally:
        _unlock(fd)
    logger.debug("wrote index directory %s", target)


#: File name under which :func:`write_passages` stores passages.
PASSAGES_NAME = "passages.json"


def write_passages(directory: str | Path, passages: Iterable[Passage]) -> Path:
    """Write ``passages`` to ``directory/passages.json`` atomically.

    Raises
    ------
    TypeError
        If some passage metadata is not JSON-serialisable (nothing is written).

    Examples
    --------
    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> _ = write_passages(d, [Passage("p1", "text", "d1", {"title": "T"})])
    >>> read_passages(d)[0].metadata["title"]
    'T'
    """
    rows = [
        {"id": p.id, "text": p.text, "doc_id": p.doc_id, "metadata": dict(p.metadata)}
        for p in passages
    ]
    target = Path(directory) / PASSAGES_NAME
    try:
        atomic_write_json(target, rows, indent=None)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"cannot persist: passage metadata must be JSON-serialisable ({exc})"
        ) from exc
    return target


def read_passages(directory: str | Path) -> list[Passage]:
    """Read what :func:`write_passages` wrote.

    Raises
    ------
    CorruptIndexError
        If the file is missing, unreadable or malformed.
    """
    source = Path(directory) / PASSAGES_NAME
    try:
        rows = json.loads(source.read_text(encoding="utf-8"))
        return [Passage(r["id"], r["text"], r["doc_id"], r["metadata"]) for r in rows]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CorruptIndexError(f"{source}: missing or unreadable passages file: {exc}") from exc


def read_vectors(path: str | Path, *, shape: tuple[int, int] | None = None) -> FloatMatrix:
    """Load a ``.npy`` matrix written by an index, refusing anything damaged.

    Parameters
    ----------
    path : str or Path
        The ``.npy`` file.
    shape : tuple of int, optional
        The expected ``(rows, dimension)``.

    Returns
    -------
    numpy.ndarray
        ``float32``, C-contiguous.

    Raises
    ------
    CorruptIndexError
        Naming the file, if it is missing, empty, truncated or not a 2-D numeric array, has
        another shape, or holds NaN/infinite values.

    Examples
    --------
    >>> import tempfile, pathlib, numpy as np
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "vectors.npy"
    >>> np.save(p, np.array([[1.0, 0.0], [np.nan, 1.0]], dtype=np.float32))
    >>> read_vectors(p)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    graphrag_integrations.errors.CorruptIndexError: .../vectors.npy: 1 vector(s) hold NaN ...
    """
    import numpy as np

    source = Path(path)
    try:
        matrix = np.load(source, allow_pickle=False)
    except FileNotFoundError as exc:
        raise CorruptIndexError(f"{source}: missing (corrupt index; rebuild it)") from exc
    except (OSError, ValueError, EOFError) as exc:
        size = source.stat().st_size if source.exists() else 0
        raise CorruptIndexError(
            f"{source}: unreadable vector file ({size} bytes; {type(exc).__name__}: {exc}); it "
            "is truncated or damaged: rebuild the index"
        ) from exc
    if matrix.ndim != 2 or matrix.dtype.kind not in "fiu":
        raise CorruptIndexError(
            f"{source}: expected a 2-D numeric matrix, found shape {matrix.shape} of {matrix.dtype}"
        )
    if shape is not None and matrix.shape != shape:
        raise CorruptIndexError(f"{source}: shape {matrix.shape}, expected {shape}")
    out: FloatMatrix = np.ascontiguousarray(matrix, dtype=np.float32)
    bad = np.flatnonzero(~np.isfinite(out).all(axis=1))
    if bad.size:
        raise CorruptIndexError(
            f"{source}: {bad.size} vector(s) hold NaN or infinite values (rows "
            f"{bad[:5].tolist()}); the file is damaged: rebuild the index"
        )
    return out
