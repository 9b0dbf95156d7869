"""Compliance cases of chunking and document management: the default splitter, a given
LangChain text splitter or LlamaIndex node parser, ``chunking=False``, ``doc_ids`` and
``upsert``."""

from __future__ import annotations

import random
from typing import Any

import pytest

from graphrag_integrations.core.index.base import BaseIndex
from graphrag_integrations.core.text.documents import SourceDocument
from graphrag_integrations.testing.compliance.base import ComplianceBase
from graphrag_integrations.testing.compliance.corpus import (
    CONCURRENT_EXTRAS,
    CORPUS,
    EXTRA,
    EXTRA_QUERY,
    QUERIES_BY_ID,
    CorpusDocument,
    Probe,
    compliance_documents,
)

#: The last sentence of :func:`long_document` and a probe that targets it.
LONG_TARGET = "Ada Lovelace wrote the first program for the Analytical Engine of Charles Babbage."
LONG_QUERY = Probe("Who wrote the first program for the Analytical Engine?", "long")
#: A two-paragraph document (Paris, then Rome) for the splitter cases: id ``"pair"``.
PAIR = CorpusDocument("pair", "Capitals", f"{CORPUS[0].text}\n\n{CORPUS[1].text}")
#: The new version of ``"paris"`` that ``upsert`` puts in place of the old one.
PARIS_V2 = CorpusDocument(
    "paris", "Paris", "The Louvre in Paris displays the Mona Lisa painted by Leonardo da Vinci."
)
PARIS_V2_QUERY = Probe("Which museum displays the Mona Lisa painted by Leonardo da Vinci?", "paris")


def long_document(splitter: Any, factor: float = 2.5) -> str:
    """A text of about ``factor`` times ``splitter.chunk_size`` tokens of ``splitter``'s
    tokenizer: filler paragraphs, then :data:`LONG_TARGET` (so the default splitter of an
    index cuts it into at least two chunks, the target in the last)."""
    paragraphs: list[str] = []
    text = LONG_TARGET
    while len(splitter.tokenizer.token_offsets(text)) < factor * splitter.chunk_size:
        i = len(paragraphs)
        paragraphs.append(
            f"Paragraph {i} of the logbook notes calm weather, grey tides and {i % 7 + 2} "
            "gulls near the harbour wall before the evening watch."
        )
        text = "\n\n".join([*paragraphs, LONG_TARGET])
    return text


#: The words of :func:`random_prose`.
PROSE_WORDS = (
    "the river city capital mountain music game science prize ocean north south".split()  # noqa: SIM905
)


def random_prose(n_chars: int, seed: int = 0) -> str:
    """At least ``n_chars`` characters of twelve-word sentences of random
    :data:`PROSE_WORDS`, a blank line every eight sentences (a long document to cut).

    Examples
    --------
    >>> text = random_prose(2000)
    >>> len(text) >= 2000, text == random_prose(2000), len(text.split(chr(10) * 2))  # paragraphs
    (True, True, 4)
    """
    rng = random.Random(seed)
    parts: list[str] = []
    size = 0
    while size < n_chars:
        sentence = " ".join(rng.choice(PROSE_WORDS) for _ in range(12)).capitalize() + "."
        parts.append(sentence + ("\n\n" if len(parts) % 8 == 7 else " "))
        size += len(parts[-1])
    return "".join(parts)


