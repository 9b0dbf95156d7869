"""KG-Translator under a metadata filter: translation, tracing, fusion, top-up and the
decomposition LLM's evidence use only the matching passages (methods.kgt.scope)."""

from __future__ import annotations

from typing import Any

import pytest

from graphrag_integrations.methods.kgt.index import ParseKGTranslatorRetriever
from tests.unit.kgt_fixtures import KGT_CORPUS, make_kgt
from tests.unit.methods.kgt.test_kgt_index import QUESTIONS

ALLOWED = ("Marie Curie", "Paris", "Brian Clough")
WHERE: dict[str, Any] = {"title": {"$in": list(ALLOWED)}}
MODES: dict[str, dict[str, Any]] = {
    "rrf": {},
    "traced + top-up": {"preset": "paper", "top_up": True},
}


def answers(index: ParseKGTranslatorRetriever, where: Any = WHERE) -> list[list[Any]]:
    return [
        [(r.id, round(r.score, 5), r.explanation) for r in index.retrieve(q, k=4, filter=where)]
        for q in QUESTIONS
    ]


class RecordingDecomposer:
    """A decomposition LLM that records its prompts and asks one more query."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def complete(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return "So the next search query is: Where is Nottingham?"


@pytest.mark.parametrize("mode", sorted(MODES))
def test_a_filtered_query_answers_as_an_index_of_the_matching_passages(lm: Any, mode: str) -> None:
    index = make_kgt(lm, **MODES[mode])
    alone = make_kgt(lm, [item for item in KGT_CORPUS if item[0] in ALLOWED], **MODES[mode])
    got = answers(index)
    assert any(got)
    sentences = " ".join(body for title, body in KGT_CORPUS if title in ALLOWED)
    for hits in got:
        for pid, _, explanation in hits:
            assert pid.split("#")[0] in ALLOWED
            assert all(clue["sentence"] in sentences for clue in explanation["clues"])
    expected = [[(r.id, round(r.score, 5)) for r in alone.retrieve(q, k=4)] for q in QUESTIONS]
    assert [[(pid, score) for pid, score, _ in hits] for hits in got] == expected


@pytest.mark.parametrize("mode", sorted(MODES))
def test_per_query_reads_answer_a_filter_as_the_flat_view(lm: Any, mode: str) -> None:
    flat = answers(make_kgt(lm, **MODES[mode]))
    assert answers(make_kgt(lm, graph_view="neighbourhood", **MODES[mode])) == flat


def test_the_decomposition_llm_sees_only_matching_evidence(lm: Any) -> None:
    decomposer = RecordingDecomposer()
    index = make_kgt(lm, decomposer=decomposer, max_steps=2)
    index.retrieve("Where was Marie Curie born?", k=3, filter=WHERE)
    assert decomposer.prompts
    hidden = [body for title, body in KGT_CORPUS if title not in ALLOWED]
    for prompt in decomposer.prompts:
        evidence = prompt.split("Evidence:", 1)[1]
        assert not any(sentence in evidence for body in hidden for sentence in body.split(". "))


def test_a_filter_matching_nothing_returns_nothing(lm: Any) -> None:
    index = make_kgt(lm)
    assert index.retrieve(QUESTIONS[0], k=3, filter={"title": "Atlantis"}) == []
