"""The corpus every compliance case runs on: nine one-sentence documents, the documents
the lifecycle and concurrency cases add, and the probes that target them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from graphrag_integrations.core.text.documents import SourceDocument

__all__ = [
    "CONCURRENT_EXTRAS",
    "CORPUS",
    "EXTRA",
    "EXTRA_QUERY",
    "QUERIES",
    "QUERIES_BY_ID",
    "CorpusDocument",
    "Probe",
    "compliance_documents",
]


class CorpusDocument(NamedTuple):
    """One document of the compliance corpus."""

    id: str
    title: str
    text: str


class Probe(NamedTuple):
    """A query whose best result must come from document ``doc_id``."""

    query: str
    doc_id: str


#: Nine one-sentence documents on unrelated topics (few shared words, so that a lexical, a
#: dense or a graph index ranks the targeted one first).
CORPUS: tuple[CorpusDocument, ...] = (
    CorpusDocument("paris", "Paris", "Paris is the capital of France and lies on the Seine."),
    CorpusDocument("rome", "Rome", "Rome is the capital of Italy and was built on seven hills."),
    CorpusDocument(
        "curie", "Marie Curie", "Marie Curie won the Nobel Prize in Physics for radioactivity."
    ),
    CorpusDocument(
        "einstein", "Albert Einstein", "Albert Einstein published the theory of relativity."
    ),
    CorpusDocument(
        "carbonara", "Carbonara", "Carbonara is a pasta dish made with eggs, cheese and pepper."
    ),
    CorpusDocument(
        "amazon", "Amazon River", "The Amazon River flows through Brazil into the Atlantic Ocean."
    ),
    CorpusDocument(
        "everest", "Mount Everest", "Mount Everest is the highest mountain in the Himalayas."
    ),
    CorpusDocument("jazz", "Jazz", "Jazz music was born in New Orleans among brass bands."),
    CorpusDocument("chess", "Chess", "Chess is a board game played by two players with pieces."),
)
#: A document inserted (and deleted again) by the lifecycle cases.
EXTRA = CorpusDocument("tokyo", "Tokyo", "Tokyo is the capital of Japan and hosted the Olympics.")
#: Probes over :data:`CORPUS`; their results are compared across lifecycle operations.
QUERIES: tuple[Probe, ...] = (
    Probe("Which river flows through Brazil into the Atlantic Ocean?", "amazon"),
    Probe("Who won the Nobel Prize in Physics for radioactivity?", "curie"),
    Probe("What is the highest mountain in the Himalayas?", "everest"),
)
#: A probe whose answer is :data:`EXTRA`.
EXTRA_QUERY = Probe("What is the capital of Japan that hosted the Olympics?", "tokyo")
#: Probes by the id of the document they target.
QUERIES_BY_ID: dict[str, Probe] = {
    "rome": Probe("Which city is the capital of Italy and was built on seven hills?", "rome"),
    **{p.doc_id: p for p in QUERIES},
}
#: More documents for the concurrency cases (inserted by concurrent threads).
CONCURRENT_EXTRAS: tuple[CorpusDocument, ...] = (
    CorpusDocument("nile", "Nile", "The Nile is a long river that flows north through Egypt."),
    CorpusDocument("violin", "Violin", "The violin is a string instrument played with a bow."),
    CorpusDocument("etna", "Etna", "Etna is an active volcano on the island of Sicily."),
)


def compliance_documents(
    docs: Sequence[CorpusDocument] = CORPUS, *, source: str = "compliance"
) -> list[SourceDocument]:
    """``docs`` as source documents with their ids and ``{"title", "source"}`` metadata.

    Examples
    --------
    >>> compliance_documents()[0]  # doctest: +ELLIPSIS
    SourceDocument(text='Paris is ...', id='paris', metadata={'title': 'Paris', 'source': ...})
    """
    return [
        SourceDocument(d.text, id=d.id, metadata={"title": d.title, "source": source}) for d in docs
    ]
