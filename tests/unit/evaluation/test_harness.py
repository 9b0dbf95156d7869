"""The harness: declared inputs only, options validated before any model is loaded."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from graphrag_integrations.core.params import InvalidParameterError
from graphrag_integrations.core.registry import MethodRegistration
from graphrag_integrations.core.types import Passage, Triple
from graphrag_integrations.evaluation import registry
from graphrag_integrations.evaluation.datasets import Dataset, Question, make_passage
from graphrag_integrations.evaluation.harness import dataset_inputs, run_eval
from tests.conftest import FakeEmbedder

PASSAGES = [
    make_passage("Nottingham Forest", "Nottingham Forest won the European Cup in 1979."),
    make_passage("Brian Clough", "Brian Clough managed Nottingham Forest."),
    make_passage("Paris", "Paris is the capital of France."),
]
TRIPLES: list[Triple] = [("Brian Clough", "manager_of", "Nottingham Forest")]
QUESTIONS = [
    Question("q1", "Who managed Nottingham Forest?", ["Brian Clough"], [PASSAGES[1].id]),
    Question("q2", "What is the capital of France?", ["Paris"], [PASSAGES[2].id]),
]


class ExplodingEmbedder(FakeEmbedder):
    """Fails on first use: proves that nothing was embedded before an error."""

    def embed(self, texts: Any, *, show_progress: bool = False) -> Any:
        raise AssertionError("the embedder was used")


def test_passage_methods_on_a_dataset_with_triples() -> None:
    # before: the harness pushed triples= into every builder -> TypeError for all four
    ds = Dataset("mixed", PASSAGES, QUESTIONS, TRIPLES)
    report = run_eval(
        ds,
        ["dense", "bm25", "hybrid", "clue"],
        embedder=FakeEmbedder(),
        ks=(1, 3),
        options={"clue": {"D": 2}},
        show_progress=False,
    )
    results = report.to_json()["results"]
    assert list(results) == ["dense", "bm25", "hybrid", "clue"]
    assert all(set(row) >= {"R@1", "R@3"} for row in results.values())
    assert report.passages == 3 and report.questions == 2


def test_kg_builder_gets_triples_and_questions_only() -> None:
    seen: dict[str, Any] = {}

    def build(
        embedder: Any,
        *,
        triples: list[Triple],
        questions: list[Question],
        index_params: Any,
        query_params: Any,
        show_progress: bool,
    ) -> Any:
        seen.update(triples=triples, questions=questions)
        from graphrag_integrations.baselines.bm25 import BM25Retriever

        return BM25Retriever(PASSAGES)

    globals()["_kg_build"] = build
    reg = MethodRegistration(
        "kg-toy", "m:C", f"{__name__}:_kg_build", inputs=frozenset({"triples", "questions"})
    )
    registry.register(reg)
    try:
        run_eval(Dataset("kg", [], QUESTIONS, TRIPLES), ["kg-toy"], embedder=FakeEmbedder())
    finally:
        registry.unregister("kg-toy")
    assert seen == {"triples": TRIPLES, "questions": QUESTIONS}


@pytest.fixture
def passages_only() -> Iterator[Dataset]:
    yield Dataset("plain", PASSAGES, QUESTIONS)


def test_dataset_inputs(passages_only: Dataset) -> None:
    bm25 = registry.get_registration("bm25")
    assert dataset_inputs(passages_only, bm25) == {"passages": PASSAGES}
    kg = MethodRegistration("kg", "m:C", "m:b", inputs=frozenset({"triples"}))
    with pytest.raises(ValueError, match="method 'kg' needs triples; dataset 'plain' has none"):
        dataset_inputs(passages_only, kg)


@pytest.mark.parametrize(
    ("methods", "options", "error", "message"),
    [
        (["clue"], {"clue": {"KK": 3}}, InvalidParameterError, "unknown option 'clue.KK'"),
        (["hybrid"], {"hybrid": {"weight": 2}}, InvalidParameterError, "must be <= 1"),
        (["bm25"], {"dense": {"k": 3}}, ValueError, "options given for dense"),
        (["dense", "nope"], {}, registry.UnknownMethodError, "unknown method 'nope'"),
    ],
)
def test_bad_requests_fail_before_anything_is_embedded(
    passages_only: Dataset,
    methods: list[str],
    options: dict[str, dict[str, Any]],
    error: type[Exception],
    message: str,
) -> None:
    with pytest.raises(error, match=message):
        run_eval(passages_only, methods, embedder=ExplodingEmbedder(), options=options)


def test_python_objects_reach_the_builder() -> None:
    from graphrag_integrations.core.encoders.rerank import BiEncoderReranker
    from graphrag_integrations.methods.clue.scoring import RerankerScorer

    ds = Dataset("plain", PASSAGES, QUESTIONS)
    emb = FakeEmbedder()
    retriever = registry.get_registration("clue").build(
        emb, {"passages": ds.passages}, {"reranker": BiEncoderReranker(emb), "N": "2"}
    )
    assert isinstance(retriever.scorer, RerankerScorer) and retriever.N == 2
    assert [p.id for p in retriever.index.passages] == [p.id for p in PASSAGES]


def test_empty_passages_are_refused(passages_only: Dataset) -> None:
    empty = Dataset("empty", [], QUESTIONS)
    with pytest.raises(ValueError, match="method 'dense' needs passages"):
        run_eval(empty, ["dense"], embedder=ExplodingEmbedder())
    assert isinstance(PASSAGES[0], Passage)
