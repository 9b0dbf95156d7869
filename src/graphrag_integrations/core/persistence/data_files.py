"""The data files indexes share: passages (``passages.json``) and vector matrices (``.npy``)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from graphrag_integrations.core.persistence.atomic_files import atomic_write_json
from graphrag_integrations.core.types import Passage
from graphrag_integrations.errors import CorruptIndexError

if TYPE_CHECKING:
    from graphrag_integrations.core.encoders.embeddings import FloatMatrix

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
