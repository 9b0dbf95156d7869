"""A user's folder and damaged index files: what the data-safety cases write into the
folders they persist to (:func:`write_foreign_files`, :data:`DAMAGES`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path


def snapshot(folder: Path) -> dict[str, bytes]:
    """Relative POSIX path -> content of every file under ``folder`` (hidden ones too).

    Examples
    --------
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp())
    >>> _ = (d / "a.txt").write_text("x")
    >>> snapshot(d)
    {'a.txt': b'x'}
    """
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def write_foreign_files(folder: Path) -> dict[str, bytes]:
    """Fill ``folder`` with a user's files (a nested one too); returns their :func:`snapshot`.

    Examples
    --------
    >>> import tempfile
    >>> sorted(write_foreign_files(Path(tempfile.mkdtemp()) / "docs"))
    ['notes/todo.md', 'thesis.txt']
    """
    (folder / "notes").mkdir(parents=True, exist_ok=True)
    (folder / "thesis.txt").write_text("Years of work, not an index.", encoding="utf-8")
    (folder / "notes" / "todo.md").write_text("- back up the thesis", encoding="utf-8")
    return snapshot(folder)


def _zero_bytes(path: Path) -> bool:
    if path.stat().st_size == 0:
        return False
    path.write_bytes(b"")
    return True


def _flip_a_byte(path: Path) -> bool:
    data = bytearray(path.read_bytes())
    if not data:
        return False
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    return True


def _edit_text(path: Path) -> bool:
    """Change one word (a corpus word if there is one, else one letter) of a text file."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return False
    for word, replacement in (("Rome", "Nome"), ("Paris", "Parus"), ("Jazz", "Jizz")):
        if word in text:
            path.write_text(text.replace(word, replacement, 1), encoding="utf-8")
            return True
    letter = re.search(r"[A-Za-z]", text)
    if letter is None:
        return False
    i = letter.start()
    path.write_text(text[:i] + text[i].swapcase() + text[i + 1 :], encoding="utf-8")
    return True


#: Ways a persisted file gets damaged: each changes the file in place and says whether it
#: could (a zero-byte file cannot be emptied, a binary file has no text to edit).
DAMAGES: dict[str, Callable[[Path], bool]] = {
    "zero-byte": _zero_bytes,
    "flipped-byte": _flip_a_byte,
    "edited-text": _edit_text,
}
