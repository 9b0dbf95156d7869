"""The corpus and questions of the kill-during-write tests (Chroma and FalkorDB servers)."""

from __future__ import annotations

from typing import Any

from graphrag_integrations.core.text.documents import SourceDocument
from graphrag_integrations.testing.compliance import CorpusDocument, compliance_documents

QUESTIONS = ("Which river runs through town 3?", "Who founded town 12?", "Where is town 27?")


def town_corpus(start: int, stop: int) -> list[Any]:
    """Documents ``d<start>`` to ``d<stop - 1>``: a town each, its river and founder."""
    docs = [
        CorpusDocument(
            f"d{i:03d}",
            f"Town {i}",
            f"Town {i} lies on river R{i % 7}. It was founded by Mayor M{i % 5} in {1800 + i}.",
        )
        for i in range(start, stop)
    ]
    return compliance_documents(docs)


def new_versions(docs: list[Any]) -> list[Any]:
    """Other texts under the same ids and metadata (what an ``upsert`` puts in their place)."""
    return [
        SourceDocument(f"{d.text} Its new bridge crosses river Q.", id=d.id, metadata=d.metadata)
        for d in docs
    ]


def answers(index: Any, digits: int) -> list[list[tuple[str, float]]]:
    """The top 5 ``(passage id, score rounded to digits)`` of each question."""
    return [
        [(hit.passage.id, round(hit.score, digits)) for hit in index.retrieve(q, k=5)]
        for q in QUESTIONS
    ]
