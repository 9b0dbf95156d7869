"""ReG's public surface (the API contract): parameter classes and presets, constructors,
``as_retriever``, documents without triples, graph-document inputs, validation labels."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from graphrag_integrations.core.params import InvalidParameterError
from graphrag_integrations.errors import InvalidArgumentError
from graphrag_integrations.methods.reg.index import RegIndex, TrainingQuestion
from graphrag_integrations.methods.reg.params import RegIndexParams, RegQueryParams, RegTrainParams
from graphrag_integrations.methods.reg.registration import REG
from tests.conftest import FakeEmbedder
from tests.unit.reg_fixtures import MOVIES, movie_index

QUERY = "who directed the films starring [Ronald Colman]"


# -- parameters and presets -----------------------------------------------------------------
def test_K_is_the_triples_kept_and_k_the_results_returned() -> None:
    assert {"k", "K"} <= set(RegQueryParams.names()) and "top_k" not in RegQueryParams.names()
    assert RegQueryParams().K == 100 and RegQueryParams().k == 5
    assert RegQueryParams.from_options({"preset": "paper"}).K == 200
    opts = REG.parse_options({"K": "50", "dde_rounds": "1", "preset": "paper"})
    query, build = opts.query_params, opts.index_params
    assert isinstance(query, RegQueryParams) and isinstance(build, RegIndexParams)
    assert query.K == 50 and query.strict_direction and build.dde_rounds == 1
    with pytest.raises(InvalidParameterError, match="top_k"):
        REG.parse_options({"top_k": "50"})


def test_preset_equals_the_preset_params_and_refuses_params_too() -> None:
    by_name = movie_index(preset="paper")
    explicit = movie_index(
        index_params=RegIndexParams.from_options({"preset": "paper"}),
        query_params=RegQueryParams.from_options({"preset": "paper"}),
    )
    assert by_name.query_params == explicit.query_params
    assert by_name.index_params == explicit.index_params
    assert by_name.query_params.strict_direction and by_name.query_params.K == 200
    with pytest.raises(InvalidArgumentError, match="preset"):
        movie_index(preset="paper", query_params=RegQueryParams())
    with pytest.raises(InvalidParameterError, match="preset"):
        movie_index(preset="fast")


def test_constructors_take_typed_keywords_only() -> None:
    with pytest.raises(TypeError):
        RegIndex.from_triples(MOVIES, embedding=FakeEmbedder(), top_k=3)  # type: ignore[call-arg]
    index = movie_index(query_params=RegQueryParams(k=2))
    assert index.default_k == 2 and len(index.retrieve(QUERY)) == 2


# -- as_retriever ---------------------------------------------------------------------------
def test_as_retriever_binds_k_and_query_params() -> None:
    index = movie_index()
    bound = index.as_retriever(k=3, K=4, max_length=1)
    assert len(bound.retrieve(QUERY)) <= 3
    assert len(bound.retrieve(QUERY, k=1)) == 1  # the call's k wins
    same = movie_index(query_params=RegQueryParams(k=3, K=4, max_length=1))
    assert [r.text for r in bound.retrieve(QUERY)] == [r.text for r in same.retrieve(QUERY)]
    assert [r.text for r in bound.retrieve(QUERY)] != [r.text for r in index.retrieve(QUERY, k=3)]
    assert index.query_params == RegQueryParams()  # the index keeps its own settings
    assert len(index.retrieve(QUERY, k=2)) <= 2
    assert bound.query_params.K == 4
    with pytest.raises(InvalidParameterError, match="top_k"):
        index.as_retriever(top_k=3)
    with pytest.raises(InvalidArgumentError):
        index.as_retriever(k=0)
    docs = bound.as_langchain_retriever().invoke(QUERY)
    assert 1 <= len(docs) <= 3


# -- documents without a triple (issue 20) --------------------------------------------------
def test_documents_without_triples_stay_listed_deletable_and_persisted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from graphrag_integrations.core.text.documents import SourceDocument

    docs = [
        SourceDocument("Marie Curie worked in Paris with Pierre Curie.", "curie"),
        SourceDocument("Nothing here names two entities.", "empty1"),
        SourceDocument("Still nothing at all.", "empty2"),
    ]
    with caplog.at_level(logging.WARNING):
        index = RegIndex.from_documents(docs, embedding=FakeEmbedder())
    warnings = [r.getMessage() for r in caplog.records if "yield no triple" in r.getMessage()]
    assert len(warnings) == 1 and warnings[0].startswith("2 of 3 documents")
    assert index.doc_ids() == ["curie", "empty1", "empty2"]
    assert {p.doc_id for p in index.passages} == {"curie", "empty1", "empty2"}
    index.persist(tmp_path / "idx")
    loaded = RegIndex.load(tmp_path / "idx", embedding=FakeEmbedder())
    assert loaded.doc_ids() == index.doc_ids()
    assert [p.text for p in loaded.passages] == [p.text for p in index.passages]
    assert loaded.delete("empty1") is True
    assert loaded.doc_ids() == ["curie", "empty2"]
    assert "empty1" not in {p.doc_id for p in loaded.passages}
    assert loaded.insert([SourceDocument("Again nothing.", "empty3")]) == ["empty3"]
    assert "empty3" in loaded.doc_ids()


def test_an_index_of_triples_has_no_text_passages() -> None:
    assert movie_index().passages == []


# -- graph documents (no langchain_community needed) ----------------------------------------
def _graph_document_types() -> tuple[Any, Any, Any]:
    """langchain_community's classes when installed, else the same shape on langchain_core."""
    try:
        from langchain_community.graphs.graph_document import (
            GraphDocument,
            Node,
            Relationship,
        )
    except ImportError:
        from langchain_core.documents import Document
        from langchain_core.load.serializable import Serializable
        from pydantic import Field

        class Node(Serializable):  # type: ignore[no-redef]
            id: str | int
            type: str = "Node"
            properties: dict[str, Any] = Field(default_factory=dict)

        class Relationship(Serializable):  # type: ignore[no-redef]
            source: Node
            target: Node
            type: str
            properties: dict[str, Any] = Field(default_factory=dict)

        class GraphDocument(Serializable):  # type: ignore[no-redef]
            nodes: list[Node]
            relationships: list[Relationship]
            source: Document | None = None

    return GraphDocument, Node, Relationship


