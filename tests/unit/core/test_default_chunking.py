"""Default chunking, splitters and document management in the core (issue 12, "Input: No
chunking" and "Document management")."""

from __future__ import annotations

import asyncio
import pickle
from pathlib import Path

import pytest

from graphrag_integrations.baselines.bm25 import BM25Retriever
from graphrag_integrations.baselines.dense import DenseRetriever
from graphrag_integrations.core.index.base import DEFAULT_SPLITTER, BaseIndex, pop_splitter
from graphrag_integrations.core.text.chunking import (
    HFOffsetTokenizer,
    TokenChunker,
    default_chunker,
    source_metadata,
    split_documents,
)
from graphrag_integrations.core.text.documents import SourceDocument
from graphrag_integrations.errors import InvalidArgumentError
from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.methods.kgt.index import ParseKGTranslatorRetriever
from graphrag_integrations.methods.qcg.index import QueryCentricGraphIndex
from graphrag_integrations.methods.reg.index import RefinedSubgraphRetriever
from graphrag_integrations.testing import FakeEmbedder
from graphrag_integrations.testing.compliance.chunking import random_prose


def test_every_index_declares_its_chunk_size_once() -> None:
    sizes = {
        cls.method: (cls.chunk_size, cls.chunk_overlap)
        for cls in (
            DenseRetriever,
            BM25Retriever,
            ClueIndex,
            ParseKGTranslatorRetriever,
            QueryCentricGraphIndex,
            RefinedSubgraphRetriever,
        )
    }
    assert sizes == {
        "dense": (256, 32),
        "bm25": (256, 32),
        "clue": (256, 32),
        "kgt": (256, 32),
        "qcg": (1200, 100),  # the paper's setting
        "reg": (512, 32),
    }
    chunker = QueryCentricGraphIndex.default_splitter()
    assert (chunker.chunk_size, chunker.chunk_overlap) == (1200, 100)
    assert chunker is QueryCentricGraphIndex.default_splitter()  # shared, built once


def test_a_512_kb_document_is_not_one_passage() -> None:
    """The issue: a 512 KB document came back as one 522,630-character passage."""
    text = random_prose(512 * 1024)
    index = BM25Retriever.from_documents([SourceDocument(text, id="big", metadata={"a": 1})])
    chunker = BM25Retriever.default_splitter()
    assert len(index.passages) > 100
    assert max(len(p.text) for p in index.passages) < 2_000
    for i, p in enumerate(index.passages):
        assert p.id == f"big#{i}"
        assert p.doc_id == "big"
        assert p.metadata["a"] == 1
        assert text[p.metadata["start_char"] : p.metadata["end_char"]] == p.text
        assert len(chunker.tokenizer.token_offsets(p.text)) <= chunker.chunk_size
    hit = index.retrieve("river city capital", k=1)[0]
    assert len(hit.text) < 2_000
    assert index.delete("big") is True
    assert index.passages == [] and index.doc_ids() == []


def test_chunk_ids_are_deterministic_and_upsert_reuses_them() -> None:
    text = random_prose(4_000)
    first = DenseRetriever.from_documents([{"id": "d", "text": text}], embedding=FakeEmbedder())
    again = DenseRetriever.from_documents([{"id": "d", "text": text}], embedding=FakeEmbedder())
    assert [p.id for p in first.passages] == [p.id for p in again.passages]
    assert len(first.passages) >= 2
    assert first.upsert([{"id": "d", "text": "Short now."}]) == ["d"]
    assert [(p.id, p.text) for p in first.passages] == [("d#0", "Short now.")]


def test_a_real_langchain_text_splitter() -> None:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    text = random_prose(3_000)
    splitter = RecursiveCharacterTextSplitter(chunk_size=400, chunk_overlap=50)
    index = BM25Retriever.from_documents([SourceDocument(text, id="d")], splitter=splitter)
    assert [p.text for p in index.passages] == splitter.split_text(text)
    for p in index.passages:
        assert text[p.metadata["start_char"] : p.metadata["end_char"]] == p.text
    assert index.splitter is splitter


def test_a_real_llama_index_node_parser_keeps_offsets() -> None:
    from llama_index.core.node_parser import SentenceSplitter

    text = random_prose(3_000)
    parser = SentenceSplitter(chunk_size=60, chunk_overlap=0, tokenizer=str.split)
    (doc,) = [SourceDocument(text, id="d", metadata={"title": "T"})]
    passages = split_documents([doc], parser)
    assert len(passages) >= 3
    for i, p in enumerate(passages):
        assert (p.id, p.doc_id, p.metadata["title"]) == (f"d#{i}", "d", "T")
        assert text[p.metadata["start_char"] : p.metadata["end_char"]] == p.text


def test_a_splitter_that_rewrites_text_gives_no_offsets() -> None:
    class Upper:
        def split_text(self, text: str) -> list[str]:
            return [text.upper()]

    (p,) = split_documents([SourceDocument("abc", id="d")], Upper())
    assert (p.text, dict(p.metadata)) == ("ABC", {"chunk_index": 0})


def test_parts_of_one_document_are_numbered_across_parts() -> None:
    parts = [SourceDocument("First part.", id="d"), SourceDocument("Second part.", id="d")]
    passages = split_documents(parts, default_chunker(8, 2))
    assert [p.id for p in passages] == ["d#0", "d#1"]
    assert source_metadata(passages[1]) == {}


