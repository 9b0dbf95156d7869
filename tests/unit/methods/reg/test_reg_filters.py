"""ReG under a metadata filter: the KG of the matching documents' triples only
(methods.reg.scope), whatever view the queries read."""

from __future__ import annotations

from typing import Any

from graphrag_integrations.methods.reg.index import RegIndex
from graphrag_integrations.testing.compliance.boundary import (
    TENANT_FILTER,
    TENANT_QUERIES,
    tenant_documents,
)
from tests.conftest import FakeEmbedder
from tests.unit.reg_fixtures import MOVIES

QUERIES = [
    "who directed the films starring [Ronald Colman]",
    "what genre is Random Harvest",
    "films of [Bette Davis]",
    "zzz qqq",  # the nearest-entity fallback
]


def two_sources() -> RegIndex:
    """MOVIES' Kismet and Random Harvest triples from document ``a``, the rest from ``b``
    (Ronald Colman, Drama and William Dieterle are in both)."""
    index = RegIndex.from_triples(MOVIES[:8], doc_id="a", embedding=FakeEmbedder())
    index.insert_triples(MOVIES[8:], "b")
    index.insert_triples([("Juarez", "has_genre", "Drama"), MOVIES[0]], "b")  # a shared triple
    return index


def results(index: RegIndex, queries: list[str], where: Any) -> list[list[tuple[Any, ...]]]:
    return [
        [(r.text, round(r.score, 5), r.explanation) for r in index.retrieve(q, k=5, filter=where)]
        for q in queries
    ]


def test_a_filter_on_doc_id_keeps_the_other_documents_triples_out() -> None:
    index = two_sources()
    alone = RegIndex.from_triples(MOVIES[:8], doc_id="a", embedding=FakeEmbedder())
    got = results(index, QUERIES, {"doc_id": "a"})
    assert any(got)
    b_only = {x for t in [*MOVIES[8:], ("Juarez", "has_genre", "Drama")] for x in t} - {
        x for t in MOVIES[:8] for x in t
    }
    for hits in got:
        for text, _, explanation in hits:
            assert explanation["doc_ids"] == ["a"]  # the shared triple names only "a"
            assert not any(name in text for name in b_only), text
    expected = [[(r.text, round(r.score, 5)) for r in alone.retrieve(q, k=5)] for q in QUERIES]
    assert [[(t, s) for t, s, _ in hits] for hits in got] == expected


def test_neighbourhood_reads_answer_a_filter_as_the_whole_view() -> None:
    index = RegIndex.from_documents(tenant_documents(), embedding=FakeEmbedder())
    expected = results(index, list(TENANT_QUERIES), TENANT_FILTER)
    assert any(expected)
    index.store.neighbourhood_reads = True
    assert results(index, list(TENANT_QUERIES), TENANT_FILTER) == expected


def test_a_filter_follows_inserts_and_deletes() -> None:
    index = RegIndex.from_documents(tenant_documents("B"), embedding=FakeEmbedder())
    query = TENANT_QUERIES[1]
    assert index.retrieve(query, k=3, filter=TENANT_FILTER) == []  # no tenant-A document yet
    index.insert(tenant_documents("A"))
    hits = index.retrieve(query, k=3, filter=TENANT_FILTER)
    assert hits and all(h.passage.metadata["tenant"] == "A" for h in hits)
    for doc in ("a1", "a2", "a3"):
        assert index.delete(doc)
    assert index.retrieve(query, k=3, filter=TENANT_FILTER) == []
