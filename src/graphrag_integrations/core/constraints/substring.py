"""Substring constraint: the generated ids must occur contiguously inside some entry.

The relation constraint of KG-Translator (paper eq. 6): a translated relation is a span of
a hyperrelation. :class:`SubstringIndex` answers, for a generated ``prefix``, the exact set

    ``{t : prefix + [t] occurs contiguously in entry + [terminator] for some entry}``

so the terminator is allowed exactly when ``prefix`` is a suffix of an entry (the match
reaches the entry's end) and a match can never run across two entries. An empty result means
the beam is dead.

Two backends give the same answers (property-tested against brute force):

``"fm"``
    An integer-alphabet FM-index (:class:`~graphrag_integrations.core.constraints.fm_index.
    FMIndex`): linear size, builds in milliseconds for a few hyperrelations and in about a
    second for a million tokens (needs the ``fm-index`` extra).
``"suffix"``
    A :class:`~graphrag_integrations.core.constraints.trie.TokenTrie` over every suffix of
    every entry (a suffix trie on marisa-trie). About 1.3-2.6x faster cold lookups, equal on
    decoding walks, but its build time and size grow with the sum of squared entry lengths
    (already 25x slower to build than the FM-index for 100 hyperrelations).
``"auto"`` (default)
    ``"fm"`` when its libraries are installed, else ``"suffix"`` with a logged warning.
    ``docs/reference/constraints.md`` holds the measurements behind this choice.
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Iterable, Sequence
from typing import Literal

import numpy as np

from graphrag_integrations.core.constraints.fm_index import FMIndex
from graphrag_integrations.core.constraints.trie import TokenIds, TokenTrie, check_token_ids

logger = logging.getLogger(__name__)

Backend = Literal["auto", "suffix", "fm"]


def fm_index_available() -> bool:
    """Whether the FM-index libraries (``pydivsufsort``, ``wavelet_matrix``) are installed."""
    return all(importlib.util.find_spec(m) is not None for m in ("pydivsufsort", "wavelet_matrix"))


class SubstringIndex:
    """Allowed-next-token sets under the "is a substring of an entry" constraint.

    Parameters
    ----------
    sequences : iterable of sequences of int
        The entries (e.g. tokenised hyperrelations); empty entries are allowed and only
        contribute the terminator at the start.
    terminator_id : int
        Id closing every entry (usually the LM's eos id); must not occur inside an entry.
    backend : {"auto", "suffix", "fm"}
        See the module docstring.

    Raises
    ------
    ValueError
        On a bad id, an entry holding the terminator or an unknown backend.
    ImportError
        If ``backend="fm"`` and the ``fm-index`` extra is not installed.

    Examples
    --------
    >>> index = SubstringIndex([[4, 5, 6], [5, 4]], terminator_id=0, backend="suffix")
    >>> index.allowed([5]).tolist()
    [4, 6]
    >>> index.allowed([4]).tolist()  # "4" ends the entry [5, 4], and is followed by 5 in [4, 5, 6]
    [0, 5]
    >>> index.allowed([6, 5]).tolist()  # not a substring: dead beam
    []
    >>> [5, 6] in index
    True
    """

    def __init__(
        self,
        sequences: Iterable[Sequence[int]],
        *,
        terminator_id: int,
        backend: Backend = "auto",
    ) -> None:
        (term,) = check_token_ids([terminator_id], what="terminator_id")
        self.terminator_id = term
        entries: list[tuple[int, ...]] = []
        for raw in sequences:
            entry = check_token_ids(raw, what="entry")
            if term in entry:
                raise ValueError(f"entry {entry!r} contains terminator_id {term}")
            entries.append(entry)
        self.num_entries = len(entries)
        self.num_tokens = sum(len(e) for e in entries)
        self.backend: Literal["suffix", "fm"] = self._choose_backend(backend)
        self._fm: FMIndex | None = None
        self._trie: TokenTrie | None = None
        if self.backend == "fm":
            self._fm = FMIndex(entries, terminator_id=term)
        else:
            suffixes = {entry[i:] for entry in entries for i in range(len(entry) + 1)}
            self._trie = TokenTrie(suffixes, eos_token_id=term, allow_empty_entries=True)

    def _choose_backend(self, backend: str) -> Literal["suffix", "fm"]:
        if backend == "suffix":
            return "suffix"
        if backend == "fm":
            return "fm"
        if backend != "auto":
            raise ValueError(f"backend must be 'auto', 'suffix' or 'fm', got {backend!r}")
        if fm_index_available():
            return "fm"
        logger.warning(
            "SubstringIndex over %d tokens: the FM-index extra (pydivsufsort, wavelet-matrix) "
            "is not installed, building the suffix trie instead (size quadratic in entry length)",
            self.num_tokens,
        )
        return "suffix"

    def allowed(self, prefix: Sequence[int]) -> TokenIds:
        """Sorted ids ``t`` such that ``prefix + [t]`` occurs in some ``entry + [terminator]``.

        Empty when ``prefix`` itself occurs nowhere (or holds the terminator): a dead beam.
        """
        if self._fm is not None:
            return self._fm.next_ids(prefix)
        assert self._trie is not None
        return self._trie.allowed(prefix)

    def __call__(self, prefix: Sequence[int]) -> TokenIds:
        """Same as :meth:`allowed`, so the index is itself an ``allowed_fn``."""
        return self.allowed(prefix)

    def __contains__(self, span: object) -> bool:
        """Whether ``span`` occurs contiguously in some entry (the empty span always does)."""
        if not isinstance(span, Sequence) or isinstance(span, (str, bytes)):
            return False
        try:
            ids = check_token_ids(span)
        except (TypeError, ValueError):
            return False
        if not ids:
            return self.num_entries > 0
        return bool(self.allowed(ids).size)

    def __len__(self) -> int:
        return self.num_entries

    def __repr__(self) -> str:
        return (
            f"SubstringIndex(entries={self.num_entries}, tokens={self.num_tokens}, "
            f"backend={self.backend!r}, terminator_id={self.terminator_id})"
        )


def brute_force_allowed(
    sequences: Iterable[Sequence[int]], prefix: Sequence[int], terminator_id: int
) -> TokenIds:
    """Reference answer of :meth:`SubstringIndex.allowed` by scanning every entry.

    ``O(total tokens * len(prefix))``; used by the tests and the benchmark as the oracle.

    Examples
    --------
    >>> brute_force_allowed([[4, 5, 6], [5, 4]], [5], 0).tolist()
    [4, 6]
    """
    pattern = list(prefix)
    found: set[int] = set()
    for entry in sequences:
        text = [*entry, terminator_id]
        for start in range(len(text) - len(pattern)):
            if text[start : start + len(pattern)] == pattern:
                found.add(text[start + len(pattern)])
    return np.array(sorted(found), dtype=np.int64)
