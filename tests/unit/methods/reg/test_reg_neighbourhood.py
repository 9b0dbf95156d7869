"""ReG queries reading per-query neighbourhoods (database graphs) == reading the whole view."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from graphrag_integrations.core.graph.networkx_store import GraphStore
from graphrag_integrations.methods.reg.index import RegIndex
from graphrag_integrations.methods.reg.params import RegQueryParams
from graphrag_integrations.methods.reg.scorer import TripleScorer
from graphrag_integrations.methods.reg.store import RegStore
from tests.conftest import FakeEmbedder
from tests.unit.reg_fixtures import MOVIES, movie_index

#: (query, topic entities): bracketed, named, two named, an unknown bracket, the
#: nearest-entity fallback, given topic entities (a hub among them).
QUERIES: list[tuple[str, list[str] | None]] = [
    ("who directed the films starring [Ronald Colman]", None),
    ("what genre is Random Harvest", None),
    ("who starred in random harvest and kismet", None),
    ("films of [Bette Davis] and [Nobody]", None),
    ("zzz qqq", None),
    ("which drama films", ["Drama"]),
    ("who wrote films of William Dieterle", ["William Dieterle", "Kismet"]),
]
#: Subgraph bounds: the defaults, a hub limit (Drama, Ronald Colman... are hubs), a cut.
BOUNDS: list[dict[str, Any]] = [
    {},
    {"max_degree": 2},
    {"max_triples": 5},
    {"subgraph_hops": 1, "max_degree": 3, "max_triples": 7},
]
EXTRA = [
    ("Kismet", "written_by", "Edward Knoblock"),
    ("Juarez", "has_genre", "Drama"),
    ("Edward Knoblock", "starred_actors", "Bette Davis"),
]


def evidence(index: RegIndex) -> list[Any]:
    """Anchors, top-K triples with scores, chains (rendered) and answers of every query."""
    out = []
    for query, topics in QUERIES:
        chains, top, anchors, view = index.evidence_in_view(query, topic_entities=topics)
        out.append(
            (
                anchors,
                [(t.triple, t.score) for t in top],
                [(c.render(view), c.score, [view.entities[t] for t in c.targets]) for c in chains],
            )
        )
    return out


def passages(index: RegIndex) -> list[Any]:
    return [
        [(r.text, r.score, r.explanation) for r in index.retrieve(query, k=3)]
        for query, topics in QUERIES
        if topics is None
    ]


def refuse(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("a query read the whole graph")


def no_whole_graph_reads(index: RegIndex, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make building the whole-graph view or listing nodes or edges fail."""
    monkeypatch.setattr(index.store, "view", refuse)
    monkeypatch.setattr(index.store.index_store.graph, "nodes", refuse)
    monkeypatch.setattr(index.store.index_store.graph, "edges", refuse)


def trained(index: RegIndex) -> RegIndex:
    """``index`` with a (seeded, untrained) MLP scorer: scores through the relation table."""
    import torch

    torch.manual_seed(0)
    p = index.index_params
    dde = 2 * (1 + p.dde_rounds + p.dde_reverse_rounds)
    index.scorer = TripleScorer(index.embedder.dimension, dde, 16)
    return index


@pytest.mark.parametrize("bounds", BOUNDS)
@pytest.mark.parametrize("scorer", [False, True])
def test_neighbourhood_reads_give_the_same_results_as_the_view(
    bounds: dict[str, Any], scorer: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    def build() -> RegIndex:
        index = movie_index(query_params=RegQueryParams(**bounds))
        return trained(index) if scorer else index

    whole = build()
    expected, expected_passages = evidence(whole), passages(whole)
    assert any(sub for _, _, sub in expected)
    lazy = build()
    lazy.store.neighbourhood_reads = True
    monkeypatch.setattr(lazy.store, "view", refuse)
    with monkeypatch.context() as patch:
        no_whole_graph_reads(lazy, patch)
        assert evidence(lazy) == expected
    assert passages(lazy) == expected_passages  # (a small cut fills from the whole KG)
    assert lazy.stats == whole.stats


def test_hubs_are_counted_not_read_and_the_cache_is_bounded() -> None:
    index = movie_index(query_params=RegQueryParams(max_degree=2))
    index.store.neighbourhood_reads = True
    reads = index.neighbourhood
    assert reads is not None
    index.retrieve_triples("[Kismet]")
    cached = reads.cache.get(["Drama", "Kismet", "Ronald Colman"])
    assert cached["Kismet"].out is not None  # the anchor: expanded
    assert cached["Drama"].degree == 3 and cached["Drama"].out is None  # a hub: counted only
    calls = dict(reads.reads)
    index.retrieve_triples("[Kismet]")
    assert reads.reads == calls  # answered from the cache
    reads.cache.capacity = 2
    index.retrieve_triples("[Juarez]")
    assert len(reads.cache) == 2


def test_insert_and_delete_then_query_still_match(monkeypatch: pytest.MonkeyPatch) -> None:
    whole, lazy = movie_index(), movie_index()
    lazy.store.neighbourhood_reads = True
    assert evidence(lazy) == evidence(whole)  # fills the cache and the name table
    for index in (whole, lazy):
        index.insert_triples(EXTRA, "extra")
    assert lazy.link_entities("who is edward knoblock") == ["Edward Knoblock"]
    assert evidence(lazy) == evidence(whole)
    for index in (whole, lazy):
        assert index.delete("movies")
    assert evidence_of(lazy, "[Kismet]") == evidence_of(whole, "[Kismet]")
    assert not lazy.has_entity("Random Harvest")


def evidence_of(index: RegIndex, query: str) -> Any:
    chains, top, anchors, view = index.evidence_in_view(query)
    return anchors, [(t.triple, t.score) for t in top], [c.render(view) for c in chains]


def test_an_in_process_graph_reads_the_view_by_default() -> None:
    index = movie_index()
    assert not index.store.reads_lazily and index.neighbourhood is None
    index.store.neighbourhood_reads = True
    assert index.store.reads_lazily and index.neighbourhood is not None


@pytest.mark.falkordb_server
def test_falkordb_index_reads_neighbourhoods_with_networkx_results(
    falkordb_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from graphrag_integrations.core.graph.falkordb_graph import FalkorDBGraph

    whole = trained(movie_index(query_params=RegQueryParams(max_degree=3)))
    built = trained(
        RegIndex.from_triples(
            MOVIES,
            doc_id="movies",
            embedding=FakeEmbedder(),
            query_params=RegQueryParams(max_degree=3),
            graph_store=FalkorDBGraph.at(falkordb_url),
        )
    )
    assert built.store.reads_lazily
    assert evidence(built) == evidence(whole)
    built.persist(tmp_path / "index")
    with monkeypatch.context() as patch:
        patch.setattr(GraphStore, "load", refuse)  # the graph stays in the database
        patch.setattr(RegStore, "view", refuse)  # not read whole at load either
        index = trained(RegIndex.load(tmp_path / "index", embedding=FakeEmbedder()))
    assert index.store.reads_lazily

    def same() -> None:
        expected = evidence(whole)
        with monkeypatch.context() as patch:
            no_whole_graph_reads(index, patch)
            assert evidence(index) == expected

    same()
    assert passages(index) == passages(whole)
    for each in (whole, index):
        each.insert_triples(EXTRA, "extra")
    same()
    for each in (whole, index):
        assert each.delete("extra")
    same()
