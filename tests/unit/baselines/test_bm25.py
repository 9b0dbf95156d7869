"""BM25 baseline: ranking, ties, stopwords, insert/delete re-index, persistence."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from graphrag_integrations.baselines.bm25 import BM25Retriever, tokenize
from graphrag_integrations.baselines.params import BM25QueryParams
from graphrag_integrations.core.persistence import Manifest, write_manifest
from graphrag_integrations.core.text.documents import SourceDocument
from graphrag_integrations.core.types import Passage
from graphrag_integrations.errors import (
    EmptyCorpusError,
    EmptyQueryError,
    IndexMismatchError,
    IndexNotFoundError,
    InvalidArgumentError,
)

DOCS = [
    SourceDocument("Paris is the capital of France.", id="paris"),
    SourceDocument("Rome is the capital of Italy. Rome has the Colosseum.", id="rome"),
    SourceDocument("Berlin is the capital of Germany.", id="berlin"),
]


def test_tokenize_english_stopwords_no_stemming() -> None:
    assert tokenize(["The cats are running to the houses"]) == [["cats", "running", "houses"]]


def test_ranks_by_bm25() -> None:
    r = BM25Retriever.from_documents(DOCS)
    hits = r.retrieve("Colosseum in Rome", k=2)
    assert hits[0].doc_id == "rome"
    assert hits[0].score > 0
    assert hits[0].explanation == {"method": "bm25"}
    assert len(hits) == 2


def test_scores_match_bm25_formula() -> None:
    # Lucene BM25 with k1=1.5, b=0.75; idf = ln(1 + (N - df + 0.5) / (df + 0.5))
    r = BM25Retriever.from_documents(DOCS)
    lengths = [len(t) for t in tokenize([d.text for d in DOCS])]  # [3, 5, 3]
    avg = sum(lengths) / 3
    idf = math.log(1 + (3 - 1 + 0.5) / (1 + 0.5))
    tf = 2  # "rome" twice in the second document
    expected = idf * tf / (tf + 1.5 * (1 - 0.75 + 0.75 * lengths[1] / avg))
    scores = r.scores("rome")
    assert scores[1] == pytest.approx(expected, rel=1e-5)
    assert scores[0] == scores[2] == 0.0


def test_ties_break_by_corpus_order() -> None:
    r = BM25Retriever.from_documents(DOCS)
    # "capital" occurs once in every doc; Paris/Berlin have the same length -> same score
    ids = [h.doc_id for h in r.retrieve("capital", k=3)]
    assert ids == ["paris", "berlin", "rome"]
    # stopword-only query: all scores 0, corpus order
    assert [h.doc_id for h in r.retrieve("the of is", k=3)] == ["paris", "rome", "berlin"]


def test_empty_inputs() -> None:
    with pytest.raises(EmptyCorpusError):
        BM25Retriever.from_documents(["  "])
    with pytest.raises(EmptyCorpusError):
        BM25Retriever.from_passages([])
    r = BM25Retriever.from_documents(DOCS)
    with pytest.raises(EmptyQueryError):
        r.retrieve("   ")
    with pytest.raises(InvalidArgumentError, match="got 0"):
        r.retrieve("capital", k=0)


def test_insert_and_delete_reindex() -> None:
    r = BM25Retriever.from_documents(DOCS[:2])
    assert r.retrieve("Germany", k=1)[0].score == 0.0
    assert r.insert([DOCS[2]]) == ["berlin"]
    top = r.retrieve("Germany", k=1)[0]
    assert top.doc_id == "berlin" and top.score > 0
    r.delete("rome")
    assert [p.doc_id for p in r.passages] == ["paris", "berlin"]
    assert all(h.doc_id != "rome" for h in r.retrieve("Rome Colosseum", k=5))
    r.delete("unknown")  # logged no-op
    assert len(r.passages) == 2


def test_persist_and_load_roundtrip(tmp_path: Path) -> None:
    r = BM25Retriever.from_documents(DOCS)
    r.persist(tmp_path / "idx")
    loaded = BM25Retriever.load(tmp_path / "idx")
    assert loaded.passages == r.passages
    assert loaded.scores("capital Rome").tolist() == pytest.approx(
        r.scores("capital Rome").tolist()
    )
    loaded.insert(["Madrid is the capital of Spain."])
    assert "Madrid" in loaded.retrieve("Spain", k=1)[0].text


def test_load_errors(tmp_path: Path) -> None:
    with pytest.raises(IndexNotFoundError):
        BM25Retriever.load(tmp_path)
    write_manifest(tmp_path, Manifest(method="dense"))
    with pytest.raises(IndexMismatchError, match="dense"):
        BM25Retriever.load(tmp_path)
    (tmp_path / "manifest.json").write_text(json.dumps({"method": "bm25"}))
    with pytest.raises(IndexMismatchError, match="format_version"):
        BM25Retriever.load(tmp_path)


def test_from_passages_keeps_ids() -> None:
    ps = [Passage("p1", "alpha beta", "d1"), Passage("p2", "gamma delta", "d2")]
    r = BM25Retriever.from_passages(ps, query_params=BM25QueryParams(k=1))
    assert [h.id for h in r.retrieve("gamma")] == ["p2"]
