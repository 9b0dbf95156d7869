"""Q-Iter behaviour: anchoring, beam search, query updating, scoring, fallbacks."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence

import numpy as np
import pytest

from graphrag_integrations.core.text.nlp import normalize_entity
from graphrag_integrations.errors import (
    EmptyQueryError,
    InvalidArgumentError,
    InvalidArgumentTypeError,
)
from graphrag_integrations.methods.clue.graph import TermStats, tokenize
from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.methods.clue.qiter import QIter, Trace, _without
from graphrag_integrations.methods.clue.scoring import (
    FusedScorer,
    Query,
    bm25_normalised,
    canonical_order,
)
from tests.conftest import FakeEmbedder
from tests.unit.clue_fixtures import documents

MULTIHOP = "Where was the manager of Nottingham Forest born?"


@pytest.fixture(scope="module")
def index() -> ClueIndex:
    return ClueIndex.from_documents(documents(), embedding=FakeEmbedder())


def query(index: ClueIndex, text: str) -> Query:
    return Query(text, index.embedder.embed_query(text), tuple(tokenize(text)))


class FakeLLM:
    """A plain callable ``str -> str`` returning a canned reply (tests may fake LLM replies)."""

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return self.reply


class OverlapReranker:
    """A real (lexical) re-ranker following the core Reranker protocol."""

    model_name = "overlap"

    def __init__(self) -> None:
        self.calls = 0

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        q = set(tokenize(query))
        return np.array([len(q & set(tokenize(t))) for t in texts], dtype=np.float32)


def test_multihop_path_reaches_second_hop(index: ClueIndex) -> None:
    hits = QIter(index, N=3).retrieve(MULTIHOP)
    ids = [h.doc_id for h in hits]
    assert "Brian Clough" in ids
    clough = hits[ids.index("Brian Clough")]
    units = [u for p in clough.explanation["paths"] for u in p["units"]]
    assert any("born in Middlesbrough" in u for u in units)
    assert all(
        len(p["units"]) == len(p["entities"]) == p["depth"] for p in clough.explanation["paths"]
    )


def test_results_sorted_and_k_respected(index: ClueIndex) -> None:
    hits = QIter(index).retrieve(MULTIHOP, k=4)
    assert len(hits) == 4
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert len({h.id for h in hits}) == 4


def test_beam_respects_m_and_depth(index: ClueIndex) -> None:
    qiter = QIter(index, K=2, D=2, M=2)
    q = query(index, MULTIHOP)
    anchors = qiter.anchor(q, index.embedder.embed(["nottingham forest"]), Trace())
    kept = qiter.search(q, anchors)
    assert len(kept) <= 2 * 2
    assert {s.depth for s in kept} <= {1, 2}
    for s in kept:
        assert len(s.path) == s.depth
        assert s.path == canonical_order(index.graph, s.path)
        # each step's unit is linked to the entity that reached it
        for entity, unit in s.steps:
            assert unit in index.graph.entity_units[entity]


def test_anchoring_switches(index: ClueIndex) -> None:
    q = query(index, MULTIHOP)
    ents = index.embedder.embed(["nottingham forest"])
    both = set(QIter(index).anchor(q, ents, Trace()))
    sa = set(QIter(index, knowledge_anchoring=False).anchor(q, ents, Trace()))
    ka = set(QIter(index, spreading_activation=False).anchor(q, ents, Trace()))
    assert both == sa | ka
    assert index.graph.entity_row[normalize_entity("Nottingham Forest")] in sa
    assert (
        QIter(index, spreading_activation=False, knowledge_anchoring=False).anchor(q, ents, Trace())
        == []
    )


def test_no_anchors_falls_back_to_scored_fill(index: ClueIndex) -> None:
    qiter = QIter(index, spreading_activation=False, knowledge_anchoring=False, N=2)
    hits = qiter.retrieve("capital of France")
    assert len(hits) == 2
    assert all("fallback" in h.explanation for h in hits)
    assert hits[0].doc_id == "Paris"


def test_query_update_is_cumulative_and_renormalised(index: ClueIndex) -> None:
    g = index.graph
    phi = query(index, MULTIHOP).vector
    raw = QIter(index, renormalize_query=False)
    step = raw._update(raw._update(phi, 0), 1)
    assert np.allclose(step, phi - g.unit_matrix[0] - g.unit_matrix[1], atol=1e-6)
    norm = QIter(index)._update(phi, 0)
    assert np.isclose(np.linalg.norm(norm), 1.0, atol=1e-5)
    assert np.allclose(norm, (phi - g.unit_matrix[0]) / np.linalg.norm(phi - g.unit_matrix[0]))
    assert np.array_equal(QIter(index, query_updating=False)._update(phi, 0), phi)


def test_path_scores_use_cached_mean_vector(index: ClueIndex) -> None:
    g = index.graph
    scorer = FusedScorer(g, index.embedder, lexical_weight=0.0)
    q = query(index, MULTIHOP)
    path = (0, 3)
    mean = g.unit_matrix[list(path)].sum(axis=0)
    expected = float(mean @ q.vector / np.linalg.norm(mean))
    assert scorer.score_paths(q, [path])[0] == pytest.approx(expected, abs=1e-5)
    enc = FusedScorer(g, index.embedder, lexical_weight=0.0, path_vector="encode")
    joined = " ".join(g.units[r].text for r in path)
    assert enc.score_paths(q, [path])[0] == pytest.approx(
        float(index.embedder.embed_query(joined) @ q.vector), abs=1e-5
    )


def test_fused_scorer_follows_reranker_protocol(index: ClueIndex) -> None:
    scorer = FusedScorer(index.graph, index.embedder, lexical_weight=0.5)
    scores = scorer.score("Chelsea FA Cup", ["Chelsea won the FA Cup.", "Paris is in France."])
    assert scores[0] > scores[1]
    with pytest.raises(ValueError):
        FusedScorer(index.graph, index.embedder, lexical_weight=2.0)


def test_bm25_normalised_bounds() -> None:
    stats = TermStats.build([["a", "b"], ["b", "c"], ["c"]])
    full = bm25_normalised(["a"], Counter({"a": 50}), 50, stats, 2.0)
    assert 0.0 < full < 1.0
    assert bm25_normalised(["a", "c"], Counter({"a": 1}), 1, stats, 2.0) < full
    assert bm25_normalised([], Counter({"a": 1}), 1, stats, 2.0) == 0.0


def test_custom_reranker_replaces_default(index: ClueIndex) -> None:
    rr = OverlapReranker()
    hits = QIter(index, reranker=rr, D=2).retrieve("When did Chelsea win the FA Cup?", k=1)
    assert hits[0].doc_id == "Chelsea F.C."
    assert rr.calls >= 2  # at least one depth and the final re-ranking


def test_path_weight_changes_final_scores(index: ClueIndex) -> None:
    # Q-Iter's own chunk scores (the fused default scores by rank)
    base = QIter(index, ppr_weight=0.0).retrieve(MULTIHOP)
    weighted = QIter(index, path_weight=1.0, ppr_weight=0.0).retrieve(MULTIHOP)
    reached = [h for h in base if "fallback" not in h.explanation]
    w_by_id = {h.id: h.score for h in weighted}
    for h in reached:
        if h.id in w_by_id:
            assert w_by_id[h.id] > h.score


# "Paris" is not in the question: only an LLM reply can make it a query entity
LLM_REPLY = 'Sure: ["Nottingham Forest", "Paris", " "]'


def test_llm_entities_from_a_plain_callable_are_used(index: ClueIndex) -> None:
    llm = FakeLLM(LLM_REPLY)
    qiter = QIter(index, llm=llm)
    names, source = qiter.query_entities(MULTIHOP)
    assert source == "llm"
    assert names == ["nottingham forest", "paris"]
    assert MULTIHOP in llm.prompts[0]
    hit = qiter.retrieve(MULTIHOP)[0]
    assert hit.explanation["entity_source"] == "llm"
    assert hit.explanation["query_entities"] == ["nottingham forest", "paris"]
    assert qiter.llm_fallbacks == 0


def test_llm_entities_from_a_langchain_chat_model_are_used(index: ClueIndex) -> None:
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    chat = FakeListChatModel(responses=[LLM_REPLY])
    qiter = QIter(index, llm=chat)
    names, source = qiter.query_entities(MULTIHOP)
    assert (names, source) == (["nottingham forest", "paris"], "llm")
    # the entity anchors of "paris" come from the LLM's entity
    trace = Trace()
    vecs = index.embedder.embed(names)
    anchors = QIter(index, llm=chat, knowledge_anchoring=False).anchor(
        query(index, MULTIHOP), vecs, trace
    )
    assert index.graph.entity_row[normalize_entity("Paris")] in anchors


def test_an_llm_client_is_used_as_is(index: ClueIndex) -> None:
    from graphrag_integrations.core.llm import LLMClient

    client = LLMClient(FakeLLM(LLM_REPLY))
    QIter(index, llm=client).query_entities(MULTIHOP)
    assert client.usage.calls == 1


@pytest.mark.parametrize("reply", ["I cannot help with that.", "[1, 2]", '{"a": "b"}'])
def test_bad_llm_reply_falls_back_to_spacy(
    index: ClueIndex, caplog: pytest.LogCaptureFixture, reply: str
) -> None:
    qiter = QIter(index, llm=FakeLLM(reply))
    hits = qiter.retrieve("When did Chelsea F.C. win the FA Cup?")
    assert qiter.llm_fallbacks == 1
    assert "using spaCy" in caplog.text
    assert hits[0].explanation["entity_source"] == "spacy"
    assert normalize_entity("Chelsea F.C.") in hits[0].explanation["query_entities"]


@pytest.mark.parametrize("bad", [{"K": 0}, {"D": -1}, {"M": 1.5}, {"path_weight": -1.0}])
def test_bad_parameters(index: ClueIndex, bad: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        QIter(index, **bad)


def test_empty_query(index: ClueIndex) -> None:
    with pytest.raises(EmptyQueryError):
        QIter(index).retrieve("  ")


@pytest.mark.parametrize(
    ("k", "error"),
    [(0, InvalidArgumentError), (-2, InvalidArgumentError), ("3", InvalidArgumentTypeError)],
)
def test_invalid_k_is_refused(index: ClueIndex, k: object, error: type[Exception]) -> None:
    qiter = QIter(index, N=2)
    with pytest.raises(error, match="k must be an integer >= 1"):
        qiter.retrieve(MULTIHOP, k=k)  # type: ignore[arg-type]
    assert len(qiter.retrieve(MULTIHOP, k=None)) == 2  # None: N


def test_aretrieve_matches_retrieve(index: ClueIndex) -> None:
    qiter = QIter(index)
    sync = [h.id for h in qiter.retrieve(MULTIHOP)]
    assert [h.id for h in asyncio.run(qiter.aretrieve(MULTIHOP))] == sync


def test_paper_preset(index: ClueIndex) -> None:
    paper = QIter.paper(index)
    assert paper.renormalize_query is False
    assert isinstance(paper.scorer, FusedScorer)
    assert paper.scorer.path_vector == "encode" and paper.scorer.lexical_weight == 0.0
    assert len(paper.retrieve(MULTIHOP)) == 5


def test_explanation_paths_are_distinct() -> None:
    from tests.unit.methods.clue.test_clue_index import build

    qiter = build().as_retriever(N=4)
    for question in ("Where was the manager of Nottingham Forest born?", "Who founded the club?"):
        for hit in qiter.retrieve(question):
            shown = [(tuple(p["units"]), tuple(p["entities"])) for p in hit.explanation["paths"]]
            assert len(shown) == len(set(shown))


def test_query_entity_vectors_are_the_stored_node_vectors_when_known(index: ClueIndex) -> None:
    qiter = index.as_retriever()
    known = index.graph.entity_names[0]
    vector, entities = qiter._embed("Who founded it?", [known, "zz unknown name"])
    row = index.graph.entity_row[known]
    assert np.array_equal(entities[0], index.graph.entity_matrix[row])
    encoded = index.embedder.embed(["Who founded it?", "zz unknown name"])
    assert np.allclose(vector, encoded[0], atol=1e-6)
    assert np.allclose(entities[1], encoded[1], atol=1e-6)
    assert qiter._embed("Who?", [])[1].shape == (0, vector.shape[0])


def test_without_drops_the_path_units_as_isin_does() -> None:
    rng = np.random.default_rng(0)
    for _ in range(200):
        rows = rng.integers(0, 12, size=int(rng.integers(1, 15))).astype(np.int64)
        path = tuple(int(u) for u in rng.integers(0, 12, size=int(rng.integers(1, 4))))
        assert _without(rows, path).tolist() == rows[~np.isin(rows, path)].tolist()
