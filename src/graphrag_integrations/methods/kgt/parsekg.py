"""Parsing-based KG construction (paper §3.2, appendix F.2): sentences become hyperedges.

Each passage is parsed once by spaCy (:class:`~graphrag_integrations.core.text.nlp.SpacyNLP`):

* every sentence ``s`` gives one hyperrelation ``r_s``: the sentence with each named entity
  replaced by ``"##"`` (``Sentence.masked``);
* its entities are split into **head** entities ``H_s`` - a token of the mention is
  ``nsubj``/``nsubjpass`` AND the label is not one of the nine types of F.2 (DATE, QUANTITY,
  PERCENT, TIME, LANGUAGE, MONEY, ORDINAL, NORP, CARDINAL) - and **tail** entities
  ``T_s = E_s \\ H_s`` (so ``H_s`` and ``T_s`` are disjoint even when a name occurs twice);
* the hyperedge is directed ``H_s -> T_s`` and keeps its sentence and passage (provenance).

Entities are keyed by :func:`~graphrag_integrations.core.text.nlp.normalize_entity`, the same
function the query side uses. The mention text and label of each occurrence are kept on the
incidence, so the display name of an entity is derived from the current graph (see
:mod:`~graphrag_integrations.methods.kgt.store`) and a delete equals a rebuild.

Examples
--------
>>> from graphrag_integrations.core.text.nlp import Entity, ParsedText, Sentence
>>> from graphrag_integrations.core.types import Passage
>>> text = "Emily Rapp (born 1974) is an American memoirist."
>>> ents = (Entity("Emily Rapp", "PERSON", 0, 10, True, "emily rapp"),
...         Entity("1974", "DATE", 17, 21, False, "1974"),
...         Entity("American", "NORP", 29, 37, False, "american"))
>>> parsed = ParsedText(text, (Sentence(text, 0, len(text), ents),))
>>> (edge,) = hyperedges(Passage("p", text, "d"), parsed)
>>> edge.relation
'## (born ##) is an ## memoirist.'
>>> edge.heads, edge.tails
(('emily rapp',), ('1974', 'american'))
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from graphrag_integrations.core.text.documents import content_id
from graphrag_integrations.core.text.nlp import ParsedText
from graphrag_integrations.core.types import Passage
from graphrag_integrations.methods.kgt.params import PAPER_EXCLUDED_HEAD_LABELS


@dataclass(frozen=True)
class Mention:
    """One entity occurrence in a sentence: normalised key, surface text, spaCy label."""

    key: str
    text: str
    label: str


@dataclass(frozen=True)
class Hyperedge:
    """A sentence as a directed hyperedge ``heads -> tails`` of the ParseKG.

    Attributes
    ----------
    id : str
        ``content_id(passage_id, position)``.
    passage_id, doc_id : str
        Provenance (passage and source document).
    position : int
        Sentence number inside the passage.
    sentence : str
        The sentence as written.
    relation : str
        The hyperrelation: the sentence with every entity masked.
    heads, tails : tuple of str
        Normalised keys of the head and tail entities (disjoint, first-occurrence order).
    mentions : tuple of Mention
        Every entity occurrence (for display names and labels).
    """

    id: str
    passage_id: str
    doc_id: str
    position: int
    sentence: str
    relation: str
    heads: tuple[str, ...]
    tails: tuple[str, ...]
    mentions: tuple[Mention, ...]


def hyperedges(
    passage: Passage,
    parsed: ParsedText,
    *,
    excluded_head_labels: Iterable[str] = PAPER_EXCLUDED_HEAD_LABELS,
    mask: str = "##",
) -> list[Hyperedge]:
    """The hyperedges of one parsed passage, one per sentence (entity-free ones included).

    Sentences without entities are hyperrelations too (Table 5 counts ``#r == #s``); they
    connect nothing, so no clue can reach them.
    """
    excluded = frozenset(excluded_head_labels)
    out: list[Hyperedge] = []
    for position, sentence in enumerate(parsed.sentences):
        heads: dict[str, None] = {}
        for ent in sentence.entities:
            if ent.is_subject and ent.label not in excluded:
                heads[ent.norm] = None
        tails: dict[str, None] = {}
        for ent in sentence.entities:
            if ent.norm not in heads:
                tails[ent.norm] = None
        out.append(
            Hyperedge(
                id=content_id(passage.id, str(position)),
                passage_id=passage.id,
                doc_id=passage.doc_id,
                position=position,
                sentence=sentence.text,
                relation=sentence.masked(mask),
                heads=tuple(heads),
                tails=tuple(tails),
                mentions=tuple(Mention(e.norm, e.text, e.label) for e in sentence.entities),
            )
        )
    return out


@dataclass(frozen=True)
class ParseKGStats:
    """Graph statistics as in the paper's Table 5.

    Attributes
    ----------
    passages, sentences : int
        ``#p`` and ``#s``.
    entities : int
        ``#e``: distinct entities (normalised names).
    hyperrelations : int
        ``#r`` (= ``#s``: one per sentence).
    entry_entities : int
        ``#h``: entities that are a head somewhere.
    non_entry_entities : int
        ``#t`` = ``#e - #h``.
    head_incidences : int
        ``#h -> r``: (head entity, hyperrelation) pairs.
    tail_incidences : int
        ``#r -> t``: (hyperrelation, tail entity) pairs.
    """

    passages: int
    sentences: int
    entities: int
    hyperrelations: int
    entry_entities: int
    non_entry_entities: int
    head_incidences: int
    tail_incidences: int

    def as_table(self) -> str:
        """Markdown rows in the order of Table 5.

        Examples
        --------
        >>> print(ParseKGStats(1, 2, 3, 2, 1, 2, 1, 3).as_table().splitlines()[2])
        | # of passages (p) | 1 |
        """
        rows = [
            ("# of passages (p)", self.passages),
            ("# of sentences (s)", self.sentences),
            ("# of total entities (e)", self.entities),
            ("# of total hyperrelations (r)", self.hyperrelations),
            ("# of entry entities (h)", self.entry_entities),
            ("# of non-entry entities (t)", self.non_entry_entities),
            ("# of h -> r", self.head_incidences),
            ("# of r -> t", self.tail_incidences),
        ]
        lines = ["| statistic | value |", "|---|---:|"]
        lines += [f"| {name} | {value:,} |" for name, value in rows]
        return "\n".join(lines)
