"""Cutting sequences into batches: the one helper every batched read and write uses."""

from __future__ import annotations

import pytest

from graphrag_integrations.core.batching import batches, slices


@pytest.mark.parametrize(("length", "size"), [(0, 3), (1, 3), (6, 3), (7, 3), (5, 1), (3, 10)])
def test_batches_cover_the_items_in_order(length: int, size: int) -> None:
    items = [f"x{i}" for i in range(length)]
    got = list(batches(items, size))
    assert [x for batch in got for x in batch] == items
    assert all(len(batch) == size for batch in got[:-1])
    assert all(0 < len(batch) <= size for batch in got)
    assert all(type(batch) is list for batch in got)
    parts = list(slices(length, size))
    assert [items[part] for part in parts] == got
    assert len(got) == -(-length // size)


def test_batches_keep_the_sequence_type_and_refuse_a_size_below_one() -> None:
    assert list(batches("abcde", 2)) == ["ab", "cd", "e"]
    assert list(batches((1, 2, 3), 2)) == [(1, 2), (3,)]
    with pytest.raises(ValueError, match="batch size must be >= 1"):
        list(batches([1], 0))
