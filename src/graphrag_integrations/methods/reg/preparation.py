"""The per-passage half of a ReG build from text: parse, extract triples, embed their names.

:class:`RegPreparer` parses a batch of passages with spaCy (one parse per passage), extracts
each passage's triples (:func:`~.kg.triples_from_parses`) and embeds every entity name and
relation text the batch names (:func:`~.store.relation_text`). It never reads the index, so an
executor can run it on workers (a pickled copy loads its models there);
``RefinedSubgraphRetriever.merge`` adds the prepared batches to the KG in input order, one
document at a time, embedding nothing that a batch already embedded. Adding text passages to
the index is that merge of this preparation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from graphrag_integrations.core.encoders.embeddings import Embedder, FloatMatrix
from graphrag_integrations.core.text.nlp import SpacyNLP
from graphrag_integrations.core.types import Passage
from graphrag_integrations.methods.reg.kg import Triple, triples_from_parses
from graphrag_integrations.methods.reg.store import ENTITY, LAYERS, RELATION, relation_text

__all__ = ["PreparedTriples", "RegPreparer"]


@dataclass
class PreparedTriples:
    """What a batch of passages adds to a ReG index (picklable).

    Parameters
    ----------
    passages : list of Passage
        The passages, in input order.
    triples : list of list of tuple
        The triples of each passage (row per passage; possibly empty).
    vectors : dict
        ``{"entities": {name: vector}, "relations": {relation: vector}}`` of every entity and
        relation the triples name.
    """

    passages: list[Passage]
    triples: list[list[Triple]]
    vectors: dict[str, dict[str, FloatMatrix]] = field(default_factory=dict)


@dataclass
class RegPreparer:
    """Prepare batches of text passages for a ReG index (see the module notes).

    Examples
    --------
    >>> from graphrag_integrations.testing.fake_embedder import FakeEmbedder
    >>> prep = RegPreparer(FakeEmbedder(8), SpacyNLP())
    >>> out = prep([Passage("p1", "Marie Curie lived in Paris.", "d1")])
    >>> out.triples
    [[('marie curie', '## lived in ##.', 'paris')]]
    >>> sorted(out.vectors["entities"]), list(out.vectors["relations"])
    (['marie curie', 'paris'], ['## lived in ##.'])
    """

    embedder: Embedder
    parser: SpacyNLP
    show_progress: bool = False

    def __call__(self, passages: Sequence[Passage]) -> PreparedTriples:
        """Triples of ``passages`` and the vectors of the names they hold."""
        batch = list(passages)
        parses = self.parser.parse_many([p.text for p in batch], show_progress=self.show_progress)
        triples = [triples_from_parses([parsed]) for parsed in parses]
        entities = list(dict.fromkeys(x for ts in triples for h, _, t in ts for x in (h, t)))
        relations = list(dict.fromkeys(r for ts in triples for _, r, _ in ts))
        vectors: dict[str, dict[str, FloatMatrix]] = {LAYERS[ENTITY]: {}, LAYERS[RELATION]: {}}
        if entities:
            vectors[LAYERS[ENTITY]] = dict(
                zip(entities, self.embedder.embed(entities), strict=True)
            )
        if relations:
            embedded = self.embedder.embed([relation_text(r) for r in relations])
            vectors[LAYERS[RELATION]] = dict(zip(relations, embedded, strict=True))
        return PreparedTriples(batch, triples, vectors)
