from __future__ import annotations

from pathlib import Path

import pytest

from graphrag_integrations.core.text.nlp import Entity, ParsedText, Sentence
from graphrag_integrations.errors import DocumentLoadError
from graphrag_integrations.methods.reg.kg import (
    check_triples,
    read_triples,
    triples_from_graph_documents,
    triples_from_parses,
    triples_from_property_graph_store,
)


def test_check_triples_rejects_bad_shapes() -> None:
    with pytest.raises(ValueError, match="triple 0"):
        check_triples([("a", "r")])
    with pytest.raises(ValueError, match="empty field"):
        check_triples([("a", " ", "b")])
    with pytest.raises(ValueError):
        check_triples(["abc"])


@pytest.mark.parametrize(
    ("name", "body"),
    [
        ("kb.tsv", "head\trelation\ttail\nA\tr\tB\nB\tq\tC\n"),
        ("kb.csv", 'subject,predicate,object\nA,r,B\n"B",q,C\n'),
        ("kb.txt", "A|r|B\n\nB|q|C\n"),
    ],
)
def test_read_triples_formats(tmp_path: Path, name: str, body: str) -> None:
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    assert read_triples(path) == [("A", "r", "B"), ("B", "q", "C")]


def test_read_triples_bad_row(tmp_path: Path) -> None:
    path = tmp_path / "kb.txt"
    path.write_text("A|r|B\nA|r\n", encoding="utf-8")
    with pytest.raises(DocumentLoadError, match=":2:"):
        read_triples(path)
    with pytest.raises(DocumentLoadError):
        read_triples(tmp_path / "missing.txt")


def test_graph_documents_duck_typed() -> None:
    """GraphDocument's shape (langchain-community is not a dependency)."""
    from types import SimpleNamespace as N

    a, b = N(id="Paris"), N(id="France")
    gdoc = N(relationships=[N(source=a, target=b, type="CAPITAL_OF")], nodes=[a, b])
    assert triples_from_graph_documents([gdoc, gdoc]) == [("Paris", "CAPITAL_OF", "France")]


def test_langchain_graph_documents() -> None:
    graph_document = pytest.importorskip("langchain_community.graphs.graph_document")
    from langchain_core.documents import Document

    GraphDocument, Node, Relationship = (
        graph_document.GraphDocument,
        graph_document.Node,
        graph_document.Relationship,
    )

    a, b = Node(id="Paris", type="City"), Node(id="France", type="Country")
    gdoc = GraphDocument(
        nodes=[a, b],
        relationships=[Relationship(source=a, target=b, type="CAPITAL_OF")],
        source=Document(page_content="Paris is the capital of France."),
    )
    assert triples_from_graph_documents([gdoc]) == [("Paris", "CAPITAL_OF", "France")]
    with pytest.raises(TypeError):
        triples_from_graph_documents(["not a graph document"])


def test_llama_index_property_graph_store() -> None:
    from llama_index.core.graph_stores import SimplePropertyGraphStore
    from llama_index.core.graph_stores.types import EntityNode, Relation

    store = SimplePropertyGraphStore()
    paris, france = EntityNode(name="Paris", label="CITY"), EntityNode(name="France")
    store.upsert_nodes([paris, france])
    store.upsert_relations([Relation(label="CAPITAL_OF", source_id=paris.id, target_id=france.id)])
    assert triples_from_property_graph_store(store) == [("Paris", "CAPITAL_OF", "France")]
    with pytest.raises(TypeError):
        triples_from_property_graph_store(object())


def test_text_triples_subject_heads_and_masked_relation() -> None:
    text = "Curie and Becquerel met Rutherford in 1903 twice."
    ents = (
        Entity("Curie", "PERSON", 0, 5, True, "curie"),
        Entity("Becquerel", "PERSON", 10, 19, True, "becquerel"),
        Entity("Rutherford", "PERSON", 24, 34, False, "rutherford"),
        Entity("1903", "DATE", 38, 42, False, "1903"),
        Entity("twice", "CARDINAL", 43, 48, False, "twice"),
    )
    parsed = ParsedText(text, (Sentence(text, 0, len(text), ents),))
    triples = triples_from_parses([parsed])
    rel = "## and ## met ## in ## ##."
    assert triples == [
        ("curie", rel, "becquerel"),
        ("curie", rel, "rutherford"),
        ("curie", rel, "1903"),
        ("becquerel", rel, "curie"),
        ("becquerel", rel, "rutherford"),
        ("becquerel", rel, "1903"),
    ]
    lonely = Sentence("Only Paris.", 0, 11, (Entity("Paris", "GPE", 5, 10, False, "paris"),))
    assert triples_from_parses([ParsedText("Only Paris.", (lonely,))]) == []
