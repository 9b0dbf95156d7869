"""Term search on a real FalkorDB server: every node holding a word is found, whatever the
word (stop words, digits, non-ASCII, underscores), the index follows writes, and it can be
dropped and made again."""

from __future__ import annotations

from typing import Any

import pytest

from graphrag_integrations.core.graph.falkordb_connection import connect, parse_falkordb_url
from graphrag_integrations.core.graph.networkx_store import GraphStore
from graphrag_integrations.core.graph.term_search import (
    MAX_TERM_BYTES,
    TermSearch,
    searchable,
    term_search,
    term_text,
)


def test_words_and_what_is_searchable() -> None:
    assert term_text(["b", "a", "b"]) == "b a"
    assert searchable("the") and searchable("1990") and searchable("straße")
    assert searchable("x" * MAX_TERM_BYTES) and not searchable("x" * (MAX_TERM_BYTES + 1))
    assert not searchable("é" * (MAX_TERM_BYTES // 2 + 1))  # counted in UTF-8 bytes
    assert not searchable("") and not searchable("two words") and not searchable("a-b")
    assert term_search(GraphStore()) is None


@pytest.mark.falkordb_server
def test_falkordb_finds_every_node_holding_a_word(falkordb_url: str) -> None:
    from graphrag_integrations.core.graph.falkordb_graph import FalkorDBGraph

    graph: Any = FalkorDBGraph.at(falkordb_url)()
    assert isinstance(graph, TermSearch) and term_search(graph) is graph
    words = ["the", "a", "of", "1990", "straße", "北京大学", "x1_y2", "café", "z" * MAX_TERM_BYTES]
    for i, word in enumerate(words):
        graph.add_node(f"c{i}", "chunk", {"d"}, terms=term_text(["pre", word, "post"]))
    graph.add_node("u0", "unit", {"d"}, terms="pre the")
    graph.add_node("bare", "chunk", {"d"})
    assert not graph.has_term_index("terms")
    assert graph.nodes_without("terms", "chunk") == ["bare"]
    graph.index_terms("terms")
    assert graph.has_term_index("terms")
    for i, word in enumerate(words):
        assert f"c{i}" in graph.nodes_with_term("terms", word, "chunk"), word
    assert sorted(graph.nodes_with_term("terms", "pre")) == sorted(
        [*(f"c{i}" for i in range(9)), "u0"]
    )
    assert graph.nodes_with_term("terms", "nowhere") == []
    with pytest.raises(ValueError, match="searchable"):
        graph.nodes_with_term("terms", "z" * (MAX_TERM_BYTES + 1))
    # later writes and deletes are indexed
    graph.add_node("bare", "chunk", (), terms="late")
    assert graph.nodes_with_term("terms", "late", "chunk") == ["bare"]
    graph.remove_nodes(["c0"])
    assert "c0" not in graph.nodes_with_term("terms", "pre")
    # dropped (by hand) and made again: the label keeps its options, no stop words
    location = parse_falkordb_url(falkordb_url)
    connect(location).select_graph(location.graph).query("CALL db.idx.fulltext.drop('Node')")
    assert not graph.has_term_index("terms")
    graph.index_terms("terms")
    assert graph.nodes_with_term("terms", "of", "chunk") == ["c2"]
