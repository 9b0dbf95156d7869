"""A deterministic, model-free embedder for tests, examples and the compliance suite.

Each lower-cased word is hashed (BLAKE2b, so stable across processes, unlike ``hash``) into one
of ``dimension`` buckets and the counts are L2-normalised. Texts sharing words therefore get a
positive cosine, texts sharing none get 0, which makes retrieval order predictable without a
model.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from graphrag_integrations.core.encoders.embeddings import FloatMatrix, normalize_rows

_WORD = re.compile(r"\w+")


class FakeEmbedder:
    """Hashing bag-of-words embedder (deterministic, L2-normalised); a core ``Embedder``.

    Parameters
    ----------
    dimension : int
        Number of hash buckets (the vector dimension).
    model_name : str, optional
        Recorded in index manifests; defaults to ``"fake-hashing-bow-<dimension>"``.

    Attributes
    ----------
    calls : list of list of str
        The texts of every :meth:`embed` call, in order.

    Examples
    --------
    >>> emb = FakeEmbedder()
    >>> vecs = emb.embed(["Paris in France", "Rome in Italy", "bananas"])
    >>> vecs.shape
    (3, 64)
    >>> round(float(vecs[0] @ vecs[1]), 4), float(vecs[0] @ vecs[2])  # one word of 3 shared, none
    (0.3333, 0.0)
    """

    def __init__(self, dimension: int = 64, *, model_name: str | None = None) -> None:
        if dimension < 1:
            raise ValueError("dimension must be >= 1")
        self._dimension = dimension
        self.model_name = model_name or f"fake-hashing-bow-{dimension}"
        self.calls: list[list[str]] = []

    @property
    def dimension(self) -> int:
        """The vector dimension."""
        return self._dimension

    def bucket(self, word: str) -> int:
        """The vector index ``word`` is counted in."""
        digest = hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest()
        return int.from_bytes(digest, "big") % self._dimension

    def embed(self, texts: Sequence[str], *, show_progress: bool = False) -> FloatMatrix:
        """One L2-normalised row per text (a text without words stays a zero row)."""
        self.calls.append(list(texts))
        out = np.zeros((len(texts), self._dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                out[row, self.bucket(word)] += 1.0
        return normalize_rows(out) if len(texts) else out

    def embed_query(self, text: str) -> FloatMatrix:
        """The :meth:`embed` row of one text."""
        row: FloatMatrix = self.embed([text])[0]
        return row
