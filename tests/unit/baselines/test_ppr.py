"""PPR baseline: graph matrices, seeds and ranking against hand-computed and closed-form
results, the filter as an access boundary, synonym edges under insert / delete / relink."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from graphrag_integrations.baselines.ppr import PPRRetriever
from graphrag_integrations.baselines.ppr_params import PPRIndexParams, PPRQueryParams
from graphrag_integrations.core.retrieval.ppr_graph import PassageEntities, PPRGraph, synonym_pairs
from graphrag_integrations.core.retrieval.ppr_seeds import activate, link_seeds, query_seeds
from graphrag_integrations.testing import FakeEmbedder
from graphrag_integrations.testing.compliance import CORPUS, compliance_documents

QUESTION = "Which city is the capital of Italy and was built on seven hills?"


def _graph() -> PPRGraph:
    # p0 mentions a, b; p1 mentions b, c; a ~ c synonyms (0.9)
    ents = [
        PassageEntities(("a", "b"), (("a", "b"), ("a",))),
        PassageEntities(("b", "c"), (("b", "c"),)),
    ]
    vecs = {n: np.eye(3, dtype=np.float32)[i] for i, n in enumerate("abc")}
    facts = np.eye(3, dtype=np.float32)
    return PPRGraph.build(ents, vecs, facts, {("a", "c"): 0.9})


def test_the_adjacency_is_symmetric_with_unit_mentions_and_cosine_synonyms() -> None:
    g = _graph()
    # nodes: p0 p1 a b c
    expected = np.array(
        [
            [0, 0, 1, 1, 0],
            [0, 0, 0, 1, 1],
            [1, 0, 0, 0, 0.9],
            [1, 1, 0, 0, 0],
            [0, 1, 0.9, 0, 0],
        ]
    )
    assert np.allclose(g.adjacency.toarray(), expected)
    assert g.fact_passages.tolist() == [0, 0, 1]
    assert g.fact_entities.toarray().tolist() == [[1, 1, 0], [1, 0, 0], [0, 1, 1]]
    assert g.full.occurrences.tolist() == [1.0, 2.0, 1.0]


def test_a_view_keeps_only_the_kept_passages_and_their_entities() -> None:
    g = _graph()
    view = g.view(np.array([False, True]))
    assert view.entities.tolist() == [False, True, True]
    assert view.facts.tolist() == [False, False, True]
    assert view.occurrences.tolist() == [0.0, 1.0, 1.0]
    # p1 -> b, c equally; c -> p1 only (its synonym a is gone); p0 and a have no edge left
    assert np.allclose(view.transition.toarray().T[1], [0, 0, 0, 0.5, 0.5])
    assert np.allclose(view.transition.toarray().T[4], [0, 1, 0, 0, 0])
    assert view.transition.toarray()[:, [0, 2]].sum() == 0


def test_synonym_pairs_do_not_depend_on_the_insertion_order() -> None:
    rng = np.random.default_rng(0)
    base = rng.normal(size=(6, 8)).astype(np.float32)
    base[3] = base[0] + 0.05  # near duplicates
    base[5] = base[1] + 0.05
    vecs = {f"entity{i}": v / np.linalg.norm(v) for i, v in enumerate(base)}
    names = list(vecs)
    fresh = synonym_pairs(names, names, vecs, 0.8, 3)
    grown = synonym_pairs(names[:4], names[:4], vecs, 0.8, 3)
    grown.update(synonym_pairs(names[4:], names, vecs, 0.8, 3))
    assert fresh == grown and set(fresh) == {("entity0", "entity3"), ("entity1", "entity5")}
    assert synonym_pairs(["ab"], ["ab", "abx"], {"ab": base[0], "abx": base[0]}, 0.8, 3) == {}


def test_link_seeds_take_the_k_nearest_entities_above_the_threshold() -> None:
    g = _graph()
    mention = np.array([[0.8, 0.6, 0.0]], dtype=np.float32)  # cos a 0.8, b 0.6, c 0
    assert link_seeds(g, g.full, mention, 1, 0.5).tolist() == pytest.approx([0.8, 0, 0])
    assert link_seeds(g, g.full, mention, 2, 0.5).tolist() == pytest.approx([0.8, 0.6, 0])
    assert link_seeds(g, g.full, mention, 2, 0.7).tolist() == pytest.approx([0.8, 0, 0])
    kept = g.view(np.array([False, True]))  # a is not in the view
    assert link_seeds(g, kept, mention, 1, 0.5).tolist() == pytest.approx([0, 0.6, 0])


def test_activation_spreads_through_the_most_similar_unused_fact() -> None:
    g = _graph()
    # facts: f0 {a, b} sim 0.9, f1 {a} sim 0.95, f2 {b, c} sim 0.8
    sims = np.array([0.9, 0.95, 0.8])
    seeds = np.array([1.0, 0.0, 0.0])
    # step 1: a takes f1 (0.95, only a): a += 0.95; step 2: a takes f0: a, b += 0.95 * 0.9;
    # step 3: a has no unused fact, b takes f2: b, c += 0.855 * 0.8
    added = activate(g, g.full, seeds, sims, 3, 0.5)
    assert added.tolist() == pytest.approx([0.95 + 0.855, 0.855 + 0.855 * 0.8, 0.855 * 0.8])
    assert activate(g, g.full, seeds, sims, 0, 0.5).tolist() == [0.0, 0.0, 0.0]
    assert activate(g, g.full, seeds, sims, 3, 0.96).tolist() == [0.0, 0.0, 0.0]


@pytest.fixture(scope="module")
def index() -> PPRRetriever:
    return PPRRetriever.from_documents(compliance_documents(), embedding=FakeEmbedder())


def test_scores_are_the_closed_form_personalized_pagerank(index: PPRRetriever) -> None:
    params = index.query_params
    signals = index.signals(QUESTION)
    graph = index.graph
    seeds = query_seeds(graph, graph.full, params, signals.dense, signals.facts, signals.mentions)
    restart = np.concatenate([seeds.passages, seeds.entities])
    restart /= restart.sum()
    adjacency = graph.adjacency.toarray()
    assert (adjacency.sum(axis=1) > 0).all()  # every passage has its title entity
    walk = (adjacency / adjacency.sum(axis=1, keepdims=True)).T
    d = params.damping
    expected = (1 - d) * np.linalg.solve(np.eye(len(restart)) - d * walk, restart)
    hits = index.rank(signals, len(index.passages))
    by_id = {p.id: i for i, p in enumerate(index.passages)}
    assert [h.score for h in hits] == pytest.approx([expected[by_id[h.id]] for h in hits])
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert hits[0].doc_id == "rome"
    assert "rome" in hits[0].explanation["entities"]


def test_a_query_without_entity_seeds_is_ranked_by_the_dense_score(index: PPRRetriever) -> None:
    with index.using_query_params(PPRQueryParams(fact_top_k=0, link_weight=0.0)):
        hits = index.retrieve(QUESTION, k=3)
    dense = index.dense.retrieve(QUESTION, k=3)
    assert [h.id for h in hits] == [h.id for h in dense]
    assert [h.score for h in hits] == pytest.approx([h.score for h in dense])
    assert hits[0].explanation["fallback"] == "dense"


@pytest.mark.parametrize("preset", ["default", "paper", "linearrag"])
def test_a_filtered_query_answers_as_an_index_of_the_matching_passages(preset: str) -> None:
    embedder = FakeEmbedder()
    docs = compliance_documents()
    allowed = {"rome", "paris", "amazon", "jazz"}
    params = PPRQueryParams.preset(preset)
    full = PPRRetriever.from_documents(docs, embedding=embedder, query_params=params)
    only = PPRRetriever.from_documents(
        [d for d in docs if d.id in allowed], embedding=embedder, query_params=params
    )
    where = {"doc_id": {"$in": sorted(allowed)}}
    held = zip(full.entities, full.passages, strict=True)
    outside = {n for e, p in held if p.doc_id not in allowed for n in e.names}
    forbidden = outside - {n for e in only.entities for n in e.names}
    assert forbidden
    for text in (QUESTION, *(d.text for d in CORPUS)):
        got = full.retrieve(text, k=4, filter=where)
        want = only.retrieve(text, k=4)
        assert [h.id for h in got] == [h.id for h in want], text
        assert [h.score for h in got] == pytest.approx([h.score for h in want]), text
        for hit in got:
            named = set(hit.explanation.get("seed_entities", [])) | set(
                hit.explanation.get("entities", [])
            )
            assert not named & forbidden, text


def test_insert_and_delete_keep_the_synonym_edges_of_a_fresh_build() -> None:
    embedder = FakeEmbedder(16)  # few buckets: many names collide into synonyms
    docs = compliance_documents()
    grown = PPRRetriever.from_documents(docs[:5], embedding=embedder)
    grown.insert(docs[5:])
    fresh = PPRRetriever.from_documents(docs, embedding=embedder)
    assert grown.synonyms == fresh.synonyms and fresh.synonyms
    grown.delete_many([d.id for d in docs[5:]])
    assert grown.synonyms == PPRRetriever.from_documents(docs[:5], embedding=embedder).synonyms


def test_relink_synonyms_recomputes_the_edges_and_is_persisted(tmp_path: Path) -> None:
    index = PPRRetriever.from_documents(compliance_documents(), embedding=FakeEmbedder(16))
    before = index.synonyms
    assert index.relink_synonyms(0.95) == len(index.synonyms)
    assert set(index.synonyms) <= set(before) and min(index.synonyms.values()) >= 0.95
    assert index.relink_synonyms(0.0) > len(before) and set(before) < set(index.synonyms)
    assert index.relink_synonyms(0.8) == len(before) and index.synonyms == before
    index.relink_synonyms(0.5)
    index.persist(tmp_path / "i")
    loaded = PPRRetriever.load(tmp_path / "i", embedding=FakeEmbedder(16))
    assert loaded.index_params == PPRIndexParams(synonym_threshold=0.5)
    assert loaded.synonyms == index.synonyms
    assert loaded.query_params == index.query_params


def test_the_paper_preset_holds_hippo_rag_2_constants() -> None:
    paper = PPRQueryParams.preset("paper")
    assert (paper.damping, paper.passage_node_weight) == (0.5, 0.05)
    assert (paper.fact_top_k, paper.linking_top_k, paper.specificity) == (5, 5, True)
    assert PPRIndexParams.preset("paper").synonym_threshold == 0.8
