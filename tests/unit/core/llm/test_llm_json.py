"""extract_json: fences, prose, trailing commas, objects and lists; LLMOutputError otherwise."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphrag_integrations.core.llm import extract_json, strip_trailing_commas
from graphrag_integrations.errors import GraphRAGError, LLMOutputError


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ("[1, 2, 3]", [1, 2, 3]),
        ('```json\n{"a": [1, 2]}\n```', {"a": [1, 2]}),
        ('```\n["x", "y"]\n```', ["x", "y"]),
        ('Sure! Here you go:\n```JSON\n{"ok": true}\n```\nHope it helps.', {"ok": True}),
        (
            'Here is the answer: {"entity": "Paris", "type": "city"} as requested.',
            {
                "entity": "Paris",
                "type": "city",
            },
        ),
        ('{"a": [1, 2,], "b": {"c": 3,},}', {"a": [1, 2], "b": {"c": 3}}),
        ('Triples:\n[["Paris", "capital of", "France"],]\n', [["Paris", "capital of", "France"]]),
        # brackets inside strings do not confuse the span search
        ('note: {"text": "a } b ] c", "n": 1} end', {"text": "a } b ] c", "n": 1}),
        # escaped quotes inside strings
        (r'x {"q": "he said \"hi\", then left"} y', {"q": 'he said "hi", then left'}),
        # a comma before ] inside a string is kept
        ('{"s": "1,]", "t": [1,]}', {"s": "1,]", "t": [1]}),
        # bracketed prose before the payload: the longest parsed span wins
        (
            'See [1]. Result: {"answer": "Rome", "support": [1, 2]}',
            {
                "answer": "Rome",
                "support": [1, 2],
            },
        ),
        # a fence that does not parse is skipped, prose JSON found
        ('```\nnot json\n```\nfinal: ["a"]', ["a"]),
        # unbalanced opener in prose before the JSON
        ('Answer [ partial: {"a": 2}', {"a": 2}),
        ('"just a string"', "just a string"),
    ],
)
def test_extract_json_cases(reply: str, expected: Any) -> None:
    assert extract_json(reply) == expected


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "no json here",
        "{'single': 'quotes'}",
        '{"unterminated": [1, 2}',
        "```json\n{broken\n```",
        "{a: 1}",
    ],
)
def test_extract_json_raises(reply: str) -> None:
    with pytest.raises(LLMOutputError) as info:
        extract_json(reply)
    assert isinstance(info.value, GraphRAGError)
    assert isinstance(info.value, ValueError)


def test_extract_json_rejects_non_string() -> None:
    with pytest.raises(LLMOutputError):
        extract_json(None)  # type: ignore[arg-type]


def test_strip_trailing_commas_only_outside_strings() -> None:
    assert strip_trailing_commas("[1, 2, ]") == "[1, 2 ]"
    assert strip_trailing_commas('{"a": ",}"}') == '{"a": ",}"}'
    assert strip_trailing_commas("[1,\n  ]") == "[1\n  ]"
    assert strip_trailing_commas("[1, 2]") == "[1, 2]"


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=12,
)
_payloads = st.one_of(
    st.lists(_json_values, max_size=4), st.dictionaries(st.text(max_size=6), _json_values)
)
_prose = st.text(alphabet="abcdefgh .:!\n", max_size=30)


@settings(max_examples=60, deadline=None)
@given(payload=_payloads, before=_prose, after=_prose, fenced=st.booleans())
def test_extract_json_round_trips_embedded_payload(
    payload: Any, before: str, after: str, fenced: bool
) -> None:
    body = json.dumps(payload, indent=1 if fenced else None)
    reply = f"{before}\n```json\n{body}\n```\n{after}" if fenced else f"{before} {body} {after}"
    assert extract_json(reply) == payload


def test_python_literals_only_when_asked() -> None:
    reply = "Here: {'knowledge units': ['A is B.', 'C is D.',]}"
    with pytest.raises(LLMOutputError):
        extract_json(reply)
    assert extract_json(reply, python_literals=True) == {"knowledge units": ["A is B.", "C is D."]}