class ParagraphSplitter:
    """A LangChain-style text splitter (``split_text``): one piece per paragraph; it records
    the texts it was given."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def split_text(self, text: str) -> list[str]:
        self.calls.append(text)
        return [p.strip() for p in text.split("\n\n") if p.strip()]


def llama_index_sentence_splitter() -> Any:
    """A LlamaIndex ``SentenceSplitter`` that cuts :data:`PAIR` into its two sentences
    (whitespace tokens, so it needs no tokenizer download)."""
    from llama_index.core.node_parser import SentenceSplitter

    return SentenceSplitter(chunk_size=16, chunk_overlap=0, tokenizer=str.split)


class ChunkingCases(ComplianceBase):
    """Long documents are cut by the default splitter, ``splitter=`` replaces it (in
    ``insert`` too), ``chunking=False`` keeps documents whole; ``doc_ids`` and ``upsert``."""

    def test_a_long_document_is_cut_into_chunks_by_default(self, embedder: Any) -> None:
        splitter = self.index_class.default_splitter()
        text = long_document(splitter)
        chunks = splitter.split(text)
        assert len(chunks) >= 2
        docs = [*compliance_documents(), SourceDocument(text, id="long", metadata={"k": "v"})]
        index = self._build(docs, embedder)
        hit = self._assert_finds(index, LONG_QUERY)
        assert hit.text != text, "the whole document came back as one passage"
        assert len(hit.text) <= max(len(c.text) for c in chunks)
        if "chunk_index" in hit.passage.metadata:  # a chunk (not a derived text)
            i = hit.passage.metadata["chunk_index"]
            assert hit.text == chunks[i].text
            assert hit.id == f"long#{i}"
            assert hit.passage.metadata["k"] == "v"
        assert "long" in index.doc_ids()
        assert index.delete("long") is True
        assert "long" not in index.doc_ids(), "a chunk survived delete (still in doc_ids)"
        everything = index.retrieve(LONG_QUERY.query, k=len(CORPUS))
        assert "long" not in {h.doc_id for h in everything}, "a chunk survived delete"
        assert index.delete("long") is False

    @pytest.mark.parametrize("kind", ["langchain", "llama_index"])
    def test_a_text_splitter_or_node_parser_replaces_the_default(
        self, embedder: Any, kind: str
    ) -> None:
        splitter: Any = (
            ParagraphSplitter() if kind == "langchain" else llama_index_sentence_splitter()
        )
        others = [d for d in CORPUS if d.id not in ("paris", "rome")]
        index = self._build(compliance_documents([*others, PAIR]), embedder, splitter=splitter)
        assert index.splitter is splitter
        rome = QUERIES_BY_ID["rome"]
        hit = self._assert_finds(index, Probe(rome.query, PAIR.id))
        if "chunk_index" in hit.passage.metadata:
            assert (hit.id, hit.text) == (f"{PAIR.id}#1", CORPUS[1].text)
            assert hit.passage.metadata["title"] == PAIR.title
        # insert cuts with the same splitter
        two = CorpusDocument("two", "Two", f"{EXTRA.text}\n\n{CONCURRENT_EXTRAS[0].text}")
        assert index.insert(compliance_documents([two])) == ["two"]
        if isinstance(splitter, ParagraphSplitter):
            assert PAIR.text in splitter.calls
            assert splitter.calls[-1] == two.text
        hit = self._assert_finds(index, Probe(EXTRA_QUERY.query, "two"))
        if "chunk_index" in hit.passage.metadata:
            assert (hit.id, hit.text) == ("two#0", EXTRA.text)
        assert index.delete(PAIR.id) is True
        assert PAIR.id not in {h.doc_id for h in index.retrieve(rome.query, k=len(CORPUS))}

    def test_chunking_false_keeps_each_document_whole(self, embedder: Any) -> None:
        others = [d for d in CORPUS if d.id not in ("paris", "rome")]
        index = self._build(compliance_documents([*others, PAIR]), embedder, chunking=False)
        assert index.splitter is None
        hit = self._assert_finds(index, Probe(QUERIES_BY_ID["rome"].query, PAIR.id))
        if "chunk_index" in hit.passage.metadata:
            assert (hit.id, hit.text) == (f"{PAIR.id}#0", PAIR.text)

    def test_doc_ids_lists_the_documents_indexed(self, index: BaseIndex) -> None:
        assert index.doc_ids() == sorted(d.id for d in CORPUS)
        index.insert(compliance_documents([EXTRA]))
        assert index.doc_ids() == sorted([*(d.id for d in CORPUS), EXTRA.id])
        assert index.delete(CORPUS[0].id) is True
        assert CORPUS[0].id not in index.doc_ids()

    def test_upsert_replaces_a_document_by_id(
        self, index: BaseIndex, caplog: pytest.LogCaptureFixture
    ) -> None:
        old_word = "Seine"  # only in the old version of "paris"
        assert index.upsert(compliance_documents([PARIS_V2, EXTRA])) == [PARIS_V2.id, EXTRA.id]
        assert index.doc_ids().count(PARIS_V2.id) == 1
        hit = self._assert_finds(index, PARIS_V2_QUERY)
        assert "Mona Lisa" in hit.text or "Louvre" in hit.text
        everything = index.retrieve("capital of France on the Seine", k=len(CORPUS) + 1)
        assert not any(old_word in h.text for h in everything), "the old version is still there"
        self._assert_finds(index, EXTRA_QUERY)
        # the same as a fresh build of the new corpus (same document order)
        others = [d for d in CORPUS if d.id != PARIS_V2.id]
        fresh = self._build(compliance_documents([*others, PARIS_V2, EXTRA]), self.make_embedder())
        self._assert_same_answers(self._answers(index), self._answers(fresh))
        assert index.delete(PARIS_V2.id) is True
        assert index.delete(PARIS_V2.id) is False
