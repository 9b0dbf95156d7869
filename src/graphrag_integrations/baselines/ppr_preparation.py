"""The per-passage half of a PPR build: spaCy entities per sentence, and the vectors of the
passages, their sentences (the "facts") and their entity names.

The extraction is Clue-RAG's (the shared :class:`~graphrag_integrations.core.text.nlp.SpacyNLP`
and :func:`~graphrag_integrations.core.text.nlp.normalize_entity`): a passage's entities are the
named entities of its sentences (labels in ``excluded_labels`` left out) plus, with
``link_title``, its title (``metadata["title"]``), which also joins every sentence. A sentence
is a fact when it has at least one entity; it is embedded as ``"title: sentence"`` with
``title_prefix``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from graphrag_integrations.baselines.ppr_params import PPRIndexParams
from graphrag_integrations.core.encoders.embeddings import Embedder, FloatMatrix
from graphrag_integrations.core.retrieval.ppr_graph import PassageEntities
from graphrag_integrations.core.text.chunking import split_title
from graphrag_integrations.core.text.nlp import ParsedText, SpacyNLP, normalize_entity
from graphrag_integrations.core.types import Passage

__all__ = ["PPRPreparer", "PassageEntities", "PreparedPassages", "passage_entities"]


@dataclass
class PreparedPassages:
    """A prepared batch: passages, their vectors, entities, fact vectors (passage order) and
    the vector of every entity name they mention."""

    passages: list[Passage]
    vectors: FloatMatrix
    entities: list[PassageEntities]
    fact_vectors: FloatMatrix
    entity_vectors: dict[str, FloatMatrix] = field(default_factory=dict)


def passage_entities(
    title: str, parsed: ParsedText, params: PPRIndexParams
) -> tuple[PassageEntities, list[str]]:
    """The entities of a parsed passage body and the texts of its facts.

    Examples
    --------
    >>> from graphrag_integrations.core.text.nlp import Entity, Sentence
    >>> e = Entity("Rome", "GPE", 0, 4, True, "rome")
    >>> parsed = ParsedText("Rome is old. It is big.", (Sentence("Rome is old.", 0, 12, (e,)),
    ...                                                   Sentence("It is big.", 13, 23)))
    >>> ents, texts = passage_entities("Rome", parsed, PPRIndexParams())
    >>> ents
    PassageEntities(names=('rome',), facts=(('rome',), ('rome',)))
    >>> texts
    ['Rome: Rome is old.', 'Rome: It is big.']
    """
    excluded = params.excluded_labels
    title_key = normalize_entity(title) if (title and params.link_title) else ""
    names: dict[str, None] = {title_key: None} if title_key else {}
    facts: list[tuple[str, ...]] = []
    texts: list[str] = []
    for sent in parsed.sentences:
        found = [title_key] if title_key else []
        found.extend(e.norm for e in sent.entities if e.label not in excluded)
        unique = tuple(dict.fromkeys(found))
        if not unique:
            continue
        names.update(dict.fromkeys(unique))
        facts.append(unique)
        texts.append(f"{title}: {sent.text}" if (title and params.title_prefix) else sent.text)
    return PassageEntities(tuple(names), tuple(facts)), texts


@dataclass
class PPRPreparer:
    """``preparer(passages) -> PreparedPassages`` (picklable: the parser and embedder load
    their models lazily).

    Examples
    --------
    >>> from graphrag_integrations.testing.fake_embedder import FakeEmbedder
    >>> prep = PPRPreparer(SpacyNLP(), FakeEmbedder(8), PPRIndexParams())
    >>> batch = prep([Passage("p", "Obama visited Paris.", "d")])
    >>> batch.entities[0].names, sorted(batch.entity_vectors), batch.fact_vectors.shape
    (('obama', 'paris'), ['obama', 'paris'], (1, 8))
    """

    parser: SpacyNLP
    embedder: Embedder
    params: PPRIndexParams
    show_progress: bool = False

    def __call__(self, passages: Sequence[Passage]) -> PreparedPassages:
        titled = [split_title(p) for p in passages]
        parsed = self.parser.parse_many([body for _, body in titled], self.show_progress)
        entities: list[PassageEntities] = []
        fact_texts: list[str] = []
        for (title, _), doc in zip(titled, parsed, strict=True):
            ents, texts = passage_entities(title, doc, self.params)
            entities.append(ents)
            fact_texts.extend(texts)
        names = list(dict.fromkeys(n for e in entities for n in e.names))
        progress = self.show_progress
        vectors = self.embedder.embed([p.text for p in passages], show_progress=progress)
        facts = self._embed(fact_texts, progress)
        named = self._embed(names, False)
        return PreparedPassages(
            list(passages),
            np.asarray(vectors, dtype=np.float32),
            entities,
            facts,
            {name: named[i] for i, name in enumerate(names)},
        )

    def _embed(self, texts: list[str], progress: bool) -> FloatMatrix:
        if not texts:
            return np.zeros((0, self.embedder.dimension), dtype=np.float32)
        return np.asarray(self.embedder.embed(texts, show_progress=progress), dtype=np.float32)