def test_from_graph_documents_without_langchain_community() -> None:
    from langchain_core.documents import Document

    GraphDocument, Node, Relationship = _graph_document_types()
    paris, france, year = Node(id="Paris", type="City"), Node(id="France"), Node(id=1789)
    gdoc = GraphDocument(
        nodes=[paris, france, year],
        relationships=[
            Relationship(source=paris, target=france, type="CAPITAL_OF"),
            Relationship(source=france, target=year, type="REVOLUTION_IN"),
        ],
        source=Document(page_content="Paris is the capital of France."),
    )
    one = RegIndex.from_graph_documents(gdoc, embedding=FakeEmbedder())  # a single document
    many = RegIndex.from_graph_documents([gdoc], embedding=FakeEmbedder(), preset="paper")
    for index in (one, many):
        assert sorted(index.view.triple(i) for i in range(index.view.n_triples)) == [
            ("France", "REVOLUTION_IN", "1789"),
            ("Paris", "CAPITAL_OF", "France"),
        ]
    assert many.query_params.K == 200


def test_graph_documents_duck_typed_with_names_and_bad_relationships() -> None:
    from types import SimpleNamespace as N

    gdoc = N(
        nodes=["Paris", "France"], relationships=[N(source="Paris", target="France", type="IN")]
    )
    index = RegIndex.from_graph_documents([gdoc], embedding=FakeEmbedder())
    assert index.view.triple(0) == ("Paris", "IN", "France")
    broken = N(nodes=[], relationships=[N(source=N(id="Paris"), target=N(id="France"))])
    with pytest.raises(TypeError, match=r"\.type"):
        RegIndex.from_graph_documents([broken], embedding=FakeEmbedder())


# -- validation labels (issue 20) -----------------------------------------------------------
def _qs(*actors: str) -> list[TrainingQuestion]:
    directors = {
        "Ronald Colman": ("William Dieterle", "Mervyn LeRoy"),
        "Bette Davis": ("William Dieterle",),
    }
    return [
        TrainingQuestion(f"q-{a}", f"who directed the films starring {a}", (a,), directors[a])
        for a in actors
    ]


def test_validation_questions_get_labels_of_the_same_mode() -> None:
    index = movie_index()
    train, val = _qs("Ronald Colman"), _qs("Bette Davis")
    sup = index.supervision(train, mode="weak")
    assert set(sup.labels) == {"q-Ronald Colman"}
    report = index.train(train, sup.labels, validation=val, params=RegTrainParams(epochs=3))
    recalls = [h["val_recall"] for h in report.history]
    assert all(0.0 <= r <= 1.0 for r in recalls)  # never NaN
    assert report.val_questions == 1


def test_validating_on_training_questions_warns(caplog: pytest.LogCaptureFixture) -> None:
    index = movie_index()
    train = _qs("Ronald Colman", "Bette Davis")
    labels = index.supervision(train, mode="weak").labels
    with caplog.at_level(logging.WARNING):
        index.train(train, labels, validation=train[:1], params=RegTrainParams(epochs=1))
    assert "1 of 1 validation questions are training questions" in caplog.text


def test_validation_questions_without_labels_raise_one_line() -> None:
    index = movie_index()
    train, val = _qs("Ronald Colman"), _qs("Bette Davis")
    labels = dict(index.supervision(train, mode="weak").labels)  # a plain dict: cannot label more
    with pytest.raises(InvalidArgumentError, match="validation") as err:
        index.train(train, labels, validation=val, params=RegTrainParams(epochs=1))
    assert "\n" not in str(err.value) and "q-Bette Davis" in str(err.value)
    with pytest.raises(InvalidArgumentError, match="validation_labels"):
        index.train(
            train, labels, validation=val, validation_labels={}, params=RegTrainParams(epochs=1)
        )