def test_chunking_options() -> None:
    assert pop_splitter({"chunking": False}) is None
    assert pop_splitter({"splitter": None}) is None
    chunker = TokenChunker(8, 2)
    assert pop_splitter({"chunker": chunker}) is chunker
    assert pop_splitter({"chunking": True}, default="d") is DEFAULT_SPLITTER
    assert pop_splitter({}, default="d") == "d"
    with pytest.raises(InvalidArgumentError, match="only one of"):
        pop_splitter({"chunking": False, "splitter": chunker})
    with pytest.raises(InvalidArgumentError, match="chunking must be"):
        pop_splitter({"chunking": "yes"})
    with pytest.raises(TypeError, match="splitter must be"):
        BM25Retriever.from_documents(["text"], splitter=42)
    index = BM25Retriever.from_documents(["text"])
    with pytest.raises(TypeError, match="unknown option"):
        index.insert(["more"], chunk_size=3)


def test_from_documents_chunking_false_then_insert_keeps_documents_whole() -> None:
    text = random_prose(5_000)
    index = BM25Retriever.from_documents([{"id": "a", "text": text}], chunking=False)
    assert [p.id for p in index.passages] == ["a#0"]
    index.insert([{"id": "b", "text": text}])
    assert [p.id for p in index.passages] == ["a#0", "b#0"]
    index.insert([{"id": "c", "text": text}], chunking=True)  # the class default, this once
    assert len([p for p in index.passages if p.doc_id == "c"]) >= 2


def test_a_loaded_index_chunks_with_the_class_default(tmp_path: Path) -> None:
    index = BM25Retriever.from_documents(["seed"], chunking=False)
    index.persist(tmp_path / "bm25")
    loaded = BM25Retriever.load(tmp_path / "bm25")
    assert loaded.splitter is BM25Retriever.default_splitter()
    loaded.insert([{"id": "long", "text": random_prose(5_000)}])
    assert len([p for p in loaded.passages if p.doc_id == "long"]) >= 2


def test_doc_ids_and_delete_return_values() -> None:
    index = DenseRetriever.from_documents(
        [{"id": "b", "text": random_prose(3_000)}, {"id": "a", "text": "Alpha."}],
        embedding=FakeEmbedder(),
    )
    assert index.doc_ids() == ["a", "b"]
    assert index.delete("b") is True
    assert index.delete("b") is False
    assert index.doc_ids() == ["a"]


def test_upsert_replaces_and_adds_under_one_write_lock() -> None:
    index = DenseRetriever.from_documents(
        [{"id": "a", "text": "Old alpha."}, {"id": "b", "text": "Beta."}], embedding=FakeEmbedder()
    )
    seen: list[bool] = []
    original = index.delete

    def delete(doc_id: str) -> bool:
        seen.append(index.rwlock.writer_active)
        return original(doc_id)

    index.delete = delete  # type: ignore[method-assign]
    assert index.upsert([{"id": "a", "text": "New alpha."}, {"id": "c", "text": "Gamma."}]) == [
        "a",
        "c",
    ]
    assert seen == [True]
    assert sorted(p.text for p in index.passages) == ["Beta.", "Gamma.", "New alpha."]
    assert asyncio.run(index.aupsert([{"id": "b", "text": "Beta two."}])) == ["b"]
    assert sorted(p.text for p in index.passages) == ["Beta two.", "Gamma.", "New alpha."]


def test_upsert_is_guarded_for_every_index() -> None:
    from graphrag_integrations.core.index.locking import is_guarded

    for cls in (DenseRetriever, BM25Retriever, ClueIndex, RefinedSubgraphRetriever):
        assert is_guarded(cls.upsert) == "write"
        assert is_guarded(cls.doc_ids) == "read"
    assert getattr(BaseIndex.from_documents, "__isabstractmethod__", False) is False


def test_the_default_chunker_pickles() -> None:
    chunker = default_chunker(16, 4)
    before = chunker.split(random_prose(400))
    copy = pickle.loads(pickle.dumps(chunker))
    assert [c.text for c in copy.split(random_prose(400))] == [c.text for c in before]
    assert isinstance(copy.tokenizer, HFOffsetTokenizer)


def test_a_langchain_splitter_returning_documents_keeps_their_metadata() -> None:
    from langchain_text_splitters import MarkdownHeaderTextSplitter

    text = "# Cities\n\nParis is in France.\n\n## Rivers\n\nThe Seine flows through Paris."
    splitter = MarkdownHeaderTextSplitter([("#", "h1"), ("##", "h2")])
    index = BM25Retriever.from_documents(
        [SourceDocument(text, id="md", metadata={"source": "x.md"})], splitter=splitter
    )
    assert [(p.id, p.text) for p in index.passages] == [
        ("md#0", "Paris is in France."),
        ("md#1", "The Seine flows through Paris."),
    ]
    second = index.passages[1].metadata
    assert (second["h1"], second["h2"], second["source"]) == ("Cities", "Rivers", "x.md")
    assert text[second["start_char"] : second["end_char"]] == index.passages[1].text


def test_a_splitter_with_only_split_documents() -> None:
    from langchain_core.documents import Document

    class Halves:
        def split_documents(self, documents: list[Document]) -> list[Document]:
            text = documents[0].page_content
            mid = len(text) // 2
            return [Document(page_content=text[:mid]), Document(page_content=text[mid:])]

    passages = split_documents([SourceDocument("abcdefgh", id="d")], Halves())
    assert [(p.text, p.metadata["start_char"]) for p in passages] == [("abcd", 0), ("efgh", 4)]


def test_upsert_checks_its_options_before_deleting() -> None:
    index = BM25Retriever.from_documents([{"id": "a", "text": "Alpha."}])
    with pytest.raises(TypeError, match="unknown option"):
        index.upsert([{"id": "a", "text": "New alpha."}], chunk_size=3)
    with pytest.raises(InvalidArgumentError, match="chunking must be"):
        index.upsert([{"id": "a", "text": "New alpha."}], chunking="no")
    assert [p.text for p in index.passages] == ["Alpha."]
