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
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from graphrag_integrations.errors import IndexMismatchError, IndexNotFoundError

logger = logging.getLogger(__name__)

#: Name of the manifest file inside every index directory.
MANIFEST_NAME = "manifest.json"
#: Newest manifest/index layout this version of the package reads and writes.
FORMAT_VERSION = 1


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
        known = {
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
            extra={k: v for k, v in data.items() if k not in known},
        )


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


def read_manifest(directory: str | Path) -> Manifest:
    """Read and validate ``directory/manifest.json``.

    Raises
    ------
    IndexNotFoundError
        If the directory or its manifest does not exist.
    IndexMismatchError
        If the manifest is not valid JSON or lacks required fields.

    Examples
    --------
    >>> read_manifest("/no/such/index")
    Traceback (most recent call last):
    ...
    graphrag_integrations.errors.IndexNotFoundError: no index at /no/such/index: \
/no/such/index/manifest.json does not exist
    """
    directory = Path(directory)
    path = directory / MANIFEST_NAME
    if not path.is_file():
        raise IndexNotFoundError(f"no index at {directory}: {path} does not exist")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise IndexMismatchError(f"{path} is not valid JSON: {exc}") from exc
    return Manifest.from_dict(data, source=str(path))


def check_manifest(
    manifest: Manifest,
    *,
    method: str,
    embedding_model: str | None = None,
    dimension: int | None = None,
    supported_format_version: int = FORMAT_VERSION,
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

    Raises
    ------
    IndexMismatchError
        With "expected ... found ..." for the first field that differs.

    Examples
    --------
    >>> m = Manifest(method="dense", models={"embedding": "a"}, embedding_dimension=3)
    >>> check_manifest(m, method="dense", embedding_model="b")
    Traceback (most recent call last):
    ...
    graphrag_integrations.errors.IndexMismatchError: embedding model mismatch: expected 'b', \
found 'a' (the index was built with another model; load it with the same model or rebuild it)
    """
    if manifest.format_version > supported_format_version:
        raise IndexMismatchError(
            f"index format version {manifest.format_version} is newer than supported "
            f"{supported_format_version} (written by graphrag-integrations "
            f"{manifest.package_version}, this is {_package_version()}); upgrade the package"
        )
    if manifest.method != method:
        raise IndexMismatchError(
            f"method mismatch: expected {method!r}, found {manifest.method!r} "
            f"(load it with the class for {manifest.method!r})"
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


@contextlib.contextmanager
def atomic_directory(path: str | Path) -> Iterator[Path]:
    """Build a directory next to ``path`` and swap it in only if the block succeeds.

    Yields an empty temporary sibling directory; write the whole index into it. When the
    ``with`` block ends normally its files are ``fsync``-ed and it replaces ``path`` (an
    existing directory is moved aside first and deleted after the swap; if the swap fails it
    is moved back). When the block raises, the temporary directory is deleted and ``path``
    keeps its old contents. Should the process die between the two renames of the swap, the
    previous index survives in a ``.NAME.old-*`` sibling directory.

    Raises
    ------
    NotADirectoryError
        If ``path`` exists and is not a directory.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "index"
    >>> with atomic_directory(target) as tmp:
    ...     _ = (tmp / "data.txt").write_text("new")
    >>> (target / "data.txt").read_text()
    'new'
    """
    target = Path(path)
    if target.exists() and not target.is_dir():
        raise NotADirectoryError(f"cannot write an index to {target}: it is not a directory")
    target.parent.mkdir(parents=True, exist_ok=True)
    mode = _default_mode(target, 0o777)
    tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.tmp-"))
    try:
        os.chmod(tmp, mode)
        yield tmp
        _fsync_tree(tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    backup: Path | None = None
    if target.exists():
        backup = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.old-"))
        os.rmdir(backup)
        os.replace(target, backup)
    try:
        os.replace(tmp, target)
    except BaseException:
        if backup is not None:
            os.replace(backup, target)
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _fsync_dir(target.parent)
    if backup is not None:
        shutil.rmtree(backup, ignore_errors=True)
    logger.debug("wrote index directory %s", target)
