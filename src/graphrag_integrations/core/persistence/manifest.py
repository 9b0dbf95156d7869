"""The ``manifest.json`` of an index directory: what it holds, how it was built, checksums.

:class:`Manifest` records which method wrote an index, with which parameters and models, its
identity (``index_id``), its build timings and the SHA-256 of every file written
(``files``); :func:`write_manifest` / :func:`read_manifest` store and validate it and
:func:`verify_files` checks the files it lists.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath
from typing import Any

from graphrag_integrations.core.persistence.atomic_files import atomic_write_json
from graphrag_integrations.core.persistence.sibling_locks import clean_stale_siblings
from graphrag_integrations.errors import CorruptIndexError, IndexMismatchError, IndexNotFoundError

logger = logging.getLogger(__name__)

#: Name of the manifest file inside every index directory.
MANIFEST_NAME = "manifest.json"
#: Newest manifest/index layout this version of the package reads and writes.
FORMAT_VERSION = 1
#: Manifest key of the file -> SHA-256 map (optional, so format 1 readers ignore it).
FILES_KEY = "files"
#: Where ``flock`` is unavailable, a ``.NAME.tmp-*``/``.NAME.old-*`` sibling older than this


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
    index_id : str
        The identity of the index (32 hex digits): made when the index is built, kept through
        ``load``, so a re-``persist`` of the same index (a loaded one too) may replace its
        folder while another index of the same method may not (see
        :func:`~graphrag_integrations.core.persistence.atomic_directory`). Empty in manifests
        written before it existed, and for writers without an identity.
    timings : dict of str to float
        Seconds spent building the index, by stage (the index's ``timings``); empty when the
        index records none or the manifest predates them.
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
    index_id: str = ""
    timings: dict[str, float] = field(default_factory=dict)
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
                "index_id": self.index_id,
                "timings": {k: v for k, v in self.timings.items() if math.isfinite(v)},
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
        index_id = data.get("index_id", "")
        if not isinstance(index_id, str):
            raise IndexMismatchError(
                f"{source}: 'index_id' must be a string, found {_kind(index_id)} {index_id!r}"
            )
        timings = data.get("timings", {})
        if not isinstance(timings, Mapping) or not all(
            isinstance(k, str) and isinstance(v, (int, float)) and not isinstance(v, bool)
            for k, v in timings.items()
        ):
            raise IndexMismatchError(
                f"{source}: 'timings' must map stages to seconds, found {timings!r}"
            )
        known = {
            "index_id",
            "timings",
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
            index_id=index_id,
            timings={k: float(v) for k, v in timings.items()},
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
