"""Writer locks on the ``.NAME.tmp-*`` / ``.NAME.old-*`` siblings of an index directory.

A writer holds an exclusive ``flock`` on its temporary directory (and on the backup it moves
aside) for as long as it lives; the kernel drops the lock when the process dies, so
:func:`clean_stale_siblings` can tell the leftovers of killed writers from the work of live
ones. Where ``flock`` is unavailable (Windows) a sibling counts as stale once it is older
than :data:`STALE_AFTER_SECONDS`.
"""

from __future__ import annotations

import logging
import os
import re
import secrets
import shutil
import tempfile
import time
from pathlib import Path

try:  # POSIX advisory locks mark the temporary directories of live writers
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

logger = logging.getLogger(__name__)

#: Where ``flock`` is unavailable, a ``.NAME.tmp-*``/``.NAME.old-*`` sibling older than this
#: is taken for the leftover of a dead writer.
STALE_AFTER_SECONDS = 3600.0


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
