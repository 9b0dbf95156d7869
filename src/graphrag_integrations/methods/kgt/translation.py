"""Structure-constrained KG translation (paper §3.3, Algorithms 1-2, prompt 1 of appendix M).

:class:`Translator` turns a query into clues ``(entity, relation span, direction)`` that all
exist in the ParseKG:

1. **entity translation** - constrained beam search (``alpha`` beams) over the entity trie
   of the direction, stopping on the ``"@@"`` separator; query NER entities found in the
   graph are always added (§3.3.2);
2. **relation translation** - per translated entity, a second constrained beam search
   (``beta`` beams) continuing ``prompt ++ entity ++ "@@"`` under the entity's
   :class:`~graphrag_integrations.methods.kgt.constraints.SpanConstraint`; the searches of
   all entities of a direction run as the rows of ONE batched call;
3. **bidirectional translation** (Algorithm 2) - forward over heads and out-hyperrelations;
   reverse over tails and in-hyperrelations when forward traces nothing or misses a query
   entity (``reverse="fallback"``), always, or never.

Every returned hypothesis is replayed with ``processor.verdict``: only ``"complete"`` ones
become clues. Dead, invalid (beam filler) and truncated hypotheses are dropped and counted in
:attr:`TranslationResult.dropped`; nothing is ever decoded unconstrained.

The only call into the LM is :func:`constrained_generate_many`, i.e.
``LLMClient.generate_many(prompt, prefixes=..., constraints=..., constraint_keys=...,
num_beams)`` (one ``generate`` over all rows, the shared prompt encoded once per query;
response cache per row keyed by graph, tokenizer, entity and direction; token accounting in
``client.usage``). Relation rows put ``entity ++ "@@"`` after the prompt as a prefix (the
paper's "continue prompt ++ entity ++ @@"), so beam scores cover the relation tokens only.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphrag_integrations.core.text.nlp import SpacyNLP
from graphrag_integrations.methods.kgt.constraints import ConstraintIndexes
from graphrag_integrations.methods.kgt.params import CLUE_PROMPT, KGTQueryParams
from graphrag_integrations.methods.kgt.store import read_many

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


class EntityConstraint:
    """An entity trie closed by the separator, then the LM's ``eos`` (entity decoding).

    The trie's entries end with ``sep`` ("@@"); once ``sep`` is generated only ``eos`` is
    allowed, so generation stops where the paper's format puts "@@".

    Examples
    --------
    >>> from graphrag_integrations.core.constraints import TokenTrie
    >>> c = EntityConstraint(TokenTrie([(5, 6), (7,)], eos_token_id=9), sep=9, eos=2)
    >>> sorted(int(t) for t in c(())), [int(t) for t in c((5, 6))], [int(t) for t in c((5, 6, 9))]
    ([5, 7], [9], [2])
    """

    def __init__(self, trie: Callable[[tuple[int, ...]], Any], *, sep: int, eos: int) -> None:
        self.trie, self.sep, self.eos = trie, sep, eos

    def __call__(self, generated: Sequence[int]) -> Any:
        ids = tuple(int(t) for t in generated)
        if ids and ids[-1] == self.sep:
            return np.asarray([self.eos], dtype=np.int64)
        return self.trie(ids)


def constrained_generate_many(
    client: Any,
    prompt: str,
    rows: Sequence[tuple[Sequence[int], Callable[[tuple[int, ...]], Any], str | None]],
    *,
    num_beams: int,
    max_tokens: int,
    early_stopping: bool = False,
) -> list[list[Hypothesis]]:
    """The one LM call of KG-Translator: ``LLMClient.generate_many`` under per-row constraints.

    Parameters
    ----------
    client : LLMClient
        Wraps the translator LM (cache, token accounting, verdicts).
    prompt : str
        The translation prompt (chat template applied by the model).
    rows : sequence of (prefix, constraint, constraint_key)
        Per row: token ids put after the prompt (e.g. ``entity ++ "@@"``), the constraint
        ``allowed(generated) -> ids`` on what follows (closed by the LM's ``eos``), and its
        content key for the cache (graph, tokenizer, entity, direction; ``None``: uncached).
    num_beams : int
        Beams per row; as many hypotheses are returned.
    max_tokens : int
        New-token limit (the same for every row; a constraint closes a row earlier).
    early_stopping : bool
        Stop a beam search once every row has ``num_beams`` finished hypotheses (speed knob;
        the paper and transformers default to ``False``).

    Returns
    -------
    list of list of Hypothesis
        Per row, best first, ids without the closing ``eos``, with the verdict.
    """
    if not rows:
        return []
    results = client.generate_many(
        prompt,
        prefixes=[r[0] for r in rows],
        constraints=[r[1] for r in rows],
        constraint_keys=[r[2] for r in rows],
        num_beams=num_beams,
        num_return_sequences=num_beams,
        max_tokens=max_tokens,
        early_stopping=early_stopping,
    )
    eos = client.llm.eos_token_id
    out: list[list[Hypothesis]] = []
    for row in results:
        hyps = []
        for r in row:
            ids = [int(t) for t in (r.token_ids or ())]
            if eos in ids:
                ids = ids[: ids.index(eos)]
            hyps.append(Hypothesis(tuple(ids), float(r.score or 0.0), str(r.verdict)))
        out.append(hyps)
    return out


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
    client : LLMClient
        Wraps the translator LM (a :class:`~graphrag_integrations.core.llm.TransformersLLM`:
        ``generate`` with logits processors, ``tokenizer``, ``eos_token_id``).
    indexes : ConstraintIndexes
        Entity tries and relation indexes of the graph, for ``lm.tokenizer``.
    params : KGTQueryParams
        ``alpha``, ``beta``, ``reverse``, ``add_query_entities``, ``max_entity_tokens``.
    nlp : SpacyNLP, optional
        Query NER (needed when ``add_query_entities`` or ``reverse="fallback"``).
    cache_key : str
        Identifies the graph and tokenizer in constraint cache keys (``""``: no caching of
        constrained calls).
    """

    def __init__(
        self,
        client: Any,
        indexes: ConstraintIndexes,
        params: KGTQueryParams,
        nlp: SpacyNLP | None = None,
        cache_key: str = "",
    ) -> None:
        self.client = client
        self.indexes = indexes
        self.params = params
        self.nlp = nlp
        self.cache_key = cache_key

    def _key(self, *parts: str) -> str | None:
        return "\0".join((self.cache_key, *parts)) if self.cache_key else None

    def query_entities(self, query: str) -> list[str]:
        """Normalised NER entities of ``query`` (empty without ``nlp``)."""
        if self.nlp is None:
            return []
        return list(dict.fromkeys(e.norm for e in self.nlp.entities(query)))

    def translate(self, query: str) -> TranslationResult:
        """Algorithm 2: forward translation, then reverse translation when it is needed.

        LM calls: entity decoding of both directions in one batched call (the reverse rows
        only when ``reverse`` is not ``"never"``; their hypotheses are used, and counted, only
        when reverse translation runs), then the relation searches of all entities in one
        call - both directions together when reverse translation is already certain (``"always"``,
        or a query entity that is no forward entity: forward clues cannot cover it), else
        forward first and reverse afterwards if Algorithm 2 asks for it.
        """
        result = TranslationResult(query_entities=self.query_entities(query))
        prompt = translation_prompt(query)
        mode = self.params.reverse
        directions = ["forward"] if mode == "never" else ["forward", "reverse"]
        decoded = self.translate_entities_many(prompt, directions)
        forward = self._entity_jobs("forward", decoded["forward"], result)
        qents = set(result.query_entities)
        certain = mode == "always" or (mode == "fallback" and not qents <= {e for e, _ in forward})
        if certain:
            reverse = self._entity_jobs("reverse", decoded["reverse"], result)
            result.reverse_ran = True
            jobs = [(e, s, "forward") for e, s in forward] + [(e, s, "reverse") for e, s in reverse]
            result.clues.extend(self._relation_rows(prompt, jobs, result))
            return result
        clues = self._relation_rows(prompt, [(e, s, "forward") for e, s in forward], result)
        result.clues.extend(clues)
        traced = any(c.hyperedges for c in clues)
        missing = not qents <= {c.entity for c in clues}
        if mode == "fallback" and (not traced or missing):
            reverse = self._entity_jobs("reverse", decoded["reverse"], result)
            result.reverse_ran = True
            jobs = [(e, s, "reverse") for e, s in reverse]
            result.clues.extend(self._relation_rows(prompt, jobs, result))
        return result

    def _entity_jobs(
        self, direction: str, decoded: list[Hypothesis], result: TranslationResult
    ) -> list[tuple[str, str]]:
        """``(entity key, source)`` of a direction: decoded entities, then query entities."""
        entities: dict[str, str] = {}  # key -> source
        for key in self._entity_keys(direction, decoded, result):
            entities.setdefault(key, "translated")
        if self.params.add_query_entities:
            view = self.indexes.view
            for key in result.query_entities:
                if view.rels_of(key, direction):
                    entities.setdefault(key, "query_entity")
        return list(entities.items())

    def translate_entities_many(
        self, prompt: str, directions: Sequence[str]
    ) -> dict[str, list[Hypothesis]]:
        """Entity hypotheses (``alpha`` beams) of each direction, all in ONE LM call."""
        out: dict[str, list[Hypothesis]] = {d: [] for d in directions}
        rows, names, limit = [], [], 0
        ix = self.indexes
        for direction in directions:
            trie = ix.tries[direction]
            if not len(trie):
                continue
            limit = max(limit, min(self.params.max_entity_tokens, trie.stats.max_length + 1))
            rows.append(
                (
                    (),
                    EntityConstraint(trie, sep=ix.sep_id, eos=ix.eos_id),
                    self._key("entities", direction),
                )
            )
            names.append(direction)
        per_row = constrained_generate_many(
            self.client,
            prompt,
            rows,
            num_beams=self.params.alpha,
            max_tokens=limit + 1,
            early_stopping=self.params.early_stopping,
        )
        for direction, hyps in zip(names, per_row, strict=True):
            out[direction] = hyps
        return out

    def _entity_keys(
        self, direction: str, hyps: list[Hypothesis], result: TranslationResult | None
    ) -> list[str]:
        sep = self.indexes.sep_id
        keys: list[str] = []
        for h in hyps:
            if h.verdict != "complete" or not h.ids or h.ids[-1] != sep:
                self._drop(result, h.verdict, "entity", direction, h.ids)
                continue
            key = self.indexes.entity_for(direction, h.ids[:-1])
            if key is None:  # cannot happen for a complete trie entry; counted if it does
                self._drop(result, "unknown_entity", "entity", direction, h.ids)
                continue
            if key not in keys:
                keys.append(key)
        return keys

    def _relation_rows(
        self,
        prompt: str,
        entities: Sequence[tuple[str, str, str]],
        result: TranslationResult | None,
    ) -> list[Clue]:
        """Up to ``beta`` clues per ``(entity, source, direction)`` row, all relation searches
        in ONE LM call.

        Row ``i`` continues ``prompt ++ entity_i ++ "@@"`` under entity ``i``'s relation
        index of its direction; clues come out in the order of the rows, each entity's best
        first.
        """
        ix = self.indexes
        prefetch = getattr(ix.view, "prefetch", None)
        if prefetch is not None:  # per-query reads: every entity's hyperrelations at once
            prefetch([(e, d) for e, _, d in entities])
        jobs = []
        for entity, source, direction in entities:
            relation = ix.relations(entity, direction)
            if relation is not None:
                jobs.append((entity, source, direction, relation))
        if not jobs:
            return []
        rows = [
            (
                (*ix.entity_ids(entity), ix.sep_id),
                relation.constraint,
                self._key("relations", direction, entity),
            )
            for entity, _, direction, relation in jobs
        ]
        # the longest span any of these entities admits, + eos (a row's own constraint
        # allows only eos past its longest span, so a longer limit changes nothing)
        limit = max(r.longest_span(ix.max_relation_tokens) for *_, r in jobs) + 1
        per_row = constrained_generate_many(
            self.client,
            prompt,
            rows,
            num_beams=self.params.beta,
            max_tokens=limit,
            early_stopping=self.params.early_stopping,
        )
        tokenizer = ix.tokenizer
        clues: list[Clue] = []
        infos = read_many(ix.view.entities, [entity for entity, *_ in jobs])
        for (entity, source, direction, relation), hyps in zip(jobs, per_row, strict=True):
            name = infos[entity].name
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
