"""Integer-alphabet FM-index answering "which symbols can extend this match to the right".

Build (``n`` = total tokens, ``s`` = distinct symbols):

1. Compact the alphabet: the distinct entry ids become codes ``2 .. s+1``, the terminator
   code ``1``, the end marker ``$`` code ``0`` (so the wavelet matrix needs only
   ``ceil(log2(s+2))`` levels whatever the vocabulary size).
2. Text ``T`` = ``entry_1 + [term] + entry_2 + [term] + ...``; the index is built over the
   REVERSED text ``R = reverse(T) + [$]``: suffix array by ``pydivsufsort`` on the ``int32``
   codes (prefix doubling in numpy for short texts, see :data:`DIVSUFSORT_MIN_LENGTH`),
   ``BWT[i] = R[SA[i] - 1]``, ``C[c]`` = number of codes ``< c``, and a
   ``wavelet_matrix.WaveletMatrix`` over the BWT for ``rank``.

Query: a pattern ``P`` occurs in ``T`` followed by ``c`` iff ``reverse(P)`` occurs in ``R``
preceded by ``c``. Backward search for ``reverse(P)`` consumes ``P`` from its FIRST symbol, so
each generated token is one backward step ``[l, r) -> [C[c] + rank(c, l), C[c] + rank(c, r))``
(intervals of prefixes are cached, so decoding pays one step per token), and the symbols that
may follow ``P`` are the distinct values of ``BWT[l:r]``: a wavelet-matrix ``range_list``
query, ``O(k log s)`` for ``k`` results.

The terminator closes every entry, so a match cannot run on into the next entry: a pattern
that contains the terminator is never extended (the caller rejects it) and the terminator
is reported exactly when the match reaches the end of an entry.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

_END = 0
_TERM = 1
_FIRST = 2
_MISSING = (
    "the FM-index backend needs pydivsufsort and wavelet-matrix: "
    "pip install pydivsufsort wavelet-matrix"
)

DIVSUFSORT_MIN_LENGTH = 8192
"""Texts at least this long get their suffix array from ``pydivsufsort``; shorter ones from
:func:`suffix_array_doubling`, because libdivsufsort's OpenMP start-up costs ~6-9 ms of CPU
per call whatever the length (measured: 200 symbols 0.17 ms by doubling vs 4.9 ms, 8k symbols
3.9 ms vs 5.2 ms, 20k symbols 14.8 ms vs 5.7 ms; see docs/reference/constraints.md)."""


def suffix_array_doubling(text: npt.NDArray[np.integer[Any]]) -> npt.NDArray[np.int64]:
    """Suffix array by prefix doubling with ``numpy.lexsort`` (``O(n log^2 n)``).

    Round ``k`` sorts suffixes by (rank of the first ``k`` symbols, rank of the next ``k``),
    a missing second half ranking lowest, until all ranks are distinct.

    Examples
    --------
    >>> suffix_array_doubling(np.array([3, 1, 2, 3, 1, 2, 0])).tolist()
    [6, 4, 1, 5, 2, 3, 0]
    """
    n = len(text)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    rank = np.asarray(text, dtype=np.int64)
    width = 1
    while True:
        second = np.full(n, -1, dtype=np.int64)
        second[: n - width] = rank[width:]
        order = np.lexsort((second, rank))
        first_sorted, second_sorted = rank[order], second[order]
        new_rank = np.zeros(n, dtype=np.int64)
        changed = (first_sorted[1:] != first_sorted[:-1]) | (
            second_sorted[1:] != second_sorted[:-1]
        )
        np.cumsum(changed, out=new_rank[1:])
        rank = np.empty(n, dtype=np.int64)
        rank[order] = new_rank
        if new_rank[-1] == n - 1 or width >= n:
            return order.astype(np.int64)
        width *= 2


def build_suffix_array(text: npt.NDArray[np.integer[Any]]) -> npt.NDArray[np.int64]:
    """Suffix array of an integer text: ``pydivsufsort`` for long texts, doubling otherwise.

    Examples
    --------
    >>> build_suffix_array(np.array([2, 1, 2, 1, 0])).tolist()
    [4, 3, 1, 2, 0]
    """
    if len(text) < DIVSUFSORT_MIN_LENGTH:
        return suffix_array_doubling(text)
    try:
        import pydivsufsort
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError(_MISSING) from exc
    return np.asarray(pydivsufsort.divsufsort(text), dtype=np.int64)


class FMIndex:
    """FM-index over the reversed concatenation of integer sequences.

    Parameters
    ----------
    sequences : sequence of sequences of int
        Validated entries (non-negative ids, no terminator inside).
    terminator_id : int
        Id reported where an entry ends.
    cache_size : int
        Prefix intervals kept in an LRU cache (0 disables it).

    Raises
    ------
    ImportError
        If ``pydivsufsort`` or ``wavelet-matrix`` (the ``fm-index`` extra) is missing.

    Examples
    --------
    >>> fm = FMIndex([(4, 5, 6), (5, 4)], terminator_id=0)
    >>> fm.next_ids((5,)).tolist()
    [4, 6]
    >>> fm.next_ids((4,)).tolist()
    [0, 5]
    """

    def __init__(
        self,
        sequences: Sequence[Sequence[int]],
        *,
        terminator_id: int,
        cache_size: int = 65536,
    ) -> None:
        try:
            from wavelet_matrix import WaveletMatrix
        except ImportError as exc:  # pragma: no cover - exercised only without the extra
            raise ImportError(_MISSING) from exc
        self.terminator_id = terminator_id
        lengths = np.fromiter((len(s) for s in sequences), dtype=np.int64, count=len(sequences))
        flat = np.fromiter(
            (t for s in sequences for t in s), dtype=np.int64, count=int(lengths.sum())
        )
        alphabet = np.unique(flat)
        # code -> id; codes 0 ($) and 1 (terminator) first
        self._decode: npt.NDArray[np.int64] = np.concatenate(
            [np.array([-1, terminator_id], dtype=np.int64), alphabet]
        )
        self._encode: dict[int, int] = {int(t): i + _FIRST for i, t in enumerate(alphabet)}
        codes = (np.searchsorted(alphabet, flat) + _FIRST).astype(np.int32)
        # T = e1 term e2 term ...: insert a terminator after each entry
        ends = np.cumsum(lengths)
        text = np.insert(codes, ends, _TERM)
        reversed_text = np.concatenate([text[::-1], np.array([_END], dtype=np.int32)])
        suffix_array = build_suffix_array(reversed_text)
        bwt = reversed_text[suffix_array - 1]  # index -1 wraps to the end marker
        counts = np.bincount(reversed_text, minlength=len(self._decode))
        self._c: list[int] = np.concatenate([[0], np.cumsum(counts)[:-1]]).tolist()
        self._size = len(reversed_text)
        self._wm: Any = WaveletMatrix(bwt)
        self._interval: Callable[[tuple[int, ...]], tuple[int, int]]
        if cache_size > 0:
            self._interval = functools.lru_cache(maxsize=cache_size)(self._interval_uncached)
        else:
            self._interval = self._interval_uncached
        root = np.concatenate([[terminator_id], alphabet]) if len(sequences) else np.zeros(0)
        self._root: npt.NDArray[np.int64] = np.unique(root.astype(np.int64))

    def encode(self, prefix: Sequence[int]) -> tuple[int, ...] | None:
        """Codes of ``prefix``, or ``None`` if it holds an id absent from every entry."""
        get = self._encode.get
        codes = tuple(get(t, -1) for t in prefix)
        return None if -1 in codes else codes

    def _interval_uncached(self, codes: tuple[int, ...]) -> tuple[int, int]:
        if not codes:
            return 0, self._size
        low, high = self._interval(codes[:-1])
        if low >= high:
            return low, high
        code = codes[-1]
        base = self._c[code]
        return base + self._wm.rank(code, low), base + self._wm.rank(code, high)

    def count(self, prefix: Sequence[int]) -> int:
        """Occurrences of ``prefix`` in the entries (the empty prefix: every position)."""
        codes = self.encode(prefix)
        if codes is None:
            return 0
        low, high = self._interval(codes)
        return high - low

    def next_ids(self, prefix: Sequence[int]) -> npt.NDArray[np.int64]:
        """Sorted distinct ids that follow an occurrence of ``prefix`` (terminator included)."""
        if not prefix:
            return self._root
        codes = self.encode(prefix)
        if codes is None:
            return self._root[:0]
        low, high = self._interval(codes)
        if low >= high:
            return self._root[:0]
        found = [item["value"] for item in self._wm.range_list(low, high)]
        ids = self._decode[found]
        if found[0] == _TERM and len(found) > 1:
            ids.sort()
        return ids
