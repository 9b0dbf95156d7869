"""KGQA metrics of triple retrievers (docs/reference/metrics.md), against hand-computed values, the
harness's evidence hook."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from graphrag_integrations.core.registry import MethodRegistration
from graphrag_integrations.evaluation import registry
from graphrag_integrations.evaluation.datasets import Dataset, Question
from graphrag_integrations.evaluation.harness import run_eval
from graphrag_integrations.evaluation.metrics import (
    kgqa_evidence_metrics,
    triple_answer_recall_at_k,
)
from graphrag_integrations.evaluation.report import format_report
from tests.conftest import FakeEmbedder

Triple = tuple[str, str, str]


@dataclass(frozen=True)
class Evidence:
    triples: list[Triple]
    top_answer: str | None = None
    chains: int = 0
    tokens: int = 0
    flat_tokens: int = 0


def test_triple_answer_recall_counts_heads_and_tails_of_the_top_k_triples() -> None:
    top = [
        ("Kismet", "directed_by", "William Dieterle"),
        ("Juarez", "directed_by", "William Dieterle"),  # duplicate entity counts once
        ("The Hunchback", "release_year", "1939"),  # a head can be the answer
        ("Kismet", "release_year", "1944"),
    ]
    gold = ["william dieterle", "Hunchback", "1944", "Missing"]  # normalised, 4 answers
    assert triple_answer_recall_at_k(top, gold, 1) == pytest.approx(1 / 4)
    assert triple_answer_recall_at_k(top, gold, 2) == pytest.approx(1 / 4)
    assert triple_answer_recall_at_k(top, gold, 3) == pytest.approx(2 / 4)
    assert triple_answer_recall_at_k(top, gold, 4) == pytest.approx(3 / 4)
    assert triple_answer_recall_at_k(top, gold, 100) == pytest.approx(3 / 4)  # k past the list
    assert triple_answer_recall_at_k([], gold, 50) == 0.0
    with pytest.raises(ValueError, match="without gold"):
        triple_answer_recall_at_k(top, [], 2)


def test_evidence_metrics_average_per_question() -> None:
    a = Evidence([("K", "r", "D"), ("K", "y", "1944")], "D", chains=3, tokens=30, flat_tokens=20)
    b = Evidence([("H", "r", "X"), ("H", "y", "1939")], "X", chains=1, tokens=10, flat_tokens=20)
    c = Evidence([], None)
    runs = [(a, ["D", "1944"]), (b, ["1939", "1940"]), (c, ["Q"])]
    m = kgqa_evidence_metrics(runs, [1, 2])
    # AnsR@1: a 1/2, b 0, c 0 -> 1/6; AnsR@2: a 1, b 1/2, c 0 -> 1/2
    assert m["AnsR@1"] == pytest.approx(100 / 6)
    assert m["AnsR@2"] == pytest.approx(50.0)
    assert m["Hit@1"] == pytest.approx(100 / 3)  # only a's top answer is gold
    assert (m["chains"], m["tokens"], m["flat_tokens"]) == (
        pytest.approx(4 / 3),
        pytest.approx(40 / 3),
        pytest.approx(40 / 3),
    )


# -- the harness hook -----------------------------------------------------------------------
#: 60 triples around "T": the gold answer "G" is the tail of triple 40 (its 80th entity).
CHAIN = [("T", f"r{i}", f"E{i}") for i in range(39)] + [("T", "r39", "G")]
CHAIN += [("T", f"s{i}", f"F{i}") for i in range(20)]


@dataclass
class ToyTripleRetriever:
    triples: list[Triple]

    def retrieve(self, query: str, k: int | None = None) -> list[Any]:
        return []

    async def aretrieve(self, query: str, k: int | None = None) -> list[Any]:
        return []

    def kgqa_evidence(self, question: Question, k: int) -> Evidence:
        top = self.triples[:k]
        lines = "\n".join(f"{h} -> [{r}] -> {t}" for h, r, t in top)
        return Evidence(top, top[0][2], chains=2, tokens=7, flat_tokens=-(-len(lines) // 4))


def toy_build(embedder: Any, *, triples: list[Triple], **_: Any) -> ToyTripleRetriever:
    return ToyTripleRetriever(list(triples))


@pytest.fixture
def toy_triples() -> Iterator[None]:
    registry.register(
        MethodRegistration(
            name="toy-triples",
            index_class=f"{__name__}:ToyTripleRetriever",
            builder=f"{__name__}:toy_build",
            inputs=frozenset({"triples"}),
        )
    )
    yield
    registry.unregister("toy-triples")


def test_harness_counts_entities_of_the_top_k_triples(toy_triples: None) -> None:
    qs = [
        Question("q1", "which one is G", ["G"], [], {"topic_entity": "T"}),
        Question("q2", "which one is E0", ["E0", "F19"], [], {"topic_entity": "T"}),
        Question("q3", "no gold answer", [], [], {}),  # left out of the KGQA metrics
    ]
    report = run_eval(
        Dataset("toy", [], qs, CHAIN),
        ["toy-triples"],
        embedder=FakeEmbedder(),
        ks=(2,),
        show_progress=False,
    )
    row = report.to_json()["results"]["toy-triples"]
    # q1: G is in triple 40 -> within the top-50 triples (a ranking of the first 50
    # *entities* would stop at triple 25 and miss it); q2: E0 in triple 1, F19 in triple 60.
    assert row["AnsR@50"] == pytest.approx((1.0 + 0.5) / 2 * 100)
    assert row["AnsR@100"] == pytest.approx(100.0)
    assert row["Hit@1"] == pytest.approx(50.0)  # top answer E0: q2 yes, q1 no
    assert row["chains"] == 2.0 and row["tokens"] == 7.0
    lines = "\n".join(f"{h} -> [{r}] -> {t}" for h, r, t in CHAIN)
    assert row["flat_tokens"] == pytest.approx(-(-len(lines) // 4))
    table = format_report(report)
    header = table.splitlines()[1].split()
    assert header[-6:] == ["AnsR@50", "AnsR@100", "Hit@1", "chains", "tokens", "flat_tokens"]
