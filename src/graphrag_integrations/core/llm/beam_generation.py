"""Greedy and beam-search generation over the rows of a :class:`TransformersLLM` batch.

:func:`generate_rows` runs one ``generate`` over the (left-padded) rows of a batch, with
optional per-row logits processors (:class:`RowDispatchProcessor`: row ``i``'s constraint
sees only its own beams) and an optional key/value cache of a shared prompt
(:mod:`~graphrag_integrations.core.llm.prompt_cache`): ``transformers``' ``model.generate``,
or, for beams with ``beam_loop="pruned"`` (the default), the loop of
:mod:`~graphrag_integrations.core.llm.beam_search`, which drops settled rows. Per row, the
hypotheses come back best first as :class:`~graphrag_integrations.core.llm.protocol.LLMResult`.

The model is any object with what :class:`~graphrag_integrations.core.llm.transformers_lm.
TransformersLLM` offers: ``model``, ``generation_config(max_tokens)``, ``beam_loop``,
``cache_arg``, ``last_logits_only``, ``generate_lock``, ``pad_token_id`` and
``decode_generated(ids, eos_ids)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from graphrag_integrations.core.llm.protocol import LLMResult

__all__ = ["RowDispatchProcessor", "check_beams", "eos_id_set", "generate_rows"]


def generate_rows(
    llm: Any,
    inputs: dict[str, Any],
    prompt_tokens: list[int],
    factories: Sequence[Callable[[int], Sequence[Any]] | None] | None,
    past: Any,
    max_tokens: int | None,
    num_beams: int,
    num_return_sequences: int,
    *,
    early_stopping: bool = False,
) -> list[list[LLMResult]]:
    """One beam search / greedy ``generate`` over the rows of ``inputs``; per row,
    hypotheses best first."""
    import torch

    width = int(inputs["input_ids"].shape[1])
    config = llm.generation_config(max_tokens)
    per_row = None
    if factories is not None and any(f is not None for f in factories):
        per_row = [list(f(width)) if f is not None else [] for f in factories]
    if num_beams > 1 and llm.beam_loop == "pruned":
        return _pruned_rows(
    llm,
            inputs, prompt_tokens, per_row, past, config, num_beams, num_return_sequences,
            early_stopping,
        )  # fmt: skip
    config.num_beams = num_beams
    config.num_return_sequences = num_return_sequences
    config.return_dict_in_generate = True
    config.output_scores = num_beams > 1
    config.output_logits = num_beams == 1
    if num_beams > 1:
        config.length_penalty = 1.0
        config.early_stopping = early_stopping
    processors = None
    if per_row is not None:
        from transformers import LogitsProcessorList

        processors = LogitsProcessorList([RowDispatchProcessor(per_row, num_beams)])
    extra: dict[str, Any] = {}
    if past is not None:
        extra[llm.cache_arg] = past
    with llm.generate_lock, torch.inference_mode():
        out = llm.model.generate(
            **inputs, generation_config=config, logits_processor=processors, **extra
        )
        rows = out.sequences[:, width:].tolist()
        if num_beams > 1:
            scores = [float(s) for s in out.sequences_scores.tolist()]
        else:
            logprobs = torch.log_softmax(torch.stack(out.logits, dim=1).float(), dim=-1)
            chosen = logprobs.gather(-1, out.sequences[:, width:, None])[..., 0]
    eos_ids = eos_id_set(config.eos_token_id)
    results: list[list[LLMResult]] = [[] for _ in prompt_tokens]
    for i, row in enumerate(rows):
        text, ids = llm.decode_generated(row, eos_ids)
        score = scores[i] if num_beams > 1 else float(chosen[i, : len(ids)].mean())
        n_prompt = prompt_tokens[i // num_return_sequences]
        results[i // num_return_sequences].append(
            LLMResult(text, n_prompt, len(ids), score=score, token_ids=tuple(ids))
        )
    for hypotheses in results:
        hypotheses.sort(key=lambda r: -(r.score or 0.0))
    return results


def _pruned_rows(
    llm: Any,
    inputs: dict[str, Any],
    prompt_tokens: list[int],
    per_row: list[list[Any]] | None,
    past: Any,
    config: Any,
    num_beams: int,
    num_return_sequences: int,
    early_stopping: bool,
) -> list[list[LLMResult]]:
    """:func:`generate_rows` by :func:`~.beam_search.beam_search` (``beam_loop="pruned"``)."""
    import torch

    from graphrag_integrations.core.llm.beam_search import beam_search

    model = llm.model
    cache_arg = llm.cache_arg
    last_only = llm.last_logits_only

    def forward(ids: Any, mask: Any, positions: Any, cache: Any) -> tuple[Any, Any]:
        extra = {} if cache is None else {cache_arg: cache}
        out = model(
            input_ids=ids,
            attention_mask=mask,
            position_ids=positions,
            use_cache=True,
            **last_only,
            **extra,
        )
        return out.logits[:, -1, :], out.past_key_values

    eos_ids = eos_id_set(config.eos_token_id)
    with llm.generate_lock, torch.inference_mode():
        out = beam_search(
            forward,
            inputs["input_ids"],
            inputs["attention_mask"],
            num_beams=num_beams,
            max_new_tokens=int(config.max_new_tokens),
            eos_token_ids=sorted(eos_ids),
            pad_token_id=llm.pad_token_id,
            cache=past,
            processors=per_row,
            early_stopping=early_stopping,
        )
    results: list[list[LLMResult]] = []
    for n_prompt, hyps in zip(prompt_tokens, out.hypotheses, strict=True):
        row = []
        for ids, score in hyps[:num_return_sequences]:
            text, kept = llm.decode_generated(ids, eos_ids)
            row.append(LLMResult(text, n_prompt, len(kept), score=score, token_ids=tuple(kept)))
        results.append(row)
    return results


class RowDispatchProcessor:
    """A logits processor applying row ``i``'s processors to beams ``i * num_beams ...``.

    ``generate`` lays the beams of batch row ``i`` out as the consecutive score rows
    ``i * num_beams`` to ``(i + 1) * num_beams - 1``; each slice goes through its own
    processors (e.g. one constraint per row).

    Examples
    --------
    >>> import torch
    >>> def ban(token):
    ...     def apply(input_ids, scores):
    ...         scores[:, token] = -float("inf")
    ...         return scores
    ...     return apply
    >>> proc = RowDispatchProcessor([[ban(0)], [], [ban(2)]], num_beams=2)
    >>> out = proc(torch.zeros(6, 1, dtype=torch.long), torch.zeros(6, 3))
    >>> torch.isinf(out).nonzero().tolist()
    [[0, 0], [1, 0], [4, 2], [5, 2]]
    """

    def __init__(self, processors: Sequence[Sequence[Any]], num_beams: int) -> None:
        self.processors = [list(p) for p in processors]
        self.num_beams = num_beams

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        expected = len(self.processors) * self.num_beams
        if scores.shape[0] != expected:
            raise ValueError(f"{scores.shape[0]} score rows, expected {expected}")
        for i, procs in enumerate(self.processors):
            if not procs:
                continue
            rows = slice(i * self.num_beams, (i + 1) * self.num_beams)
            part = scores[rows]
            for proc in procs:
                part = proc(input_ids[rows], part)
            scores[rows] = part
        return scores


def check_beams(num_beams: int, num_return_sequences: int) -> None:
    """Refuse ``num_beams < 1`` or ``num_return_sequences`` outside ``[1, num_beams]``."""
    if num_beams < 1:
        raise ValueError(f"num_beams must be >= 1, got {num_beams}")
    if not 1 <= num_return_sequences <= num_beams:
        raise ValueError(
            f"num_return_sequences must be in [1, num_beams={num_beams}], "
            f"got {num_return_sequences}"
        )


def eos_id_set(ids: int | list[int] | None) -> set[int]:
    """A generation config's eos id(s) as a set.

    Examples
    --------
    >>> eos_id_set(2), eos_id_set([2, 7]), eos_id_set(None)
    ({2}, {2, 7}, set())
    """
    if ids is None:
        return set()
    return {int(i) for i in ids} if isinstance(ids, list) else {int(ids)}
