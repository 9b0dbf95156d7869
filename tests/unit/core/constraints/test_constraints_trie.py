"""TokenTrie: prefix constraint on marisa-trie, checked against brute force."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphrag_integrations.core.constraints import TokenTrie
from graphrag_integrations.core.constraints.trie import (
    MAX_TOKEN_ID,
    check_token_ids,
    decode_ids,
    encode_ids,
)
from graphrag_integrations.errors import IndexMismatchError, IndexNotFoundError

EOS = 0
entries_strategy = st.lists(
    st.lists(st.integers(1, 6), min_size=1, max_size=6), min_size=0, max_size=12
)


def brute_allowed(entries: list[list[int]], prefix: list[int], eos: int) -> list[int]:
    found: set[int] = set()
    for entry in entries:
        if entry[: len(prefix)] == prefix:
            found.add(entry[len(prefix)] if len(entry) > len(prefix) else eos)
    return sorted(found)


@settings(max_examples=200, deadline=None)
@given(entries=entries_strategy, prefix=st.lists(st.integers(0, 7), max_size=7))
def test_allowed_matches_brute_force(entries: list[list[int]], prefix: list[int]) -> None:
    trie = TokenTrie(entries, eos_token_id=EOS)
    assert trie.allowed(prefix).tolist() == brute_allowed(entries, prefix, EOS)
    # every prefix of every entry is answered exactly, and entries are members
    for entry in entries:
        for cut in range(len(entry) + 1):
            assert trie.allowed(entry[:cut]).tolist() == brute_allowed(entries, entry[:cut], EOS)
        assert entry in trie


@settings(max_examples=100, deadline=None)
@given(
    entries=st.lists(
        st.lists(st.integers(0, 70_000), min_size=1, max_size=4), min_size=1, max_size=8
    ),
    eos=st.sampled_from([70_001, 55_296, 1_000_000]),
)
def test_large_ids_and_eos_order(entries: list[list[int]], eos: int) -> None:
    """Ids across the UTF-16 surrogate gap and an eos larger than the ids sort correctly."""
    entries = [[t for t in e if t != eos] or [1] for e in entries]
    trie = TokenTrie(entries, eos_token_id=eos)
    for entry in entries:
        for cut in range(len(entry) + 1):
            assert trie.allowed(entry[:cut]).tolist() == brute_allowed(entries, entry[:cut], eos)
    assert sorted(trie) == sorted({tuple(e) for e in entries})


def test_doc_example_and_membership() -> None:
    trie = TokenTrie([[5, 6], [5, 7, 8], [9], [5, 6]], eos_token_id=0)
    assert len(trie) == 3
    assert trie.allowed([]).tolist() == [5, 9]
    assert trie.allowed([5, 7]).tolist() == [8]
    assert trie.allowed([5, 7, 8, 1]).tolist() == []
    assert trie([5]).tolist() == [6, 7]
    assert (5, 6) in trie and [5] not in trie and "ab" not in trie and [-3] not in trie
    assert list(trie) == [(5, 6), (5, 7, 8), (9,)]


def test_entry_that_is_prefix_of_another_allows_eos_and_continuation() -> None:
    trie = TokenTrie([[3], [3, 4]], eos_token_id=10)
    assert trie.allowed([3]).tolist() == [4, 10]


def test_empty_trie_kills_every_beam() -> None:
    trie = TokenTrie([], eos_token_id=0)
    assert len(trie) == 0
    assert trie.allowed([]).size == 0
    assert trie.stats.nodes == 0


def test_bad_entries_are_refused() -> None:
    with pytest.raises(ValueError, match="contains eos"):
        TokenTrie([[1, 0, 2]], eos_token_id=0)
    with pytest.raises(ValueError, match="empty entry"):
        TokenTrie([[]], eos_token_id=0)
    with pytest.raises(ValueError, match="outside"):
        TokenTrie([[-1]], eos_token_id=0)
    with pytest.raises(ValueError, match="outside"):
        TokenTrie([[MAX_TOKEN_ID + 1]], eos_token_id=0)
    with pytest.raises(TypeError):
        TokenTrie([[1.5]], eos_token_id=0)  # type: ignore[list-item]
    assert TokenTrie([[]], eos_token_id=0, allow_empty_entries=True).allowed([]).tolist() == [0]


def test_negative_prefix_id_raises() -> None:
    trie = TokenTrie([[1]], eos_token_id=0)
    for bad in ([-1], [2, -5]):
        with pytest.raises(ValueError, match="outside"):
            trie.allowed(bad)


def test_encoding_round_trip_and_order() -> None:
    ids = [0, 1, 55_294, 55_295, 55_296, 57_343, 57_344, MAX_TOKEN_ID]
    assert decode_ids(encode_ids(ids)) == tuple(ids)
    codes = [encode_ids([i]) for i in ids]
    assert codes == sorted(codes)
    assert "\x00" not in encode_ids(ids)
    with pytest.raises(TypeError):
        check_token_ids([True])


def test_stats() -> None:
    trie = TokenTrie([[1, 2, 3], [1, 2, 4], [7]], eos_token_id=0)
    stats = trie.stats
    assert (stats.entries, stats.tokens, stats.max_length) == (3, 7, 3)
    # root, (1), (1,2), (1,2,3), (1,2,4), (7)
    assert stats.nodes == 6
    assert stats.size_bytes > 0


@pytest.mark.parametrize("mmap", [True, False])
def test_save_load_round_trip(tmp_path: Path, mmap: bool) -> None:
    entries = [[1, 2, 3], [1, 2, 4], [70_000, 5]]
    trie = TokenTrie(entries, eos_token_id=9)
    path = tmp_path / "sub" / "entities.trie"
    trie.save(path)
    assert [p.name for p in path.parent.iterdir()] == ["entities.trie"]  # no temp file left
    loaded = TokenTrie.load(path, mmap=mmap)
    assert loaded.eos_token_id == 9
    assert loaded.stats == trie.stats
    for prefix in ([], [1], [1, 2], [70_000], [70_000, 5], [3]):
        assert loaded.allowed(prefix).tolist() == trie.allowed(prefix).tolist()
    assert list(loaded) == list(trie)


def test_load_errors(tmp_path: Path) -> None:
    with pytest.raises(IndexNotFoundError):
        TokenTrie.load(tmp_path / "missing.trie")
    junk = tmp_path / "junk.trie"
    junk.write_bytes(b"not a trie at all")
    with pytest.raises(IndexMismatchError):
        TokenTrie.load(junk)
    import marisa_trie

    other = tmp_path / "other.trie"
    marisa_trie.BytesTrie([("m", b'{"format": "x"}')]).save(str(other))
    with pytest.raises(IndexMismatchError, match="format"):
        TokenTrie.load(other)


def test_constraints_import_is_torch_free() -> None:
    code = (
        "import sys; import graphrag_integrations.core.constraints as c; "
        "c.TokenTrie; c.SubstringIndex; "
        "print('torch' in sys.modules, 'transformers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
