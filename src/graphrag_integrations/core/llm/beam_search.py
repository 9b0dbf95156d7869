"""Batched beam search that stops computing a row once its hypotheses can no longer change.

``transformers``' beam search (``generate(num_beams=...)``) runs every row of a batch through
the model until the LAST row is done: a row whose finished hypotheses are settled (its
length-normalised best running beam can no longer beat its worst finished one, or, with
``early_stopping=True``, it holds ``num_beams`` finished hypotheses) is still computed,
step after step, and its results thrown away. With many rows of different difficulty - the
KG-Translator's relation search decodes one row per translated entity, 15-35 rows of 5 beams
whose relation spans end after 2 to 16 tokens - most of the work of the late steps is such
dead weight.

:func:`beam_search` is the same algorithm, step for step (top ``2 * num_beams`` candidates of
the accumulated log-probabilities, the best ``num_beams`` unfinished ones go on, candidates
ending in ``eos`` or at the length limit enter the row's finished set with their score
divided by ``generated_length ** length_penalty``, transformers' early-stopping heuristic and
stop rules), but a settled row leaves the batch: its key/value cache rows are dropped with
the beam reordering every step does anyway, and the model computes only the live rows. The
hypotheses and scores equal ``generate``'s (a parity test checks it against
``transformers`` on a real model, constrained and not, with and without early stopping);
what changes is the number of model rows computed.

A row counts as settled when nothing ``generate`` would still do can change its finished
set: the heuristic says no running beam can improve it, or early stopping holds and every
finished hypothesis scores above ``-1e9`` (``generate`` adds ``-1e9`` to the candidates of a
full row, which can then only displace a forced dead-beam hypothesis, scored near the dtype's
minimum; such a row keeps running, as it does in ``generate``).

The loop is torch-only and model-agnostic: the caller passes ``forward``, one model step on
a key/value cache that supports ``reorder_cache(index)`` and ``batch_repeat_interleave(n)``
(``transformers``' ``DynamicCache``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

__all__ = ["BeamSearchOutput", "ForwardFn", "beam_search"]

ForwardFn = Callable[
    ["torch.Tensor", "torch.Tensor", "torch.Tensor", Any], tuple["torch.Tensor", Any]
]
"""``forward(input_ids, attention_mask, position_ids, cache) -> (last_logits, cache)``.

