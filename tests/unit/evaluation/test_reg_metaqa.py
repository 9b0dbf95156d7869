from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphrag_integrations.errors import DocumentLoadError
from graphrag_integrations.evaluation.metaqa import (
    answerable,
    disjoint_samples,
    kgqa_metrics,
    load_questions,
    qtype_relation_chain,
)
from tests.unit.reg_fixtures import movie_index


def _write(tmp_path: Path) -> Path:
    d = tmp_path / "2-hop"
    d.mkdir()
    (d / "dev.txt").write_text(
        "who directed the films starring [Ronald Colman]\tWilliam Dieterle|Mervyn LeRoy\n"
        "who directed the films starring [Bette Davis]\tWilliam Dieterle\n",
        encoding="utf-8",
    )
    (d / "qa_dev_qtype.txt").write_text(
        "actor_to_movie_to_director\nactor_to_movie_to_director\n", encoding="utf-8"
    )
    return d / "dev.txt"


def test_load_questions_hops_and_types(tmp_path: Path) -> None:
    qs = load_questions(_write(tmp_path))
    assert [q.id for q in qs] == ["2-hop/dev/0", "2-hop/dev/1"]
    assert qs[0].answers == ["William Dieterle", "Mervyn LeRoy"] and qs[0].hops == 2
    assert qs[1].qtype == "actor_to_movie_to_director"
    other = tmp_path / "q.txt"
    other.write_text("q [X]\tA\n", encoding="utf-8")
    with pytest.raises(DocumentLoadError, match="hops="):
        load_questions(other)
    assert load_questions(other, hops=3)[0].hops == 3
    (tmp_path / "ans.json").write_text(json.dumps({"2-hop/dev": [1]}), encoding="utf-8")
    assert [q.id for q in answerable(qs, tmp_path / "ans.json")] == ["2-hop/dev/1"]


def test_disjoint_samples_and_qtypes(tmp_path: Path) -> None:
    qs = load_questions(_write(tmp_path))
    a, b = disjoint_samples(qs, [1, 1], seed=3)
    assert {a[0].id, b[0].id} == {q.id for q in qs}
    with pytest.raises(ValueError):
        disjoint_samples(qs, [2, 1])
    assert qtype_relation_chain("movie_to_writer_to_movie") == [
        ("written_by", True),
        ("written_by", False),
    ]
    with pytest.raises(ValueError):
        qtype_relation_chain("actor_to_writer")


def test_kgqa_metrics(tmp_path: Path) -> None:
    index = movie_index()
    qs = load_questions(_write(tmp_path))
    m = kgqa_metrics(index, qs, ks=(1, 100))
    assert m["AnsR@100"] == 100.0  # every director is within the top-100 triples
    assert m["AnsR@1"] < 100.0  # one triple cannot hold both ends of a 2-hop answer set
    assert 0.0 <= m["Hit@1"] <= 100.0 and m["chains"] >= 1 and m["tokens"] > 0
    assert m["questions"] == 2.0 and "latency_p50_ms" in m
    assert m["flat_tokens"] > 0 and 1.0 <= m["chain_hops"] <= 2.0 and m["chain_triples"] >= 1


FIX = Path(__file__).resolve().parents[2] / "fixtures" / "eval"


def test_load_dataset_metaqa_queries_and_hops(tmp_path: Path) -> None:
    from graphrag_integrations.evaluation.datasets import load_dataset

    # the folder's own 1-hop file: kept to the answerable subset (questions 0 and 1 of 3)
    ds = load_dataset(FIX / "metaqa", queries=FIX / "metaqa" / "1-hop" / "dev.txt")
    assert [q.id for q in ds.questions] == ["1-hop/dev/0", "1-hop/dev/1"]
    assert ds.questions[0].metadata == {
        "topic_entity": "Kismet",
        "hops": 1,
        "qtype": "movie_to_director",
    }
    assert len(ds.triples) == 4
    # --hops without --queries: that hop set only (answerable: 2-hop/dev/0)
    assert [q.id for q in load_dataset(FIX / "metaqa", hops=2).questions] == ["2-hop/dev/0"]
    # a file outside an N-hop folder needs the hop count; it is not filtered
    own = tmp_path / "mine.txt"
    own.write_text("who wrote [Kismet]\tEdward Knoblock\nwho acted in [X]\tY\n", encoding="utf-8")
    with pytest.raises(DocumentLoadError, match="hops="):
        load_dataset(FIX / "metaqa", queries=own)
    mine = load_dataset(FIX / "metaqa", queries=own, hops=3, limit=1)
    assert [(q.id, q.metadata["hops"]) for q in mine.questions] == [("3-hop/mine/0", 3)]
    with pytest.raises(DocumentLoadError, match="MetaQA datasets only"):
        load_dataset(FIX / "musique", hops=2)


