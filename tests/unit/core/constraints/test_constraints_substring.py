"""SubstringIndex: every backend against brute force, backend choice, errors."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphrag_integrations.core.constraints import SubstringIndex
from graphrag_integrations.core.constraints import fm_index as fm_index_module
from graphrag_integrations.core.constraints import substring as substring_module
from graphrag_integrations.core.constraints.fm_index import (
    FMIndex,
    build_suffix_array,
    suffix_array_doubling,
)
from graphrag_integrations.core.constraints.substring import brute_force_allowed

TERM = 0
# "fm-divsufsort" = the FM-index with its suffix array from pydivsufsort even for tiny texts
BACKENDS = ("suffix", "fm", "fm-divsufsort")
entries_strategy = st.lists(st.lists(st.integers(1, 5), max_size=8), max_size=8)


def make_index(entries: list[list[int]], backend: str, term: int = TERM) -> SubstringIndex:
    if backend == "fm-divsufsort":
        old = fm_index_module.DIVSUFSORT_MIN_LENGTH
        fm_index_module.DIVSUFSORT_MIN_LENGTH = 0
        try:
            return SubstringIndex(entries, terminator_id=term, backend="fm")
        finally:
            fm_index_module.DIVSUFSORT_MIN_LENGTH = old
    return SubstringIndex(entries, terminator_id=term, backend=backend)  # type: ignore[arg-type]


def all_substrings(entries: list[list[int]]) -> set[tuple[int, ...]]:
    return {tuple(e[i:j]) for e in entries for i in range(len(e) + 1) for j in range(i, len(e) + 1)}


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=60, deadline=None)
@given(entries=entries_strategy, probe=st.lists(st.integers(0, 6), max_size=6))
def test_allowed_matches_brute_force(
    backend: str, entries: list[list[int]], probe: list[int]
) -> None:
    index = make_index(entries, backend)
    # a random probe (may hold the terminator or unseen ids) and every real substring
    for prefix in [probe, *sorted(all_substrings(entries))]:
        expected = brute_force_allowed(entries, prefix, TERM).tolist()
        assert index.allowed(list(prefix)).tolist() == expected, (prefix, entries)


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=60, deadline=None)
@given(
    entries=st.lists(st.lists(st.integers(0, 200_000), max_size=5), min_size=1, max_size=5),
    term=st.sampled_from([0, 100_000, 300_000]),
)
def test_large_sparse_alphabet(backend: str, entries: list[list[int]], term: int) -> None:
    entries = [[t for t in e if t != term] for e in entries]
    index = make_index(entries, backend, term)
    for prefix in sorted(all_substrings(entries)):
        expected = brute_force_allowed(entries, prefix, term).tolist()
        assert index.allowed(prefix).tolist() == expected


@pytest.mark.parametrize("backend", BACKENDS)
def test_terminator_and_separation(backend: str) -> None:
    index = make_index([[4, 5, 6], [5, 4]], backend)
    assert index.allowed([]).tolist() == [0, 4, 5, 6]
    assert index.allowed([5]).tolist() == [4, 6]
    assert index.allowed([4]).tolist() == [0, 5]
    assert index.allowed([6]).tolist() == [0]
    # no match runs from one entry into the next, across or through the terminator
    assert index.allowed([6, 5]).tolist() == []
    assert index.allowed([6, 0]).tolist() == []
    assert index.allowed([6, 0, 5]).tolist() == []
    assert index.allowed([9]).tolist() == []
    assert [5, 6] in index and [6, 5] not in index and [] in index and "x" not in index
    assert len(index) == 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_empty_and_degenerate_collections(backend: str) -> None:
    empty = make_index([], backend)
    assert empty.allowed([]).size == 0 and empty.allowed([3]).size == 0
    assert [] not in empty
    blank = make_index([[]], backend)
    assert blank.allowed([]).tolist() == [0]
    assert blank.allowed([1]).tolist() == []


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="terminator"):
        SubstringIndex([[1, 0]], terminator_id=0)
    with pytest.raises(ValueError, match="backend"):
        SubstringIndex([[1]], terminator_id=0, backend="bogus")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="outside"):
        SubstringIndex([[-2]], terminator_id=0)


def test_auto_backend_is_the_fm_index(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger=substring_module.__name__):
        index = SubstringIndex([[1, 2, 3]], terminator_id=0)
    assert index.backend == "fm" and caplog.text == ""
    assert SubstringIndex([[1, 2, 3]], terminator_id=0, backend="suffix").backend == "suffix"


def test_auto_without_fm_extra_logs_and_uses_suffix(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(substring_module, "fm_index_available", lambda: False)
    with caplog.at_level(logging.WARNING, logger=substring_module.__name__):
        index = SubstringIndex([[1, 2, 3]], terminator_id=0)
    assert index.backend == "suffix"
    assert "not installed" in caplog.text
    assert index.allowed([2]).tolist() == [3]


def test_fm_index_counts_and_cache() -> None:
    entries = [(1, 2, 1, 2), (2, 1)]
    fm = FMIndex(entries, terminator_id=0, cache_size=8)
    assert fm.count((1, 2)) == 2 and fm.count((2, 1)) == 2 and fm.count((2, 2)) == 0
    assert fm.count(()) == 8 + 1  # six tokens and two terminators, plus the end marker
    assert fm.count((7,)) == 0
    uncached = FMIndex(entries, terminator_id=0, cache_size=0)
    for prefix in [(1,), (1, 2), (1, 2, 1), (2,), (2, 1)]:
        assert fm.next_ids(prefix).tolist() == uncached.next_ids(prefix).tolist()
        assert fm.next_ids(prefix).tolist() == brute_force_allowed(entries, prefix, 0).tolist()


def test_backends_agree_on_a_larger_random_collection() -> None:
    rng = np.random.default_rng(7)
    entries = [rng.integers(1, 40, size=rng.integers(1, 25)).tolist() for _ in range(60)]
    suffix = SubstringIndex(entries, terminator_id=0, backend="suffix")
    fm = SubstringIndex(entries, terminator_id=0, backend="fm")
    for entry in entries[:20]:
        for i in range(len(entry)):
            for j in range(i, min(len(entry), i + 6) + 1):
                span = entry[i:j]
                assert suffix.allowed(span).tolist() == fm.allowed(span).tolist()


@settings(max_examples=40, deadline=None)
@given(text=st.lists(st.integers(0, 4), max_size=40), big=st.booleans())
def test_suffix_array_builders_match_sorting(text: list[int], big: bool) -> None:
    arr = np.array([t * 70_000 if big else t for t in text], dtype=np.int32)
    expected = sorted(range(len(arr)), key=lambda i: arr[i:].tolist())
    assert suffix_array_doubling(arr).tolist() == expected
    if len(arr):
        import pydivsufsort

        assert np.asarray(pydivsufsort.divsufsort(arr)).tolist() == expected


def test_build_suffix_array_switches_at_the_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    text = np.array([3, 1, 2, 3, 1, 2, 0], dtype=np.int32)
    expected = [6, 4, 1, 5, 2, 3, 0]
    calls: list[int] = []
    import pydivsufsort

    real = pydivsufsort.divsufsort

    def counting(text: np.ndarray) -> np.ndarray:
        calls.append(len(text))
        return real(text)

    monkeypatch.setattr(pydivsufsort, "divsufsort", counting)
    assert build_suffix_array(text).tolist() == expected and calls == []
    monkeypatch.setattr(fm_index_module, "DIVSUFSORT_MIN_LENGTH", 7)
    assert build_suffix_array(text).tolist() == expected and calls == [7]
