"""ParseKG construction (paper §3.2, F.2): hyperedges, head/tail roles, Table 5 statistics."""

from __future__ import annotations

import pytest

from graphrag_integrations.core.text.nlp import (
    Entity,
    ParsedText,
    Sentence,
    SpacyNLP,
    normalize_entity,
)
from graphrag_integrations.core.types import Passage
from graphrag_integrations.methods.kgt.params import PAPER_EXCLUDED_HEAD_LABELS, KGTIndexParams
from graphrag_integrations.methods.kgt.parsekg import ParseKGStats, hyperedges


def _ent(text: str, label: str, start: int, subject: bool) -> Entity:
    return Entity(text, label, start, start + len(text), subject, normalize_entity(text))


def test_heads_are_subjects_of_allowed_types_and_disjoint_from_tails() -> None:
    text = "In 1990 Bob and Bob met Alice in Paris."
    ents = (
        _ent("1990", "DATE", 3, True),  # a DATE subject is never a head (F.2)
        _ent("Bob", "PERSON", 8, True),
        _ent("Bob", "PERSON", 16, False),  # same entity again, not subject: stays a head
        _ent("Alice", "PERSON", 24, False),
        _ent("Paris", "GPE", 33, False),
    )
    parsed = ParsedText(text, (Sentence(text, 0, len(text), ents),))
    (edge,) = hyperedges(Passage("p", text, "d"), parsed)
    assert edge.heads == ("bob",)
    assert edge.tails == ("1990", "alice", "paris")
    assert set(edge.heads).isdisjoint(edge.tails)
    assert edge.relation == "In ## ## and ## met ## in ##."
    assert edge.sentence == text and edge.passage_id == "p" and edge.doc_id == "d"


def test_excluded_labels_are_a_parameter() -> None:
    text = "Germans built it."
    parsed = ParsedText(text, (Sentence(text, 0, len(text), (_ent("Germans", "NORP", 0, True),)),))
    assert hyperedges(Passage("p", text, "d"), parsed)[0].heads == ()
    edge = hyperedges(Passage("p", text, "d"), parsed, excluded_head_labels=())[0]
    assert edge.heads == ("germans",)
    assert KGTIndexParams().excluded_head_labels == PAPER_EXCLUDED_HEAD_LABELS
    assert len(PAPER_EXCLUDED_HEAD_LABELS) == 9


def test_real_spacy_parse() -> None:
    text = "Marie Curie was born in Warsaw in 1867. She liked it."
    parsed = SpacyNLP().parse(text)
    edges = hyperedges(Passage("p", text, "d"), parsed)
    assert len(edges) == 2  # one hyperedge per sentence, entity-free ones included
    first = edges[0]
    assert first.heads == ("marie curie",)  # nsubjpass
    assert set(first.tails) == {"warsaw", "1867"}
    assert first.relation == "## was born in ## in ##."
    assert edges[1].heads == edges[1].tails == () and edges[1].relation == "She liked it."
    assert [e.position for e in edges] == [0, 1]
    assert len({e.id for e in edges}) == 2


def test_stats_table_rows() -> None:
    stats = ParseKGStats(10, 40, 30, 40, 12, 18, 20, 50)
    table = stats.as_table()
    assert "| # of entry entities (h) | 12 |" in table
    assert "| # of r -> t | 50 |" in table


@pytest.mark.parametrize("bad", [0, -1])
def test_index_params_validate(bad: int) -> None:
    with pytest.raises(ValueError, match="max_relation_tokens"):
        KGTIndexParams(max_relation_tokens=bad)
    assert KGTIndexParams.from_dict(KGTIndexParams().to_dict()) == KGTIndexParams()
    with pytest.raises(ValueError, match="unknown"):
        KGTIndexParams.from_dict({"nope": 1})