``input_ids`` / ``position_ids``: ``(rows, new_tokens)``; ``attention_mask``: ``(rows,
cache_length + new_tokens)``; ``cache`` is ``None`` on a first call without one (the forward
then creates it); ``last_logits``: ``(rows, vocab)``, the logits after the last new token."""

_NEG = -1.0e9  # transformers' "impossible" score offset


@dataclass
class BeamSearchOutput:
    """Per row, ``num_beams`` hypotheses best first, and what the search computed.

    Attributes
    ----------
    hypotheses : list of list of (list of int, float)
        Per input row, ``(generated token ids, score)`` best first; ids stop after the token
        that finished the hypothesis (``eos`` or the length limit); score = sum of the
        (processed) log-probabilities / ``length ** length_penalty``.
    steps : int
        Decoding steps (model calls after the first).
    row_steps : int
        Beam rows computed over all decoding steps (``generate`` computes
        ``rows * num_beams * steps``).
    settled_at : list of int
        Per input row, the number of generated tokens after which it left the batch (or the
        search ended).
    """

    hypotheses: list[list[tuple[list[int], float]]]
    steps: int = 0
    row_steps: int = 0
    settled_at: list[int] = field(default_factory=list)


def beam_search(
    forward: ForwardFn,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    *,
    num_beams: int,
    max_new_tokens: int,
    eos_token_ids: Sequence[int],
    pad_token_id: int,
    cache: Any = None,
    processors: Sequence[Sequence[Callable[[Any, Any], Any]]] | None = None,
    early_stopping: bool = False,
    length_penalty: float = 1.0,
) -> BeamSearchOutput:
    """Beam search over the rows of a left-padded batch; settled rows leave the batch.

    Parameters
    ----------
    forward : callable
        One model step, see :data:`ForwardFn`.
    input_ids, attention_mask : torch.Tensor
        ``(rows, width)``, left-padded (``attention_mask`` 0 on padding).
    num_beams : int
        Beams per row (``>= 1``).
    max_new_tokens : int
        Generation limit; a hypothesis reaching it is finished like one ending in ``eos``.
    eos_token_ids : sequence of int
        Tokens that finish a hypothesis.
    pad_token_id : int
        Filler after a hypothesis' end (never read by the model).
    cache : optional
        Key/value cache of the first ``cache_length < width`` columns, with ``rows`` or
        ``rows * num_beams`` rows (beam ``b`` of row ``i`` at ``i * num_beams + b``); the
        remaining columns are encoded here. ``None``: everything is encoded here.
    processors : sequence of sequence of callable, optional
        Per row, logits processors ``(input_ids, log_probs) -> log_probs`` applied to that row's
        ``num_beams`` beams (``input_ids``: ``(num_beams, current_length)``, the prompt
        included), as ``transformers`` applies them: after ``log_softmax``.
    early_stopping : bool
        Stop a row once it has ``num_beams`` finished hypotheses (``transformers``'
        ``early_stopping=True``); ``False``: its length-normalised heuristic.
    length_penalty : float
        Exponent of the length normalisation of finished scores.

    Returns
    -------
    BeamSearchOutput

    Examples
    --------
    A toy "model" whose next-token log-probabilities ignore the context: token 2 is ``eos``;
    the length-normalised scores favour the hypotheses that run to the limit.

    >>> import torch
    >>> table = torch.log(torch.tensor([0.1, 0.5, 0.4]))
    >>> class Cache:  # what the loop needs of a key/value cache
    ...     def reorder_cache(self, index): pass
    ...     def batch_repeat_interleave(self, n): pass
    >>> def forward(ids, mask, pos, cache):
    ...     return table.expand(ids.shape[0], 3).clone(), cache or Cache()
    >>> out = beam_search(forward, torch.tensor([[7]]), torch.tensor([[1]]), num_beams=2,
    ...                   max_new_tokens=3, eos_token_ids=[2], pad_token_id=0)
    >>> [(ids, round(score, 3)) for ids, score in out.hypotheses[0]]  # mean log-probability
    [([1, 1, 1], -0.693), ([1, 1, 2], -0.768)]
    """
    import torch

    if num_beams < 1:
        raise ValueError(f"num_beams must be >= 1, got {num_beams}")
    if max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be >= 1, got {max_new_tokens}")
    if input_ids.shape != attention_mask.shape or input_ids.ndim != 2:
        raise ValueError(
            f"input_ids {tuple(input_ids.shape)} and attention_mask "
            f"{tuple(attention_mask.shape)} must be the same (rows, width)"
        )
    n_rows, width = (int(s) for s in input_ids.shape)
    if processors is not None and len(processors) != n_rows:
        raise ValueError(f"{len(processors)} processor lists for {n_rows} rows")
    device = input_ids.device
    nb = num_beams
    keep = max(2, 1 + len(eos_token_ids)) * nb  # candidates kept per row and step
    max_len = width + max_new_tokens
    eos = torch.tensor(sorted({int(t) for t in eos_token_ids}), dtype=torch.long, device=device)

    # per row and beam: running hypotheses, finished ones (scores sorted, best first)
    running = torch.full((n_rows, nb, max_len), pad_token_id, dtype=torch.long, device=device)
    running[:, :, :width] = input_ids[:, None, :]
    done_seqs = running.clone()
    done_len = torch.zeros((n_rows, nb), dtype=torch.long, device=device)
    running_scores = torch.zeros((n_rows, nb), dtype=torch.float32, device=device)
    running_scores[:, 1:] = _NEG
    done_scores = torch.full((n_rows, nb), _NEG, dtype=torch.float32, device=device)
    finished = torch.zeros((n_rows, nb), dtype=torch.bool, device=device)
    improvable = torch.ones(n_rows, dtype=torch.bool, device=device)
    top_nb = torch.zeros(keep, dtype=torch.bool, device=device)
    top_nb[:nb] = True

    mask = torch.ones((n_rows, max_len), dtype=torch.long, device=device)
    mask[:, :width] = attention_mask
    first_pos = (attention_mask.long().cumsum(-1) - 1).masked_fill(attention_mask == 0, 0)
    next_pos = first_pos[:, -1] + 1  # position of the first generated token, per row

    # prefill: the columns the cache lacks, once per row (or per beam if the cache has beams)
    cached = 0 if cache is None else int(cache.get_seq_length())
    if cached >= width:
        raise ValueError(f"the cache covers {cached} columns, the input only {width}")
    cache_rows = n_rows if cache is None else _cache_rows(cache)
    if cache_rows not in (n_rows, n_rows * nb):
        raise ValueError(f"cache has {cache_rows} rows, expected {n_rows} or {n_rows * nb}")
    rep = nb if cache_rows == n_rows * nb else 1
    logits, cache = forward(
        input_ids[:, cached:].repeat_interleave(rep, 0),
        attention_mask.repeat_interleave(rep, 0),
        first_pos[:, cached:].repeat_interleave(rep, 0),
        cache,
    )
    if rep == 1:
        cache.batch_repeat_interleave(nb)
        logits = logits.repeat_interleave(nb, 0)

    active = torch.arange(n_rows, device=device)  # rows still computed, in cache order
    settled_at = [0] * n_rows
    steps = 0
    row_steps = 0
    cur = width
    while True:
        n_act = int(active.numel())
        log_probs = torch.log_softmax(logits.float(), dim=-1)
        if processors is not None:
            for j, row in enumerate(active.tolist()):
                if processors[row]:
                    part = log_probs[j * nb : (j + 1) * nb]
                    seqs = running[row, :, :cur]
                    for proc in processors[row]:
                        part = proc(seqs, part)
                    log_probs[j * nb : (j + 1) * nb] = part
        vocab = int(log_probs.shape[-1])
        acc = log_probs.view(n_act, nb, vocab) + running_scores[active][:, :, None]
        top_scores, top_idx = torch.topk(acc.view(n_act, nb * vocab), k=keep)
        src_beam = top_idx // vocab
        tokens = top_idx % vocab
        cand = torch.gather(running[active], 1, src_beam[:, :, None].expand(-1, -1, max_len))
        cand[:, :, cur] = tokens
        hits = torch.isin(tokens, eos) | (cur + 1 >= max_len)

        # the best num_beams unfinished candidates go on
        go_on = top_scores + hits.float() * _NEG
        nxt = torch.topk(go_on, k=nb).indices
        running[active] = torch.gather(cand, 1, nxt[:, :, None].expand(-1, -1, max_len))
        running_scores[active] = torch.gather(go_on, 1, nxt)
        beam_src = torch.gather(src_beam, 1, nxt)

        # finished candidates among the top num_beams enter the finished set
        gen_len = cur + 1 - width
        norm = top_scores / (gen_len**length_penalty)
        full = finished[active].all(dim=1, keepdim=True) & early_stopping
        norm = norm + full.float() * _NEG
        norm = norm + (~improvable[active])[:, None].float() * _NEG
        just_done = hits & top_nb[None, :]
        norm = norm + (~just_done).float() * _NEG
        merged_scores = torch.cat([done_scores[active], norm], dim=1)
        pick = torch.topk(merged_scores, k=nb).indices
        merged_seqs = torch.cat([done_seqs[active], cand], dim=1)
        done_seqs[active] = torch.gather(merged_seqs, 1, pick[:, :, None].expand(-1, -1, max_len))
        done_scores[active] = torch.gather(merged_scores, 1, pick)
        new_len = torch.full((n_act, keep), gen_len, dtype=torch.long, device=device)
        done_len[active] = torch.gather(torch.cat([done_len[active], new_len], dim=1), 1, pick)
        finished[active] = torch.gather(torch.cat([finished[active], just_done], dim=1), 1, pick)

        cur += 1
        best = running_scores[active][:, :1] / ((cur - width) ** length_penalty)
        worst = torch.where(
            finished[active], done_scores[active].min(dim=1, keepdim=True).values, _NEG
        )
        improvable[active] = improvable[active] & (best > worst).any(dim=1)
        # stop rules of transformers, over ALL rows
        if not bool(improvable.any()) or (early_stopping and bool(finished.all())):
            break
        if cur >= max_len or (n_act == n_rows and bool(hits.all())):
            break
        # settled rows leave the batch
        settled = ~improvable[active]
        if early_stopping:
            fin = finished[active]
            settled |= fin.all(dim=1) & (done_scores[active] > _NEG).all(dim=1)
        live = (~settled).nonzero().flatten()
        for j in settled.nonzero().flatten().tolist():
            settled_at[int(active[j])] = cur - width
        if live.numel() == 0:
            break
        index = (live[:, None] * nb + beam_src[live]).flatten()
        cache.reorder_cache(index)
        active = active[live]
        feed = running[active][:, :, cur - 1].reshape(-1, 1)
        pos = (next_pos[active] + (cur - 1 - width))[:, None].repeat_interleave(nb, 0)
        row_mask = mask[active, :cur].repeat_interleave(nb, 0)
        logits, cache = forward(feed, row_mask, pos, cache)
        steps += 1
        row_steps += int(feed.shape[0])

    for row in active.tolist():
        if not settled_at[row]:
            settled_at[row] = cur - width
    hypotheses: list[list[tuple[list[int], float]]] = []
    for row in range(n_rows):
        hyps = []
        for b in range(nb):
            n = int(done_len[row, b])
            hyps.append((done_seqs[row, b, width : width + n].tolist(), float(done_scores[row, b])))
        hypotheses.append(hyps)
    return BeamSearchOutput(hypotheses, steps=steps, row_steps=row_steps, settled_at=settled_at)


def _cache_rows(cache: Any) -> int:
    """Batch size of a ``transformers`` key/value cache (layer 0's keys)."""
    layers = getattr(cache, "layers", None)
    if layers:
        return int(layers[0].keys.shape[0])
    return int(cache.key_cache[0].shape[0])  # older transformers
