"""KG-Translator's per-query graph reads: the same answers as the flat view, without it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import pytest

from graphrag_integrations.core.graph.networkx_store import GraphStore
from graphrag_integrations.errors import IndexMismatchError
from graphrag_integrations.methods.kgt.index import ParseKGTranslatorRetriever
from graphrag_integrations.methods.kgt.reads import ParseKGReads
from graphrag_integrations.methods.kgt.store import ParseKGView
from graphrag_integrations.methods.kgt.summary import ParseKGSummary
from tests.conftest import FakeEmbedder
from tests.unit.kgt_fixtures import KGT_CORPUS, documents, make_kgt

QUESTIONS = [
    "Where was Marie Curie born?",
    "Who managed Nottingham Forest?",
    "Where is Paris?",
    "What flows through Warsaw?",
]
#: The paper's traced ranking (only what clues reach) and the product default (RRF, lazy
#: passage vectors: the dense ranking embeds the corpus on first use).
MODES: dict[str, dict[str, Any]] = {
    "paper": {"preset": "paper"},
    "default": {},
}


def answers(index: ParseKGTranslatorRetriever, **options: Any) -> list[Any]:
    out = []
    with index.using_query_params(replace(index.query_params, **options)):
        for q in QUESTIONS:
            hits = index.retrieve(q, k=5)
            out.append([(h.id, round(h.score, 6), h.explanation["source"], h.text) for h in hits])
    return out


def refuse(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("the whole graph was read")


def same_summary(index: ParseKGTranslatorRetriever) -> None:
    """The maintained summary equals one computed from the whole graph."""
    kept, scanned = index.store.summary, index.store._scan_summary()
    assert kept.head == scanned.head
    assert kept.tables == scanned.tables


@pytest.mark.parametrize("mode", sorted(MODES))
def test_per_query_reads_on_networkx_equal_the_flat_view(
    lm: Any, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    flat = make_kgt(lm, **MODES[mode])
    expected = answers(flat)
    index = make_kgt(lm, graph_view="neighbourhood", **MODES[mode])
    monkeypatch.setattr(ParseKGView, "__init__", refuse)
    assert isinstance(index.view, ParseKGReads)
    assert answers(index) == expected
    # a tiny cache evicts all the time: still the same answers
    assert answers(index, cache_nodes=3) == expected
    assert index.stats() == flat.stats()
    assert index.view.fingerprint() == flat.view.fingerprint()
    assert index.view.forward_entries == flat.view.forward_entries
    assert index.view.reverse_entries == flat.view.reverse_entries
    ix = index.constraint_indexes
    assert ix.rel_tokens == {}  # no hyperrelation tokenised up front
    assert ix.entity_tokens == flat.constraint_indexes.entity_tokens
    reads = index.view
    assert isinstance(reads, ParseKGReads) and 0 < len(reads.cache) <= 4096


def test_per_query_reads_do_not_list_the_graph_in_the_traced_mode(
    lm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = answers(make_kgt(lm, preset="paper", passage_vectors="build"))
    index = make_kgt(lm, preset="paper", passage_vectors="build", graph_view="neighbourhood")
    index.constraint_indexes  # noqa: B018 - the entry tries (from the summary)
    monkeypatch.setattr(index.store.index_store.graph, "nodes", refuse)
    monkeypatch.setattr(ParseKGView, "__init__", refuse)
    assert answers(index) == expected


def test_insert_and_delete_keep_the_summary_and_the_answers(lm: Any) -> None:
    full = make_kgt(lm, preset="paper")
    base = make_kgt(lm, KGT_CORPUS[:-1], preset="paper")
    grown = make_kgt(lm, KGT_CORPUS[:-1], preset="paper", graph_view="neighbourhood")
    answers(grown)  # the constraint indexes are in use: updated by the insert
    grown.insert(documents(KGT_CORPUS[-1:]))
    same_summary(grown)
    assert answers(grown) == answers(full)
    assert grown.stats() == full.stats()
    assert grown.view.fingerprint() == full.view.fingerprint()
    assert grown.store.document_ids() == full.store.document_ids()
    assert grown.delete(KGT_CORPUS[-1][0]) and not grown.delete(KGT_CORPUS[-1][0])
    same_summary(grown)
    assert grown.view.fingerprint() == base.view.fingerprint()
    assert answers(grown) == answers(base)
    assert grown.store.summary.tables.documents.keys() == {t for t, _ in KGT_CORPUS[:-1]}


def test_summary_fingerprint_is_order_free_and_undone_by_removal() -> None:
    rows = [("a", "A", "PERSON", "head"), ("b", "B", "GPE", "tail")]
    one = ParseKGSummary.empty()
    one.add_rel("r1", "## went to ##.", rows)
    one.add_rel("r2", "## is big.", [("b", "B city", "GPE", "head")])
    two = ParseKGSummary.empty()
    two.add_rel("r2", "## is big.", [("b", "B city", "GPE", "head")])
    two.add_rel("r1", "## went to ##.", rows)
    assert one.fingerprint() == two.fingerprint() and one.head == two.head
    two.remove_rel("r2", "## is big.", [("b", "B city", "GPE", "head")])
    only = ParseKGSummary.empty()
    only.add_rel("r1", "## went to ##.", rows)
    assert two.head == only.head and two.tables == only.tables
    assert two.entries("forward", frozenset()) == ["a"]
    assert two.entries("reverse", frozenset({"GPE"})) == []


def test_persist_load_keeps_the_summary_and_the_constraint_cache(
    lm: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    flat = make_kgt(lm, preset="paper")
    expected = answers(flat)
    index = make_kgt(lm, preset="paper", graph_view="neighbourhood")
    assert answers(index) == expected
    index.persist(tmp_path / "idx")
    assert (tmp_path / "idx" / "parsekg" / "summary.json").is_file()
    monkeypatch.setattr(ParseKGView, "__init__", refuse)
    loaded = ParseKGTranslatorRetriever.load(
        tmp_path / "idx", embedding=FakeEmbedder(), translator=lm
    )
    assert loaded.query_params.graph_view == "neighbourhood"  # recorded with the index
    assert answers(loaded) == expected
    assert loaded.counters["constraint_cache_hits"] == 1
    assert loaded.counters["constraint_builds"] == 0
    # the flat view reads the per-query cache (no hyperrelation tokens): rebuilt, same answers
    monkeypatch.undo()
    again = ParseKGTranslatorRetriever.load(
        tmp_path / "idx", embedding=FakeEmbedder(), translator=lm
    )
    assert answers(again, graph_view="flat") == expected
    assert again.counters["constraint_builds"] == 1  # the flat indexes need every relation


@pytest.mark.falkordb_server
def test_falkordb_index_reads_per_query_with_the_flat_answers(
    lm: Any, falkordb_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = make_kgt(lm, KGT_CORPUS[:-1], preset="paper")
    full = make_kgt(lm, preset="paper")
    before, after = answers(base), answers(full)
    index = make_kgt(lm, KGT_CORPUS[:-1], preset="paper", graph_store=falkordb_url)
    assert index.store.reads_per_query  # the default with a database graph
    with monkeypatch.context() as m:
        m.setattr(ParseKGView, "__init__", refuse)
        assert answers(index) == before
        index.insert(documents(KGT_CORPUS[-1:]))
        assert answers(index) == after
        assert index.stats() == full.stats()
        same_summary(index)
        index.persist(tmp_path / "idx")
        m.setattr(GraphStore, "load", refuse)  # the graph stays in the database
        loaded = ParseKGTranslatorRetriever.load(
            tmp_path / "idx", embedding=FakeEmbedder(), translator=lm
        )
        m.setattr(loaded.store.index_store.graph, "nodes", refuse)
        assert answers(loaded) == after
        assert loaded.counters["constraint_cache_hits"] == 1
        assert not loaded.store.summary.tables_loaded  # counts and fingerprint only
        assert loaded.delete(KGT_CORPUS[-1][0])
        assert answers(loaded) == before
    assert loaded.stats() == base.stats()
    same_summary(loaded)


@pytest.mark.falkordb_server
def test_falkordb_index_loads_after_queries_embedded_passages_lazily(
    lm: Any, falkordb_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    index = make_kgt(lm, graph_store=falkordb_url)  # the default: lazy passage vectors
    assert index.index_params.passage_vectors != "build"
    index.persist(tmp_path / "idx")
    saved = index.store.vector_count()
    expected = answers(index)  # embeds passages: pvec nodes in the server's graph
    assert index.store.vector_count() > saved
    stats = index.stats()
    with caplog.at_level("INFO", logger="graphrag_integrations.core.index.store_loading"):
        loaded = ParseKGTranslatorRetriever.load(
            tmp_path / "idx", embedding=FakeEmbedder(), translator=lm
        )
    assert "without a saved vector" in caplog.text
    assert loaded.store.vector_count() == saved  # the cache nodes went, nothing else
    assert loaded.stats() == stats
    same_summary(loaded)
    assert answers(loaded) == expected  # re-embedded when needed
    loaded.persist(tmp_path / "idx", overwrite=True)
    again = ParseKGTranslatorRetriever.load(
        tmp_path / "idx", embedding=FakeEmbedder(), translator=lm
    )
    assert again.store.vector_count() == loaded.store.vector_count()
    assert answers(again) == expected
    # a saved vector without its graph node is still a corrupt index
    graph = again.store.index_store.graph
    assert cast(Any, graph).remove_nodes(graph.nodes("pvec")[:1])
    with pytest.raises(IndexMismatchError, match="do not match"):
        ParseKGTranslatorRetriever.load(tmp_path / "idx", embedding=FakeEmbedder(), translator=lm)
