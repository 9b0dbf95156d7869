"""Structure-constrained KG translation (paper §3.3, Algorithms 1-2, prompt 1 of appendix M).

:class:`Translator` turns a query into clues ``(entity, relation span, direction)`` that all
exist in the ParseKG:

1. **entity translation** - constrained beam search (``alpha`` beams) over the entity trie
   of the direction, stopping on the ``"@@"`` separator; query NER entities found in the
   graph are always added (§3.3.2);
2. **relation translation** - per translated entity, a second constrained beam search
   (``beta`` beams) continuing ``prompt ++ entity ++ "@@"`` under the entity's
   :class:`~graphrag_integrations.methods.kgt.constraints.SpanConstraint`;
3. **bidirectional translation** (Algorithm 2) - forward over heads and out-hyperrelations;
   reverse over tails and in-hyperrelations when forward traces nothing or misses a query
   entity (``reverse="fallback"``), always, or never.

Every returned hypothesis is replayed with ``processor.verdict``: only ``"complete"`` ones
become clues. Dead, invalid (beam filler) and truncated hypotheses are dropped and counted in
:attr:`TranslationResult.dropped`; nothing is ever decoded unconstrained.

The only call into the LM is :func:`constrained_generate` (to become
``LLMClient.generate(prompt, constraint=..., constraint_key=..., num_beams,
num_return_sequences)``).
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from graphrag_integrations.core.nlp import SpacyNLP
from graphrag_integrations.methods.kgt.constraints import ConstraintIndexes
from graphrag_integrations.methods.kgt.params import CLUE_PROMPT, QueryParams

logger = logging.getLogger(__name__)


def translation_prompt(query: str) -> str:
    """The user message of a translation (prompt 1 of appendix M, then the query).

    Examples
    --------
    >>> translation_prompt("Who wrote Hamlet?").splitlines()[-1]
    'Query: Who wrote Hamlet?'
    """
    return f"{CLUE_PROMPT}\nQuery: {query}"


@dataclass(frozen=True)
class Hypothesis:
    """One returned sequence of a constrained generation.

    Attributes
    ----------
    ids : tuple of int
        Generated ids, terminator and padding removed.
    score : float
        The LM's (length-normalised for beam search) log-probability.
    verdict : str
        ``processor.verdict``: ``"complete"``, ``"dead"``, ``"invalid"`` or ``"truncated"``.
    """

    ids: tuple[int, ...]
    score: float
    verdict: str


def constrained_generate(
    lm: Any,
    prompt_ids: Sequence[int],
    allowed_fn: Callable[[tuple[int, ...]], Any],
    *,
    eos_token_id: int,
    num_beams: int,
    num_return_sequences: int,
    max_new_tokens: int,
    lock: threading.Lock | None = None,
) -> list[Hypothesis]:
    """Beam search (greedy for one beam) under ``allowed_fn``; the one LM call of KG-Translator.

    Parameters
    ----------
    lm : object
        Has ``model`` (a transformers causal LM) and ``tokenizer``.
    prompt_ids : sequence of int
        The full prompt (chat template applied, forced continuation appended).
    allowed_fn : callable
        ``allowed_fn(generated) -> ids``; ``eos_token_id`` is its terminator.
    eos_token_id : int
        Stops generation (the separator for entities, the LM's eos for relations).
    num_beams, num_return_sequences, max_new_tokens : int
        Generation settings.
    lock : threading.Lock, optional
        Held during ``generate`` (models are not thread-safe).

    Returns
    -------
    list of Hypothesis
        Every returned sequence with its verdict, best first.
    """
    import torch
    from transformers import GenerationConfig

    from graphrag_integrations.core.constraints import ConstrainedLogitsProcessor

    model = lm.model
    pad = lm.tokenizer.pad_token_id
    if pad is None:
        pad = lm.tokenizer.eos_token_id
    config = GenerationConfig(  # type: ignore[no-untyped-call]
        max_new_tokens=max_new_tokens,
        num_beams=num_beams,
        num_return_sequences=num_return_sequences,
        do_sample=False,
        eos_token_id=eos_token_id,
        pad_token_id=pad,
        output_scores=True,
        return_dict_in_generate=True,
    )
    input_ids = torch.tensor([list(prompt_ids)], dtype=torch.long, device=model.device)
    proc = ConstrainedLogitsProcessor(allowed_fn, input_ids.shape[1], eos_token_id=eos_token_id)
    guard = lock if lock is not None else threading.Lock()
    with guard, torch.inference_mode():
        out = model.generate(
            input_ids,
            attention_mask=torch.ones_like(input_ids),
            logits_processor=[proc],
            generation_config=config,
        )
    rows = out.sequences[:, input_ids.shape[1] :].tolist()
    if getattr(out, "sequences_scores", None) is not None:
        scores = [float(s) for s in out.sequences_scores.tolist()]
    else:
        trans = model.compute_transition_scores(out.sequences, out.scores, normalize_logits=True)
        scores = []
        for row, t in zip(rows, trans.tolist(), strict=True):
            n = row.index(eos_token_id) + 1 if eos_token_id in row else len(row)
            scores.append(float(sum(v for v in t[:n] if v != float("-inf"))))
    result = []
    for row, score in zip(rows, scores, strict=True):
        ids = row[: row.index(eos_token_id)] if eos_token_id in row else row
        result.append(Hypothesis(tuple(ids), score, proc.verdict(row)))
    return result


@dataclass(frozen=True)
class Clue:
    """A translated clue ``(entity, relation)`` with its direction and traced hyperedges.

    Attributes
    ----------
    entity : str
        Normalised entity key.
    name : str
        Entity display name (what the LM spelled, or the graph name of a query entity).
    relation : str
        Decoded relation span (a substring of every hyperrelation in ``hyperedges``).
    direction : {"forward", "reverse"}
        Out- (entity is a head) or in-hyperrelations (entity is a tail).
    source : {"translated", "query_entity"}
        The entity came from entity decoding or from query NER.
    score : float
        Relation beam score.
    relation_ids : tuple of int
        Token ids of the relation span.
    hyperedges : tuple of str
        Hyperedges of the entity (in this direction) containing the span.
    """

    entity: str
    name: str
    relation: str
    direction: str
    source: str
    score: float
    relation_ids: tuple[int, ...]
    hyperedges: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (explanations)."""
        return {
            "entity": self.name,
            "relation": self.relation,
            "direction": self.direction,
            "source": self.source,
            "score": self.score,
        }


@dataclass
class TranslationResult:
    """Clues of one query and what happened on the way.

    Attributes
    ----------
    clues : list of Clue
        Forward clues, then reverse clues (when reverse translation ran).
    query_entities : list of str
        Normalised query NER entities.
    reverse_ran : bool
        Whether reverse translation ran.
    dropped : Counter
        Hypotheses dropped per verdict (``"dead"``, ``"invalid"``, ``"truncated"``) and
        per cause (``"unknown_entity"``).
    """

    clues: list[Clue] = field(default_factory=list)
    query_entities: list[str] = field(default_factory=list)
    reverse_ran: bool = False
    dropped: Counter[str] = field(default_factory=Counter)


class Translator:
    """Query -> clues with a local causal LM under the ParseKG constraints.

    Parameters
    ----------
    lm : object
        ``model``, ``tokenizer`` and ``encode_prompt(prompt) -> {"input_ids": ...}`` (e.g.
        :class:`~graphrag_integrations.core.llm.TransformersLLM`).
    indexes : ConstraintIndexes
        Entity tries and relation indexes of the graph, for ``lm.tokenizer``.
    params : QueryParams
        ``alpha``, ``beta``, ``reverse``, ``add_query_entities``, ``max_entity_tokens``.
    nlp : SpacyNLP, optional
        Query NER (needed when ``add_query_entities`` or ``reverse="fallback"``).
    lock : threading.Lock, optional
        Serialises ``generate`` calls on ``lm`` (share one per model across translators).
    """

    def __init__(
        self,
        lm: Any,
        indexes: ConstraintIndexes,
        params: QueryParams,
        nlp: SpacyNLP | None = None,
        lock: threading.Lock | None = None,
    ) -> None:
        self.lm = lm
        self.indexes = indexes
        self.params = params
        self.nlp = nlp
        self._lock = lock if lock is not None else threading.Lock()

    def prompt_ids(self, query: str) -> list[int]:
        """Token ids of the translation prompt (chat template applied when the LM uses one)."""
        encoded = self.lm.encode_prompt(translation_prompt(query))
        return [int(t) for t in encoded["input_ids"][0].tolist()]

    def query_entities(self, query: str) -> list[str]:
        """Normalised NER entities of ``query`` (empty without ``nlp``)."""
        if self.nlp is None:
            return []
        return list(dict.fromkeys(e.norm for e in self.nlp.entities(query)))

    def translate(self, query: str) -> TranslationResult:
        """Algorithm 2: forward translation, then reverse translation when it is needed."""
        result = TranslationResult(query_entities=self.query_entities(query))
        prompt = self.prompt_ids(query)
        forward = self._direction(prompt, "forward", result)
        result.clues.extend(forward)
        traced = any(c.hyperedges for c in forward)
        covered = {c.entity for c in forward}
        mode = self.params.reverse
        missing = not set(result.query_entities) <= covered
        if mode == "always" or (mode == "fallback" and (not traced or missing)):
            result.reverse_ran = True
            result.clues.extend(self._direction(prompt, "reverse", result))
        return result

    def _direction(
        self, prompt: list[int], direction: str, result: TranslationResult
    ) -> list[Clue]:
        entities: dict[str, str] = {}  # key -> source
        for key in self.translate_entities(prompt, direction, result):
            entities.setdefault(key, "translated")
        if self.params.add_query_entities:
            view = self.indexes.view
            for key in result.query_entities:
                if view.rels_of(key, direction):
                    entities.setdefault(key, "query_entity")
        clues: list[Clue] = []
        for key, source in entities.items():
            clues.extend(self.translate_relations(prompt, key, direction, source, result))
        return clues

    def translate_entities(
        self, prompt: list[int], direction: str, result: TranslationResult | None = None
    ) -> list[str]:
        """Up to ``alpha`` entity keys decoded under the ``direction`` entity trie."""
        trie = self.indexes.tries[direction]
        if not len(trie):
            return []
        limit = min(self.params.max_entity_tokens, trie.stats.max_length + 1)
        hyps = constrained_generate(
            self.lm,
            prompt,
            trie,
            eos_token_id=self.indexes.sep_id,
            num_beams=self.params.alpha,
            num_return_sequences=self.params.alpha,
            max_new_tokens=limit,
            lock=self._lock,
        )
        keys: list[str] = []
        for h in hyps:
            if h.verdict != "complete":
                self._drop(result, h.verdict, "entity", direction, h.ids)
                continue
            key = self.indexes.entity_for(direction, h.ids)
            if key is None:  # cannot happen for a complete trie entry; counted if it does
                self._drop(result, "unknown_entity", "entity", direction, h.ids)
                continue
            if key not in keys:
                keys.append(key)
        return keys

    def translate_relations(
        self,
        prompt: list[int],
        entity: str,
        direction: str,
        source: str = "translated",
        result: TranslationResult | None = None,
    ) -> list[Clue]:
        """Up to ``beta`` clues of ``entity``: relation spans decoded under its index."""
        relation = self.indexes.relations(entity, direction)
        if relation is None:
            return []
        entity_ids = self.indexes.entity_ids(entity)
        hyps = constrained_generate(
            self.lm,
            [*prompt, *entity_ids, self.indexes.sep_id],
            relation.constraint,
            eos_token_id=self.indexes.eos_id,
            num_beams=self.params.beta,
            num_return_sequences=self.params.beta,
            max_new_tokens=self.indexes.max_relation_tokens + 1,
            lock=self._lock,
        )
        tokenizer = self.lm.tokenizer
        name = self.indexes.view.entities[entity].name
        clues: list[Clue] = []
        seen: set[tuple[int, ...]] = set()
        for h in hyps:
            if h.verdict != "complete" or not h.ids:
                self._drop(result, h.verdict, "relation", direction, h.ids)
                continue
            if h.ids in seen:
                continue
            seen.add(h.ids)
            clues.append(
                Clue(
                    entity=entity,
                    name=name,
                    relation=tokenizer.decode(list(h.ids)).strip(),
                    direction=direction,
                    source=source,
                    score=h.score,
                    relation_ids=h.ids,
                    hyperedges=relation.trace(h.ids),
                )
            )
        return clues

    @staticmethod
    def _drop(
        result: TranslationResult | None,
        verdict: str,
        stage: str,
        direction: str,
        ids: tuple[int, ...],
    ) -> None:
        logger.debug("dropped %s %s hypothesis %s (%s)", direction, stage, ids, verdict)
        if result is not None:
            result.dropped[verdict] += 1
