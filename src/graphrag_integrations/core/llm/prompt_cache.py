"""The key/value cache of the last prompt a local model read, kept for the next call.

KG-Translator asks several things of one prompt (entities, then relations, both directions),
and option scoring reads many continuations of one prompt: :class:`PromptCache` keeps the
one-row key/value cache of the last prompt (all but its last token) so those calls encode it
once, and a new prompt that starts with the same tokens (a fixed instruction before the
query) encodes only the tokens after the common prefix, on a copy of the kept cache cut to
that prefix. :func:`shared_prompt_rows` lays several continuations of one prompt out as one
batch whose rows share the prompt's columns, so that cache fits every row.

The model call itself is the caller's (``extend``), so this module needs only ``torch`` and a
cache with ``crop(n)`` and ``batch_repeat_interleave(n)`` (``transformers``' ``DynamicCache``).
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["PromptCache", "common_prefix", "shared_prompt_rows"]


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common prefix of two id sequences.

    Examples
    --------
    >>> common_prefix([1, 2, 3], [1, 2, 4, 5]), common_prefix([], [1])
    (2, 0)
    """
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class PromptCache:
    """The kept key/value cache of the last prompt head (see the module docstring).

    Examples
    --------
    >>> class ToyCache(list):  # a "key/value cache": the token ids read so far
    ...     def crop(self, n): del self[n:]
    ...     def batch_repeat_interleave(self, n): self[:] = [t for t in self for _ in range(n)]
    >>> read = []
    >>> def extend(tokens, past):  # the model reads ``tokens`` after ``past``
    ...     read.append(list(tokens))
    ...     return ToyCache([*(past or []), *tokens])
    >>> kept = PromptCache()
    >>> kept.copies([1, 2, 3], 1, extend), kept.copies([1, 2, 9], 2, extend)
    ([1, 2, 3], [1, 1, 2, 2, 9, 9])
    >>> read  # the second prompt read only the token after the common prefix
    [[1, 2, 3], [9]]
    """

    def __init__(self) -> None:
        self._kept: tuple[tuple[int, ...], Any] | None = None
        self._lock = threading.Lock()

    def clear(self) -> None:
        """Forget the kept prompt (the next call encodes its prompt from the start)."""
        with self._lock:
            self._kept = None

    def copies(
        self,
        head: Sequence[int],
        copies: int,
        extend: Callable[[Sequence[int], Any | None], Any],
    ) -> Any:
        """A fresh key/value cache of ``head`` with ``copies`` rows (the kept one untouched).

        Parameters
        ----------
        head : sequence of int
            The prompt's token ids but its last one.
        copies : int
            Rows of the returned cache.
        extend : callable
            ``extend(tokens, past)``: runs the model over ``tokens`` after the cache ``past``
            (``None``: from the start) and returns the cache of everything read.
        """
        with self._lock:
            kept = self._kept
            if kept is None or kept[0] != tuple(head):
                common = 0 if kept is None else common_prefix(kept[0], head)
                past = None
                if common:
                    assert kept is not None
                    past = copy.deepcopy(kept[1])
                    if common < len(kept[0]):  # negative: drop that many tokens
                        past.crop(common - len(kept[0]))
                if common < len(head):
                    past = extend(list(head[common:]), past)
                kept = (tuple(head), past)
                self._kept = kept
        cache = copy.deepcopy(kept[1])
        if copies > 1:
            cache.batch_repeat_interleave(copies)
        return cache


def shared_prompt_rows(head: Sequence[int], tails: Sequence[Sequence[int]], pad: int) -> Any:
    """``(input_ids, attention_mask)`` of rows ``head ++ padding ++ tail``: the shared prompt
    head in the same columns of every row, each tail (the prompt's last token and the row's
    prefix) right-aligned after left padding, so every row ends with a real token.

    Examples
    --------
    >>> ids, mask = shared_prompt_rows([5, 6], [[7], [7, 8, 9]], pad=0)
    >>> ids.tolist(), mask.tolist()
    ([[5, 6, 0, 0, 7], [5, 6, 7, 8, 9]], [[1, 1, 0, 0, 1], [1, 1, 1, 1, 1]])
    """
    import torch

    width = max(len(t) for t in tails)
    ids = torch.full((len(tails), len(head) + width), pad, dtype=torch.long)
    mask = torch.zeros_like(ids)
    ids[:, : len(head)] = torch.tensor(list(head), dtype=torch.long)
    mask[:, : len(head)] = 1
    for i, tail in enumerate(tails):
        ids[i, ids.shape[1] - len(tail) :] = torch.tensor(list(tail), dtype=torch.long)
        mask[i, ids.shape[1] - len(tail) :] = 1
    return ids, mask
