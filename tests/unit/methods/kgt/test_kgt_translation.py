"""Constrained bidirectional translation on a tiny random LM with a real BPE tokenizer.

Property: every clue is (an entity of the direction, a span of one of its hyperrelations),
for any query and model seed; dead or invalid beams are dropped, never decoded freely.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphrag_integrations.core.llm import LLMClient, TransformersLLM
from graphrag_integrations.methods.kgt.constraints import contains_span
from graphrag_integrations.methods.kgt.index import ParseKGTranslatorRetriever
from graphrag_integrations.methods.kgt.params import KGTQueryParams
from graphrag_integrations.methods.kgt.translation import (
    Clue,
    TranslationResult,
    Translator,
    constrained_generate_many,
    translation_prompt,
)
from tests.conftest import FakeEmbedder
from tests.unit.kgt_fixtures import documents, make_tiny_lm

QUERIES = [
    "Where was Marie Curie born?",
    "Who managed Nottingham Forest?",
    "What flows through Warsaw?",
    "Which club is based in London?",
    "What is the capital of France?",
]


@pytest.fixture(scope="module")
def lms(tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    root = tmp_path_factory.mktemp("kgt_lms")
    return [
        TransformersLLM(str(make_tiny_lm(root / f"lm{s}", seed=s)), use_chat_template=False)
        for s in range(2)
    ]


@pytest.fixture(scope="module")
def index(lms: list[Any]) -> ParseKGTranslatorRetriever:
    return ParseKGTranslatorRetriever.from_documents(
        documents(), embedding=FakeEmbedder(), translator=lms[0]
    )


def _check_clue(index: ParseKGTranslatorRetriever, clue: Clue) -> None:
    view, ix = index.view, index.constraint_indexes
    entity = view.entities[clue.entity]
    rels = entity.out_rels if clue.direction == "forward" else entity.in_rels
    if clue.source == "translated":
        entries = view.forward_entries if clue.direction == "forward" else view.reverse_entries
        assert clue.entity in entries
    assert 1 <= len(clue.relation_ids) <= index.index_params.max_relation_tokens
    holders = [r for r in rels if contains_span(ix.rel_tokens[r], clue.relation_ids)]
    assert holders, clue
    assert set(clue.hyperedges) == set(holders)


@settings(
    max_examples=16, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.sampled_from(QUERIES),
    st.integers(0, 1),
    st.integers(1, 3),
    st.integers(1, 3),
    st.booleans(),
)
def test_every_clue_exists_in_the_parsekg_forward_and_reverse(
    index: ParseKGTranslatorRetriever,
    lms: list[Any],
    query: str,
    seed: int,
    alpha: int,
    beta: int,
    early_stopping: bool,
) -> None:
    params = KGTQueryParams(alpha=alpha, beta=beta, reverse="always", early_stopping=early_stopping)
    translator = Translator(
        LLMClient(lms[seed]), index.constraint_indexes, params, nlp=index.parser
    )
    result = translator.translate(query)
    assert result.reverse_ran
    directions = Counter(c.direction for c in result.clues)
    assert directions["forward"] > 0 and directions["reverse"] > 0
    for clue in result.clues:
        _check_clue(index, clue)
        decoded = index.lm.tokenizer.decode(list(clue.relation_ids)).strip()
        assert clue.relation == decoded


def test_query_entities_are_always_translated(index: ParseKGTranslatorRetriever) -> None:
    result = index.translate("Where was Marie Curie born?")
    assert result.query_entities == ["marie curie"]
    assert any(c.entity == "marie curie" and c.direction == "forward" for c in result.clues)
    off = index.translator(replace(index.query_params, add_query_entities=False, alpha=1))
    r2 = off.translate("Where was Marie Curie born?")
    assert all(c.source == "translated" for c in r2.clues)


def test_dead_and_invalid_beams_are_dropped_and_counted(
    index: ParseKGTranslatorRetriever,
) -> None:
    ix = index.constraint_indexes
    tokens = ix.rel_tokens[index.view.entities["marie curie"].out_rels[0]]
    first = tokens[0]

    def dies_after_one(prefix: tuple[int, ...]) -> list[int]:
        return [first] if prefix == () else []

    (hyps,) = constrained_generate_many(
        index.client, "q", [((), dies_after_one, None)], num_beams=3, max_tokens=4
    )
    assert hyps and all(h.verdict != "complete" for h in hyps)
    assert "dead" in {h.verdict for h in hyps}
    # through the translator: a relation constraint that always dies yields no clue
    translator = index.translator(KGTQueryParams(beta=2))
    real = ix.relations("marie curie", "forward")
    assert real is not None
    dying = replace(real, constraint=dies_after_one)  # type: ignore[arg-type]
    original = ix.relations
    ix.relations = lambda e, d: dying  # type: ignore[method-assign,assignment]
    try:
        result = TranslationResult()
        clues = translator._relation_rows("q", [("marie curie", "translated", "forward")], result)
    finally:
        ix.relations = original  # type: ignore[method-assign]
    assert clues == [] and result.dropped["dead"] >= 1


@pytest.mark.parametrize(
    ("mode", "forward", "query_entities", "expect_reverse"),
    [
        ("fallback", True, ["marie curie"], False),  # forward traced and covers E_q
        ("fallback", False, [], True),  # nothing traced
        ("fallback", True, ["marie curie", "paris"], True),  # a query entity is missing
        ("never", False, ["paris"], False),
        ("always", True, ["marie curie"], True),
    ],
)
def test_algorithm_2_reverse_policy(
    index: ParseKGTranslatorRetriever,
    monkeypatch: pytest.MonkeyPatch,
    mode: str,
    forward: bool,
    query_entities: list[str],
    expect_reverse: bool,
) -> None:
    clue = Clue("marie curie", "Marie Curie", "born", "forward", "translated", 0.0, (1,), ("r",))
    translator = index.translator(KGTQueryParams(reverse=mode))  # type: ignore[arg-type]
    calls: list[list[str]] = []

    def fake_rows(prompt: Any, jobs: Any, result: Any) -> list[Clue]:
        calls.append(sorted({d for _, _, d in jobs}))
        return [clue] if any(d == "forward" for _, _, d in jobs) and forward else []

    monkeypatch.setattr(translator, "_relation_rows", fake_rows)
    monkeypatch.setattr(translator, "query_entities", lambda q: query_entities)
    result = translator.translate("question")
    assert result.reverse_ran is expect_reverse
    seen = sorted({d for call in calls for d in call})
    assert seen == (["forward", "reverse"] if expect_reverse else ["forward"])
    # forward relations come before (or with) reverse ones, each direction searched once
    assert sum(len(c) for c in calls) == len(seen) and calls[0][0] == "forward"
    if mode == "always":  # reverse is certain: one relation call for both directions
        assert calls == [["forward", "reverse"]]


def test_reverse_certain_from_entities_is_one_call_and_equals_two(
    index: ParseKGTranslatorRetriever, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "1903" is a query entity but no forward (head) entity: forward clues cannot cover it
    query = "Who won the Nobel Prize in Physics in 1903?"
    translator = index.translator(KGTQueryParams(reverse="fallback", alpha=2, beta=2))
    monkeypatch.setattr(translator, "query_entities", lambda q: ["marie curie", "1903"])
    assert not index.view.rels_of("1903", "forward") and index.view.rels_of("1903", "reverse")
    rows: list[int] = []
    original = index.client.generate_many

    def counting(*args: Any, **kwargs: Any) -> Any:
        rows.append(len(kwargs["prefixes"]))
        return original(*args, **kwargs)

    monkeypatch.setattr(index.client, "generate_many", counting)
    batched = translator.translate(query)
    assert batched.reverse_ran and len(rows) == 2  # entities (2 directions), relations (all)
    assert rows[0] == 2
    # the same clues as forward then reverse translated one direction at a time
    prompt = translation_prompt(query)
    sequential: list[Clue] = []
    for direction in ("forward", "reverse"):
        decoded = translator.translate_entities_many(prompt, [direction])[direction]
        keys = translator._entity_keys(direction, decoded, None)
        jobs = dict.fromkeys(keys, "translated")
        for e in ["marie curie", "1903"]:
            if index.view.rels_of(e, direction):
                jobs.setdefault(e, "query_entity")
        for e, src in jobs.items():
            sequential.extend(translator._relation_rows(prompt, [(e, src, direction)], None))
    assert [(c.entity, c.direction, c.relation_ids) for c in batched.clues] == [
        (c.entity, c.direction, c.relation_ids) for c in sequential
    ]
    assert [c.score for c in batched.clues] == pytest.approx([c.score for c in sequential])


def test_translation_prompt_ends_with_the_query(index: ParseKGTranslatorRetriever) -> None:
    ids = index.lm.encode_prompt(translation_prompt("Who?"))["input_ids"][0].tolist()
    assert index.lm.tokenizer.decode(ids).endswith("Query: Who?")


def test_translation_goes_through_the_client_cache_and_usage(lms: list[Any], tmp_path: Any) -> None:
    client = LLMClient(lms[1], cache_dir=tmp_path / "cache")
    index = ParseKGTranslatorRetriever.from_documents(
        documents(),
        embedding=FakeEmbedder(),
        translator=client,
        query_params=KGTQueryParams(reverse="always"),
    )
    first = index.translate("Where was Marie Curie born?")
    calls = client.usage.calls
    assert calls >= 3 and client.usage.completion_tokens > 0  # entities + relations, 2 ways
    again = index.translate("Where was Marie Curie born?")
    assert client.usage.calls == calls and client.usage.cache_hits >= calls
    assert [(c.entity, c.relation_ids) for c in again.clues] == [
        (c.entity, c.relation_ids) for c in first.clues
    ]
    # a changed graph changes the constraint keys: no stale cache hit
    index.delete("Warsaw")
    index.translate("Where was Marie Curie born?")
    assert client.usage.calls > calls
