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
