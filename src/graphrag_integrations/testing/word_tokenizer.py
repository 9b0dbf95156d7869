"""A model-free tokenizer for tests and examples: :class:`WordTokenizer`."""

from __future__ import annotations

import re

__all__ = ["WordTokenizer"]

_WORD = re.compile(r"\S+")


class WordTokenizer:
    """An offset tokenizer (:class:`~graphrag_integrations.core.text.chunking.OffsetTokenizer`)
    whose tokens are the runs of non-space characters: chunk sizes in words, no model.

    Examples
    --------
    >>> WordTokenizer().token_offsets("One  two.")
    [(0, 3), (5, 9)]
    """

    name = "words"

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        """``(start, end)`` character offsets of each word of ``text``."""
        return [m.span() for m in _WORD.finditer(text)]
