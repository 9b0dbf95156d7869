"""Clue-Index under concurrent mutation (issue 12): a query never sees half an insert."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from graphrag_integrations.core.encoders.embeddings import FloatMatrix
from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.testing import FakeEmbedder, compliance_documents
from graphrag_integrations.testing.compliance import EXTRA, EXTRA_QUERY, QUERIES

#: How long the paused thread waits for the other one (which must be held back by the lock).
PAUSE = 0.5


class GateEmbedder(FakeEmbedder):
    """A FakeEmbedder that pauses the first ``embed`` call made by :attr:`thread`.

    The pause starts after the caller's index work began (a query took its graph snapshot,
    an insert decided what is new) and lasts until :attr:`resume` is set (at most 10 s).
    """

    def __init__(self) -> None:
        super().__init__()
        self.thread: threading.Thread | None = None
        self.paused = threading.Event()
        self.resume = threading.Event()

    def embed(self, texts: Sequence[str], *, show_progress: bool = False) -> FloatMatrix:
        if self.thread is not None and threading.current_thread() is self.thread:
            self.thread = None
            self.paused.set()
            self.resume.wait(10)
        return super().embed(texts, show_progress=show_progress)


def run(target: Callable[[], Any], out: dict[str, Any], key: str) -> threading.Thread:
    def body() -> None:
        try:
            out[key] = target()
        except Exception as error:  # recorded: the test asserts there is none
            out[key] = error

    return threading.Thread(target=body, name=key)


def paused_race(
    index: ClueIndex, first: Callable[[], Any], second: Callable[[], Any]
) -> tuple[dict[str, Any], bool]:
    """Run ``first`` until it pauses inside the index, then ``second`` meanwhile.

    Returns both outcomes and whether ``second`` completed while ``first`` was paused (what
    the index lock must prevent).
    """
    gate = index.embedder
    assert isinstance(gate, GateEmbedder)
    out: dict[str, Any] = {}
    a, b = run(first, out, "first"), run(second, out, "second")
    gate.thread = a
    a.start()
    assert gate.paused.wait(10), "the first call never reached the embedder"
    b.start()
    b.join(PAUSE)
    overlapped = not b.is_alive()
    gate.resume.set()
    a.join(30)
    b.join(30)
    assert not a.is_alive() and not b.is_alive(), "deadlock"
    return out, overlapped


def build() -> ClueIndex:
    return ClueIndex.from_documents(compliance_documents(), embedding=GateEmbedder())


def ranking(hits: Sequence[Any]) -> list[tuple[str, float]]:
    return [(h.id, round(h.score, 6)) for h in hits]


@pytest.mark.parametrize("via", ["index", "qiter"])
def test_a_query_sees_the_index_before_or_after_an_insert_never_half(via: str) -> None:
    index = build()
    retriever: Any = index if via == "index" else index.as_retriever(k=5)
    before = ranking(retriever.retrieve(EXTRA_QUERY.query, k=3))
    out, overlapped = paused_race(
        index,
        lambda: ranking(retriever.retrieve(EXTRA_QUERY.query, k=3)),
        lambda: index.insert(compliance_documents([EXTRA])),
    )
    assert not isinstance(out["first"], Exception), out["first"]
    assert not isinstance(out["second"], Exception), out["second"]
    assert not overlapped, "the insert completed in the middle of a query"
    assert out["first"] == before
    assert out["second"] == [EXTRA.id]
    assert index.retrieve(EXTRA_QUERY.query, k=1)[0].doc_id == EXTRA.id


def test_a_query_sees_the_index_before_or_after_a_delete() -> None:
    index = build()
    target = QUERIES[0]
    before = ranking(index.retrieve(target.query, k=3))
    out, overlapped = paused_race(
        index,
        lambda: ranking(index.retrieve(target.query, k=3)),
        lambda: index.delete(target.doc_id),
    )
    assert not overlapped
    assert out["first"] == before
    assert out["second"] is True
    assert target.doc_id not in {h.doc_id for h in index.retrieve(target.query, k=3)}


def test_two_inserts_of_the_same_document_serialise_and_add_it_once() -> None:
    index = build()
    docs = compliance_documents([EXTRA])
    out, overlapped = paused_race(index, lambda: index.insert(docs), lambda: index.insert(docs))
    assert not overlapped, "the second insert ran inside the first one"
    assert not isinstance(out["first"], Exception), out["first"]
    assert not isinstance(out["second"], Exception), out["second"]
    assert (out["first"], out["second"]) == ([EXTRA.id], [])
    assert [p.doc_id for p in index.passages].count(EXTRA.id) == 1
    fresh = ClueIndex.from_documents(compliance_documents(), embedding=FakeEmbedder())
    fresh.insert(compliance_documents([EXTRA]))
    for probe in (*QUERIES, EXTRA_QUERY):
        assert ranking(index.retrieve(probe.query, k=3)) == ranking(
            fresh.retrieve(probe.query, k=3)
        )
