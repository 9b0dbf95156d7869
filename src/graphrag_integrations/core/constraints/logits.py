"""A ``transformers.LogitsProcessor`` that keeps only the tokens an ``allowed_fn`` permits.

This module is the transformers integration of the constraints, so it imports ``torch`` and
``transformers`` when it is imported; ``graphrag_integrations.core.constraints`` resolves
:class:`ConstrainedLogitsProcessor` lazily, so building tries and indexes stays torch-free.

Per row (beam) of ``input_ids`` the processor:

1. slices the prompt off: ``generated = input_ids[b, prompt_length:]`` (a decoder-only LM sees
   the prompt in ``input_ids``; with left padding every row has the same prompt length);
2. if ``generated`` already holds ``eos`` the row is finished (generate pads it): only ``eos``
   is kept, nothing is recorded;
3. otherwise calls ``allowed_fn(generated)`` and sets every other score to ``-inf``;
4. if the allowed set is EMPTY the beam is dead: it is never "allow all". All scores become
   ``-inf`` except ``eos``, which gets the lowest finite value of the dtype, so the beam ends
   now, ranks below every live hypothesis in beam search, and greedy/sampling never see an
   all ``-inf`` row (which would give NaN probabilities). The row is recorded in
   :attr:`ConstrainedLogitsProcessor.dead_beams`; :meth:`ConstrainedLogitsProcessor.is_dead`
   tells the caller whether a returned sequence ended that way (KG-Translator then runs
   reverse translation).

Beam search caveat: when the constraint leaves fewer than ``2 * num_beams`` finite candidates,
transformers completes its top-k with masked (``-inf``) tokens, and such hypotheses can be
returned (transformers 5 reports them with the same clamped score as dead hypotheses, so the
score cannot tell them apart). They violate the constraint by construction;
:meth:`ConstrainedLogitsProcessor.verdict` replays ``allowed_fn`` along a returned sequence and
says ``"complete"``, ``"dead"``, ``"invalid"`` or ``"truncated"``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import torch
from transformers import LogitsProcessor

logger = logging.getLogger(__name__)

AllowedFn = Callable[[tuple[int, ...]], "Sequence[int] | npt.NDArray[np.integer[Any]]"]
"""``allowed_fn(generated_ids) -> ids`` allowed next; empty means the beam is dead."""


Verdict = Literal["complete", "dead", "invalid", "truncated"]
"""Classification of a returned sequence by :meth:`ConstrainedLogitsProcessor.verdict`."""


@dataclass(frozen=True)
class DeadBeam:
    """A row whose ``allowed_fn`` returned no id.

    Attributes
    ----------
    row : int
        Row of ``input_ids`` (batch * beam index) at that step.
    generated_ids : tuple of int
        The generated ids (prompt sliced off) that lead nowhere.
    """

    row: int
    generated_ids: tuple[int, ...]


class ConstrainedLogitsProcessor(LogitsProcessor):
    """Mask the scores so that generation follows ``allowed_fn``.

    Parameters
    ----------
    allowed_fn : callable
        ``allowed_fn(generated_ids: tuple[int, ...]) -> ids`` (a list, tuple or integer
        array), e.g. a :class:`~graphrag_integrations.core.constraints.trie.TokenTrie` or
        :class:`~graphrag_integrations.core.constraints.substring.SubstringIndex` instance.
    prompt_length : int
        Number of leading positions of ``input_ids`` that are prompt (``input_ids.shape[1]``
        of the tokenised, left-padded prompt batch).
    eos_token_id : int
        The terminator of the constraint and of generation.

    Attributes
    ----------
    dead_beams : list of DeadBeam
        Every dead row seen since construction or :meth:`reset`.

    Raises
    ------
    ValueError
        At call time, if ``prompt_length`` exceeds the sequence length or ``allowed_fn``
        returns an id outside the score vocabulary.

    Examples
    --------
    >>> import torch
    >>> from graphrag_integrations.core.constraints import TokenTrie
    >>> trie = TokenTrie([[3, 4], [5]], eos_token_id=0)
    >>> proc = ConstrainedLogitsProcessor(trie, prompt_length=2, eos_token_id=0)
    >>> out = proc(torch.tensor([[9, 9, 3], [9, 9, 7]]), torch.zeros(2, 8))
    >>> torch.isfinite(out).nonzero().tolist()  # row 0 may only go on with 4; row 1 is dead
    [[0, 4], [1, 0]]
    >>> proc.dead_beams
    [DeadBeam(row=1, generated_ids=(7,))]
    """

    def __init__(self, allowed_fn: AllowedFn, prompt_length: int, *, eos_token_id: int) -> None:
        if prompt_length < 0:
            raise ValueError(f"prompt_length must be >= 0, got {prompt_length}")
        self.allowed_fn = allowed_fn
        self.prompt_length = int(prompt_length)
        self.eos_token_id = int(eos_token_id)
        self.dead_beams: list[DeadBeam] = []
        self._dead: set[tuple[int, ...]] = set()

    def reset(self) -> None:
        """Forget the recorded dead beams (reuse the processor for another ``generate``)."""
        self.dead_beams.clear()
        self._dead.clear()

    def is_dead(self, generated_ids: Sequence[int]) -> bool:
        """Whether ``generated_ids`` (prompt sliced off) ended because its beam died.

        Everything from the first ``eos`` on is ignored, so a full returned sequence can be
        passed as is.
        """
        ids = [int(t) for t in generated_ids]
        if self.eos_token_id in ids:
            ids = ids[: ids.index(self.eos_token_id)]
        return tuple(ids) in self._dead

    def verdict(self, generated_ids: Sequence[int]) -> Verdict:
        """Replay ``allowed_fn`` along a returned sequence (prompt sliced off) and classify it.

        Returns
        -------
        {"complete", "dead", "invalid", "truncated"}
            ``"invalid"``: some token (the closing ``eos`` included) was not allowed - beam
            search filler, see the module notes; ``"dead"``: it reached a prefix with no
            allowed continuation (the processor then forced ``eos``); ``"complete"``: it ends
            with an allowed ``eos``, or has no ``eos`` but ``eos`` is allowed after it (beam
            search drops the final ``eos`` of its longest hypothesis); ``"truncated"``: cut by
            ``max_new_tokens`` inside an entry. Anything after the first ``eos`` is padding.
        """
        ids = [int(t) for t in generated_ids]
        if self.eos_token_id in ids:
            ids = ids[: ids.index(self.eos_token_id) + 1]
        for step in range(len(ids) + 1):
            if step and ids[step - 1] == self.eos_token_id:
                return "complete"
            allowed = np.asarray(self.allowed_fn(tuple(ids[:step])), dtype=np.int64)
            if allowed.size == 0:
                return "dead"
            if step == len(ids):
                return "complete" if np.any(allowed == self.eos_token_id) else "truncated"
            if not np.any(allowed == ids[step]):
                return "invalid"
        raise AssertionError("unreachable")  # pragma: no cover

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if self.prompt_length > input_ids.shape[1]:
            raise ValueError(
                f"prompt_length={self.prompt_length} exceeds the sequence length "
                f"{input_ids.shape[1]}"
            )
        vocab = scores.shape[-1]
        eos = self.eos_token_id
        rows: list[npt.NDArray[np.int64]] = []
        cols: list[npt.NDArray[np.int64]] = []
        dead_rows: list[int] = []
        seen: dict[tuple[int, ...], npt.NDArray[np.int64]] = {}
        for row, generated in enumerate(input_ids[:, self.prompt_length :].tolist()):
            if eos in generated:  # finished row, generate() pads it
                ids = np.array([eos], dtype=np.int64)
            else:
                key = tuple(generated)
                cached = seen.get(key)
                if cached is None:
                    cached = np.asarray(self.allowed_fn(key), dtype=np.int64).reshape(-1)
                    seen[key] = cached
                ids = cached
                if ids.size == 0:
                    dead_rows.append(row)
                    self.dead_beams.append(DeadBeam(row, key))
                    self._dead.add(key)
                    logger.debug("dead beam: row %d, generated %s", row, key)
                    continue
            rows.append(np.full(ids.size, row, dtype=np.int64))
            cols.append(ids)
        out = torch.full_like(scores, float("-inf"))
        if cols:
            col_idx = np.concatenate(cols)
            if col_idx.min() < 0 or col_idx.max() >= vocab:
                bad = col_idx[(col_idx < 0) | (col_idx >= vocab)][0]
                raise ValueError(
                    f"allowed_fn returned id {bad} outside the vocabulary [0, {vocab})"
                )
            r = torch.from_numpy(np.concatenate(rows)).to(scores.device)
            c = torch.from_numpy(col_idx).to(scores.device)
            out[r, c] = scores[r, c]
        if dead_rows:
            if not 0 <= eos < vocab:
                raise ValueError(f"eos_token_id {eos} outside the vocabulary [0, {vocab})")
            out[torch.tensor(dead_rows, device=scores.device), eos] = torch.finfo(scores.dtype).min
        return out  # type: ignore[return-value]
