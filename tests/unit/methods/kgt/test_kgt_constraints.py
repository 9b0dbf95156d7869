"""KG-constrained indexing: the relation span constraint and the entity/relation indexes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphrag_integrations.core.constraints import SubstringIndex
from graphrag_integrations.core.constraints.substring import brute_force_allowed
from graphrag_integrations.methods.kgt.constraints import (
    ConstraintIndexes,
    SpanConstraint,
    contains_span,
    separator_id,
)
from tests.conftest import FakeEmbedder
from tests.unit.kgt_fixtures import documents, make_tiny_lm

EOS = 0
entries_st = st.lists(st.lists(st.integers(1, 6), min_size=1, max_size=8), min_size=1, max_size=4)


def _expected(entries: list[list[int]], prefix: list[int], max_tokens: int) -> set[int]:
    occurs = not prefix or any(contains_span(e, prefix) for e in entries)
    if not occurs:
        return set()
    if len(prefix) >= max_tokens:
        return {EOS}
    nxt = set(brute_force_allowed(entries, prefix, EOS).tolist())
    if prefix:
        nxt.add(EOS)  # any non-empty span may end
    else:
        nxt.discard(EOS)  # never an empty relation
    return nxt


@settings(max_examples=60, deadline=None)
@given(entries_st, st.lists(st.integers(1, 6), max_size=5), st.integers(1, 4))
def test_span_constraint_matches_brute_force(
    entries: list[list[int]], prefix: list[int], max_tokens: int
) -> None:
    index = SubstringIndex(entries, terminator_id=EOS, backend="fm")
    span = SpanConstraint(index, eos_token_id=EOS, max_tokens=max_tokens)
    assert set(span(tuple(prefix)).tolist()) == _expected(entries, prefix, max_tokens)


@settings(max_examples=40, deadline=None)
@given(entries_st, st.integers(1, 5), st.randoms(use_true_random=False))
def test_walks_under_the_span_constraint_are_bounded_substrings(
    entries: list[list[int]], max_tokens: int, rnd: object
) -> None:
    index = SubstringIndex(entries, terminator_id=EOS, backend="suffix")
    span = SpanConstraint(index, eos_token_id=EOS, max_tokens=max_tokens)
    prefix: list[int] = []
    while True:
        allowed = span(tuple(prefix)).tolist()
        assert allowed, "a walk that follows the constraint never dies"
        token = rnd.choice(allowed)  # type: ignore[attr-defined]
        if token == EOS:
            break
        prefix.append(token)
    assert 1 <= len(prefix) <= max_tokens
    assert any(contains_span(e, prefix) for e in entries)


def test_contains_span() -> None:
    assert contains_span((1, 2, 3), (2, 3)) and contains_span((1,), ())
    assert not contains_span((1, 2, 3), (1, 3)) and not contains_span((1,), (1, 1))


@pytest.fixture(scope="module")
def indexes(tmp_path_factory: pytest.TempPathFactory) -> ConstraintIndexes:
    from graphrag_integrations.core.llm import TransformersLLM
    from graphrag_integrations.methods.kgt.index import ParseKGTranslatorRetriever

    path = make_tiny_lm(tmp_path_factory.mktemp("kgt_lm") / "lm")
    lm = TransformersLLM(str(path), use_chat_template=False)
    index = ParseKGTranslatorRetriever.from_documents(
        documents(), embedding=FakeEmbedder(), translator=lm
    )
    return index.constraint_indexes


def test_entity_tries_hold_tokenised_names_closed_by_the_separator(
    indexes: ConstraintIndexes,
) -> None:
    view, tok = indexes.view, indexes.tokenizer
    assert set(indexes.entity_tokens["forward"]) == set(view.forward_entries)
    for direction in ("forward", "reverse"):
        trie = indexes.tries[direction]
        for key, ids in indexes.entity_tokens[direction].items():
            assert ids == tuple(tok(view.entities[key].name, add_special_tokens=False)["input_ids"])
            assert ids in trie and indexes.sep_id in trie.allowed(ids).tolist()
            assert indexes.entity_for(direction, ids) == key
    assert indexes.sep_id == separator_id(tok)
    # a forward entry is a head somewhere; a reverse entry is a tail of an allowed type
    assert all(view.entities[k].out_rels for k in view.forward_entries)
    assert all(view.entities[k].label != "DATE" for k in view.reverse_entries)


def test_relation_index_is_over_the_entity_hyperrelations(indexes: ConstraintIndexes) -> None:
    view = indexes.view
    key = "marie curie"
    rel = indexes.relations(key, "forward")
    assert rel is not None and set(rel.rel_ids) == set(view.entities[key].out_rels)
    assert indexes.relations(key, "forward") is rel  # cached
    born = next(r for r in rel.rel_ids if "born" in view.rels[r].relation)
    tokens = indexes.rel_tokens[born]
    span = tokens[1:4]
    assert born in rel.trace(span)
    assert rel.constraint(span).tolist().count(indexes.eos_id) == 1
    assert indexes.relations("no such entity", "forward") is None
    rev = indexes.relations("warsaw", "reverse")
    assert rev is not None and set(rev.rel_ids) == set(view.entities["warsaw"].in_rels)


def test_separator_must_be_one_token() -> None:
    class Splitting:
        def __call__(self, text: str, add_special_tokens: bool = False) -> dict[str, list[int]]:
            return {"input_ids": [1, 2]}

    with pytest.raises(ValueError, match="one token"):
        separator_id(Splitting())


def test_constraint_cache_round_trip(indexes: ConstraintIndexes, tmp_path: Path) -> None:
    from graphrag_integrations.methods.kgt.store import (
        load_constraint_cache,
        save_constraint_cache,
    )

    fp = indexes.view.fingerprint()
    save_constraint_cache(
        tmp_path,
        fingerprint=fp,
        rel_tokens=indexes.rel_tokens,
        tries=indexes.tries,
        entity_tokens=indexes.entity_tokens,
    )
    assert load_constraint_cache(tmp_path, fingerprint="other") is None
    loaded = load_constraint_cache(tmp_path, fingerprint=fp)
    assert loaded is not None
    rels, tries, ents = loaded
    assert rels == indexes.rel_tokens and ents == indexes.entity_tokens
    assert list(tries["forward"]) == list(indexes.tries["forward"])
