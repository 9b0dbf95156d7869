"""KG-constrained indexing (paper §3.3.1): entity tries and per-entity relation indexes.

A clue is generated as the token sequence ``entity ++ [SEP] ++ span ++ [EOS]``, where ``SEP``
is the single token of ``"@@"`` (the separator of prompt 1, appendix M) and ``EOS`` the LM's
end token. The constraint strings are tokenised exactly as they appear there:

* **entities** (eq. 1): ``tokenize(name)`` of every entry entity's display name, at the start
  of the answer, in a :class:`~graphrag_integrations.core.constraints.TokenTrie` whose
  terminator is ``SEP`` (so entity decoding stops on ``"@@"``, and a name cannot run on). One
  trie for forward entries (heads, ``H``) and one for reverse entries (tails of an allowed
  type);
* **relations** (eqs. 2-3, 6): ``tokenize(hyperrelation)`` of every hyperrelation of the
  translated entity (``R+`` forward, ``R-`` reverse), in a
  :class:`~graphrag_integrations.core.constraints.SubstringIndex` (FM-index) built when the
  entity is first translated and kept in an LRU cache. :class:`SpanConstraint` turns it into
  the decoding constraint: any non-empty contiguous span of at most ``max_relation_tokens``
  (16) tokens, and ``EOS`` may follow any such span (the training relations of appendix F.1
  are inner windows of a sentence, not suffixes).

The tokenised hyperrelations and both tries depend only on the graph and the tokenizer; they
are computed once and persisted with the index (``constraints/<tokenizer fingerprint>/``).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from graphrag_integrations.core.constraints import SubstringIndex, TokenIds, TokenTrie
from graphrag_integrations.core.lru import LRUCache
from graphrag_integrations.methods.kgt.store import ParseKGView

logger = logging.getLogger(__name__)

DIRECTIONS = ("forward", "reverse")
SEPARATOR = "@@"
_EMPTY = np.zeros(0, dtype=np.int64)


def separator_id(tokenizer: Any, separator: str = SEPARATOR) -> int:
    """The single token id of ``separator``.

    Raises
    ------
    ValueError
        If the tokenizer splits ``separator`` into several tokens (the entity trie needs one
        terminator id).
    """
    ids = tokenizer(separator, add_special_tokens=False)["input_ids"]
    if len(ids) != 1:
        raise ValueError(
            f"the tokenizer splits the clue separator {separator!r} into {len(ids)} tokens "
            f"({ids}); KG-Translator needs it as one token"
        )
    return int(ids[0])


def tokenizer_fingerprint(tokenizer: Any) -> str:
    """Short hash of a tokenizer's vocabulary and special ids (keys the constraint cache)."""
    h = hashlib.blake2b(digest_size=8)
    h.update(str(getattr(tokenizer, "name_or_path", "")).encode())
    for token, idx in sorted(tokenizer.get_vocab().items(), key=lambda kv: kv[1]):
        h.update(f"{idx}\0{token}\n".encode())
    h.update(f"eos={tokenizer.eos_token_id}".encode())
    return h.hexdigest()


def contains_span(tokens: Sequence[int], span: Sequence[int]) -> bool:
    """Whether ``span`` occurs contiguously in ``tokens``.

    Examples
    --------
    >>> contains_span([1, 2, 3, 4], [2, 3]), contains_span([1, 2, 3], [3, 2])
    (True, False)
    """
    n = len(span)
    if n == 0:
        return True
    first = span[0]
    return any(
        tokens[i] == first and tuple(tokens[i : i + n]) == tuple(span)
        for i in range(len(tokens) - n + 1)
    )


class SpanConstraint:
    """Relation decoding constraint over a :class:`SubstringIndex` (see module docstring).

    Parameters
    ----------
    index : SubstringIndex
        Token ids of the hyperrelations, terminated by ``eos_token_id``.
    eos_token_id : int
        Ends a relation.
    max_tokens : int
        Longest span; after that many tokens only ``eos`` is allowed.

    Examples
    --------
    >>> idx = SubstringIndex([[5, 6, 7]], terminator_id=0, backend="suffix")
    >>> span = SpanConstraint(idx, eos_token_id=0, max_tokens=2)
    >>> span(()).tolist(), span((5,)).tolist(), span((5, 6)).tolist(), span((6, 5)).tolist()
    ([5, 6, 7], [0, 6], [0], [])
    """

    def __init__(self, index: SubstringIndex, *, eos_token_id: int, max_tokens: int) -> None:
        self.index = index
        self.eos_token_id = eos_token_id
        self.max_tokens = max_tokens

    def __call__(self, prefix: Sequence[int]) -> TokenIds:
        allowed = self.index.allowed(prefix)
        if not prefix:
            return allowed[allowed != self.eos_token_id]
        if allowed.size == 0:
            return _EMPTY
        if len(prefix) >= self.max_tokens:
            return np.array([self.eos_token_id], dtype=np.int64)
        if np.any(allowed == self.eos_token_id):
            return allowed
        return np.union1d(allowed, [self.eos_token_id]).astype(np.int64)


