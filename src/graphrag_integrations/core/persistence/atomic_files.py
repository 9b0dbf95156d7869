"""Crash-safe file writes: a temporary file in the same folder, ``fsync``, ``os.replace``."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any


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