def test_question_evidence_summarises_one_retrieval() -> None:
    from graphrag_integrations.evaluation.datasets import Question
    from graphrag_integrations.methods.reg.kgqa import KGQARetriever, question_evidence

    index = movie_index()
    text = "who directed the films starring Ronald Colman"
    chains, top, _ = index.evidence_chains(text, topic_entities=["Ronald Colman"], K=6)
    ev = question_evidence(index, text, topic_entities=["Ronald Colman"], K=6)
    view = index.view
    assert ev.triples == [t.triple for t in top] and len(ev.triples) == 6
    assert ev.anchors == ("Ronald Colman",) and ev.chains == len(chains) > 0
    assert ev.top_answer == view.entities[chains[0].targets[0]]
    rendered = "\n".join(c.render(view) for c in chains)
    assert ev.tokens == -(-len(rendered) // 4)
    flat = "\n".join(f"{h} -> [{r}] -> {t}" for h, r, t in ev.triples)
    assert ev.flat_tokens == -(-len(flat) // 4)
    assert all(1 <= h <= 2 for h in ev.chain_hops)  # max_length L = 2
    assert ev.chain_triples == tuple(len(c.rows) for c in chains)
    # the harness hook: hop-specific subgraph depth, the question's topic entity
    kgqa = KGQARetriever(index, {})
    q = Question("q", text, ["William Dieterle"], [], {"topic_entity": "Ronald Colman", "hops": 3})
    hooked = kgqa.kgqa_evidence(q, 6)
    assert index.query_params.subgraph_hops == 3
    assert hooked.anchors == ("Ronald Colman",) and len(hooked.triples) == 6
    missing = Question("m", text, ["X"], [], {"topic_entity": "Nobody Known", "hops": 2})
    kgqa.kgqa_evidence(missing, 6)
    assert kgqa.stats["topic_not_in_kg"] == 1 and kgqa.stats["questions"] == 2


def test_kgqa_chain_length_follows_the_hop_count() -> None:
    from graphrag_integrations.evaluation.datasets import Question
    from graphrag_integrations.methods.reg.index import RegIndex
    from graphrag_integrations.methods.reg.kgqa import KGQARetriever
    from graphrag_integrations.methods.reg.params import RegQueryParams
    from graphrag_integrations.testing import FakeEmbedder

    triples = [("A", "r1", "B"), ("B", "r2", "C"), ("C", "r3", "D")]
    q3 = Question("q3", "what is three steps from A", ["D"], [], {"topic_entity": "A", "hops": 3})
    q1 = Question("q1", "what is next to A", ["B"], [], {"topic_entity": "A", "hops": 1})
    index = RegIndex.from_triples(triples, embedding=FakeEmbedder())
    kgqa = KGQARetriever(index, {})
    three = kgqa.kgqa_evidence(q3, 10)
    assert index.query_params.max_length == 3
    assert max(three.chain_hops) == 3 and three.top_answer == "D"
    kgqa.kgqa_evidence(q1, 10)
    assert index.query_params.max_length == 2  # max(L, 1)
    paper = RegQueryParams.from_options({"preset": "paper"})
    fixed = RegIndex.from_triples(triples, embedding=FakeEmbedder(), query_params=paper)
    capped = KGQARetriever(fixed, {}).kgqa_evidence(q3, 10)
    assert fixed.query_params.max_length == 2 and max(capped.chain_hops) == 2
    assert capped.top_answer != "D"