@dataclass(frozen=True)
class RelationConstraint:
    """The relation index of one (entity, direction): its hyperedges and their tokens."""

    entity: str
    direction: str
    rel_ids: tuple[str, ...]
    tokens: tuple[tuple[int, ...], ...]
    constraint: SpanConstraint

    def longest_span(self, limit: int) -> int:
        """The longest span the constraint can admit: ``min(limit, longest hyperrelation)``.

        Examples
        --------
        >>> rc = RelationConstraint("e", "forward", ("r1", "r2"), ((1, 2), (3, 4, 5)), None)
        >>> rc.longest_span(16), rc.longest_span(2)
        (3, 2)
        """
        return min(limit, max((len(t) for t in self.tokens), default=0))

    def trace(self, span: Sequence[int]) -> tuple[str, ...]:
        """Hyperedges whose tokenised hyperrelation contains ``span`` (clue tracing)."""
        pairs = zip(self.rel_ids, self.tokens, strict=True)
        return tuple(r for r, t in pairs if contains_span(t, span))


class ConstraintIndexes:
    """Entity tries and per-entity relation indexes over one :class:`ParseKGView`.

    Parameters
    ----------
    view : ParseKGView
        The graph.
    tokenizer : transformers tokenizer
        The translator's tokenizer.
    max_relation_tokens : int
        Longest relation span (paper: 16).
    cache_size : int
        Relation indexes kept (LRU).
    backend : {"auto", "fm", "suffix"}
        :class:`SubstringIndex` backend.
    cached : tuple, optional
        ``(rel_tokens, tries, entity_tokens)`` read from a persisted cache.
    eos_token_id : int, optional
        The LM's end-of-sequence id closing relation spans (default: the tokenizer's).
    known : mapping of str to tuple of int, optional
        Token ids of texts tokenised before (:meth:`tokens_by_text` of the indexes of the
        graph before an insert or delete): only the other texts are tokenised.

    Attributes
    ----------
    tokenised : int
        Texts this build tokenised (the others came from ``known`` or ``cached``).
    """

    def __init__(
        self,
        view: ParseKGView,
        tokenizer: Any,
        *,
        max_relation_tokens: int = 16,
        cache_size: int = 256,
        backend: str = "auto",
        cached: tuple[Any, Any, Any] | None = None,
        eos_token_id: int | None = None,
        known: Mapping[str, tuple[int, ...]] | None = None,
    ) -> None:
        self.view = view
        self.tokenizer = tokenizer
        self.sep_id = separator_id(tokenizer)
        eos = tokenizer.eos_token_id if eos_token_id is None else eos_token_id
        if eos is None:
            raise ValueError("the translator's tokenizer has no eos token")
        self.eos_id = int(eos)
        self.max_relation_tokens = max_relation_tokens
        self.backend = backend
        self.cache_size = cache_size
        self._relations: LRUCache[tuple[str, str], RelationConstraint] = LRUCache(cache_size)
        self.skipped_entities = 0
        self.tokenised = 0
        self._known = dict(known or {})
        #: Per-query reads (``view.lazy``): hyperrelations are tokenised when their entity is
        #: translated (token ids by text, an LRU of ``cache_size * 16``), not all up front.
        self.lazy = bool(getattr(view, "lazy", False))
        self._text_tokens: LRUCache[str, tuple[int, ...] | None] = LRUCache(cache_size * 16)
        if cached is not None:
            self.rel_tokens, self.tries, self.entity_tokens = cached
            if self.lazy:
                self.rel_tokens = {}
        else:
            self.rel_tokens = {} if self.lazy else self._tokenize_rels()
            self.entity_tokens = {d: self._tokenize_entries(d) for d in DIRECTIONS}
            self.tries = {
                d: TokenTrie(self.entity_tokens[d].values(), eos_token_id=self.sep_id)
                for d in DIRECTIONS
            }
        if self.lazy:  # texts known from before the change serve the per-entity indexes
            for text, ids in list(self._known.items())[-cache_size * 16 :]:
                self._text_tokens[text] = None if self.eos_id in ids else ids
        self._known = {}  # needed while building only
        self._by_tokens = {
            d: {tuple(ids): key for key, ids in self.entity_tokens[d].items()} for d in DIRECTIONS
        }

    def _encode(self, texts: Sequence[str]) -> list[tuple[int, ...]]:
        """Token ids of ``texts`` (those in ``known`` are not tokenised again)."""
        todo = [t for t in dict.fromkeys(texts) if t not in self._known]
        if todo:
            out = self.tokenizer(todo, add_special_tokens=False)["input_ids"]
            for text, ids in zip(todo, out, strict=True):
                self._known[text] = tuple(int(t) for t in ids)
            self.tokenised += len(todo)
        return [self._known[t] for t in texts]

    def tokens_by_text(self) -> dict[str, tuple[int, ...]]:
        """Token ids by text of every hyperrelation and entry entity indexed: what the
        indexes of the graph after an insert or delete reuse (``known``)."""
        view = self.view
        if self.lazy:  # the hyperrelations tokenised so far and the entries still in the graph
            out = {t: ids for t, ids in self._text_tokens.items() if ids is not None}
            for direction in DIRECTIONS:  # built for this graph: every entry is in it
                keys = list(self.entity_tokens[direction])
                for key, name in zip(keys, view.names(keys), strict=True):
                    out[name] = self.entity_tokens[direction][key]
            return out
        out = {view.rels[k].relation: ids for k, ids in self.rel_tokens.items() if k in view.rels}
        for direction in DIRECTIONS:
            for key, ids in self.entity_tokens[direction].items():
                if key in view.entities:
                    out[view.entities[key].name] = ids
        return out

    def _tokenize_rels(self) -> dict[str, tuple[int, ...]]:
        keys = sorted(self.view.rels)
        encoded = self._encode([self.view.rels[k].relation for k in keys])
        out: dict[str, tuple[int, ...]] = {}
        for key, ids in zip(keys, encoded, strict=True):
            if self.eos_id in ids:  # the terminator must not occur inside an entry
                logger.warning("hyperrelation %s holds the eos token; it is left out", key)
                continue
            out[key] = ids
        return out

    def _tokenize_entries(self, direction: str) -> dict[str, tuple[int, ...]]:
        entries = self.view.forward_entries if direction == "forward" else self.view.reverse_entries
        encoded = self._encode(self.view.names(entries))
        out: dict[str, tuple[int, ...]] = {}
        seen: dict[tuple[int, ...], str] = {}
        for key, ids in zip(entries, encoded, strict=True):
            if not ids or self.sep_id in ids or self.eos_id in ids:
                self.skipped_entities += 1
                logger.warning("entity %r tokenises to %s; not an entry", key, ids)
                continue
            if ids in seen:
                self.skipped_entities += 1
                logger.warning("entities %r and %r share tokens; keeping the first", seen[ids], key)
                continue
            seen[ids] = key
            out[key] = ids
        return out

    def entity_ids(self, key: str) -> tuple[int, ...]:
        """Token ids of an entity's display name (entries come from the tries' table)."""
        for direction in DIRECTIONS:
            ids = self.entity_tokens[direction].get(key)
            if ids is not None:
                return ids
        ids = self.tokenizer(self.view.entities[key].name, add_special_tokens=False)["input_ids"]
        return tuple(int(t) for t in ids)

    def entity_for(self, direction: str, ids: Sequence[int]) -> str | None:
        """The entity key spelled by ``ids`` (no separator), or ``None``."""
        return self._by_tokens[direction].get(tuple(ids))

    def relations(self, entity: str, direction: str) -> RelationConstraint | None:
        """The relation constraint of ``entity`` in ``direction`` (``None``: no hyperedges)."""
        key = (entity, direction)
        if key in self._relations:
            return self._relations.use(key)
        if self.lazy:
            rel_ids, tokens = self._entity_rel_tokens(entity, direction)
        else:
            rel_ids = tuple(r for r in self.view.rels_of(entity, direction) if r in self.rel_tokens)
            tokens = tuple(self.rel_tokens[r] for r in rel_ids)
        if not rel_ids:
            return None
        index = SubstringIndex(tokens, terminator_id=self.eos_id, backend=self.backend)  # type: ignore[arg-type]
        made = RelationConstraint(
            entity,
            direction,
            rel_ids,
            tokens,
            SpanConstraint(index, eos_token_id=self.eos_id, max_tokens=self.max_relation_tokens),
        )
        self._relations.add(key, made)
        return made

    def _entity_rel_tokens(
        self, entity: str, direction: str
    ) -> tuple[tuple[str, ...], tuple[tuple[int, ...], ...]]:
        """Per-query reads: the entity's hyperrelations (one batched read) and their tokens
        (texts not tokenised yet in one tokenizer call), leaving out those holding eos as the
        flat build does."""
        rel_ids = self.view.rels_of(entity, direction)
        if not rel_ids:
            return (), ()
        texts = [r.relation for r in self.view.rels.many(rel_ids).values()]  # type: ignore[attr-defined]
        todo = [t for t in dict.fromkeys(texts) if t not in self._text_tokens]
        if todo:
            out = self.tokenizer(todo, add_special_tokens=False)["input_ids"]
            for text, ids in zip(todo, out, strict=True):
                ids = tuple(int(t) for t in ids)
                self._text_tokens[text] = None if self.eos_id in ids else ids
            self.tokenised += len(todo)
        kept: list[str] = []
        tokens: list[tuple[int, ...]] = []
        for rel, text in zip(rel_ids, texts, strict=True):
            ids = self._text_tokens.use(text)
            if ids is None:
                logger.warning("hyperrelation %s holds the eos token; it is left out", rel)
                continue
            kept.append(rel)
            tokens.append(ids)
        self._text_tokens.trim()
        return tuple(kept), tuple(tokens)
