"""Shared fixtures for the Clue-RAG tests: a tiny multi-hop corpus.

The Clue tests embed with ``tests.conftest.FakeEmbedder`` (an L2-normalised hashed bag of
words), so they run fast and deterministically without loading MiniLM.
"""

from __future__ import annotations

from collections.abc import Sequence

from graphrag_integrations.core.text.documents import SourceDocument

CORPUS = [
    (
        "Nottingham Forest",
        "Nottingham Forest won the European Cup in 1979. The club is based in "
        "Nottingham, England. Forest won the FA Cup in 1898 and 1959.",
    ),
    (
        "European Cup",
        "The European Cup was a football competition organised by UEFA. Real Madrid "
        "won the first five editions.",
    ),
    ("Chelsea F.C.", "Chelsea F.C. won the FA Cup in 1970. Chelsea is based in London."),
    (
        "Brian Clough",
        "Brian Clough managed Nottingham Forest from 1975 to 1993. He was born in Middlesbrough.",
    ),
    ("Middlesbrough", "Middlesbrough is a town in North Yorkshire, England. It has two rivers."),
    ("Paris", "Paris is the capital of France. The Eiffel Tower stands in Paris."),
]


def documents(items: Sequence[tuple[str, str]] = CORPUS) -> list[SourceDocument]:
    return [SourceDocument(text=f"{t}\n{body}", id=t, metadata={"title": t}) for t, body in items]
