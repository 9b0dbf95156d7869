"""Compliance cases of concurrency (:mod:`~graphrag_integrations.core.index.locking`): the
index's lock, queries during mutations, concurrent inserts, ``ainsert`` / ``adelete``."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import Counter
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from graphrag_integrations.core.index.base import BaseIndex
from graphrag_integrations.core.index.locking import is_guarded
from graphrag_integrations.core.text.documents import SourceDocument
from graphrag_integrations.testing.compliance.base import ComplianceBase, Ranking, ranking
from graphrag_integrations.testing.compliance.corpus import (
    CONCURRENT_EXTRAS,
    CORPUS,
    EXTRA,
    EXTRA_QUERY,
    QUERIES,
    CorpusDocument,
    Probe,
    compliance_documents,
)

#: The mutations a writer thread applies while readers query (``delete`` of a corpus
#: document, re-insert, inserts and deletes of extra documents).
MUTATIONS: tuple[tuple[str, CorpusDocument], ...] = (
    ("insert", EXTRA),
    ("delete", CORPUS[5]),
    ("insert", CONCURRENT_EXTRAS[0]),
    ("delete", EXTRA),
    ("insert", CORPUS[5]),
    ("delete", CONCURRENT_EXTRAS[0]),
)
#: Probes of the concurrency cases (their answers change with :data:`MUTATIONS`).
CONCURRENT_QUERIES: tuple[Probe, ...] = (
    *QUERIES,
    EXTRA_QUERY,
    Probe("Which long river flows north through Egypt?", "nile"),
)
#: Upper bound (seconds) of every wait of the concurrency cases: a deadlock fails, not hangs.
CONCURRENCY_TIMEOUT = 120.0


def _mutate(index: BaseIndex, action: str, doc: CorpusDocument) -> None:
    """Apply one of :data:`MUTATIONS` (it must change the index)."""
    if action == "insert":
        assert index.insert(compliance_documents([doc])) == [doc.id], (action, doc.id)
    else:
        assert index.delete(doc.id) is True, (action, doc.id)


@contextlib.asynccontextmanager
async def loop_ticks() -> AsyncIterator[Callable[[], int]]:
    """Within the block, count the 10 ms sleeps the running event loop gets through:
    ``ticks()`` reads the count (a call that blocks the loop's thread adds none)."""
    count = [0]

    async def tick() -> None:
        while True:
            await asyncio.sleep(0.01)
            count[0] += 1

    task = asyncio.create_task(tick())
    try:
        yield lambda: count[0]
    finally:
        task.cancel()


class ConcurrencyCases(ComplianceBase):
    """Mutations hold the write lock and queries the read lock; readers see whole mutations;
    concurrent inserts land once; ``ainsert`` / ``adelete`` leave the event loop running."""

    def test_mutations_and_queries_hold_the_index_lock(self, index: BaseIndex) -> None:
        cls = type(index)
        for names, role in (
            ({*BaseIndex.write_methods, *cls.write_methods}, "write"),
            ({*BaseIndex.read_methods, *cls.read_methods}, "read"),
        ):
            for name in sorted(names):
                if callable(getattr(cls, name, None)):
                    assert is_guarded(getattr(cls, name)) == role, (
                        f"{cls.__name__}.{name} does not hold the index's {role} lock: does a "
                        "class override __init_subclass__ without calling super()?"
                    )

    def test_queries_during_inserts_and_deletes_see_whole_mutations(
        self, index: BaseIndex, documents: list[SourceDocument]
    ) -> None:
        k = 3
        replay = self._build(documents, self.make_embedder())
        states = [[ranking(replay.retrieve(p.query, k=k)) for p in CONCURRENT_QUERIES]]
        for action, doc in MUTATIONS:
            _mutate(replay, action, doc)
            states.append([ranking(replay.retrieve(p.query, k=k)) for p in CONCURRENT_QUERIES])

        seen: list[tuple[int, Ranking]] = []
        errors: list[BaseException] = []
        progress = threading.Condition()
        writing = threading.Event()
        writing.set()

        def query(offset: int) -> None:
            n = offset
            try:
                while writing.is_set() or n < offset + len(CONCURRENT_QUERIES):
                    i = n % len(CONCURRENT_QUERIES)
                    seen.append((i, ranking(index.retrieve(CONCURRENT_QUERIES[i].query, k=k))))
                    n += 1
                    with progress:
                        progress.notify_all()
            except BaseException as error:  # reported below
                errors.append(error)

        def write() -> None:
            try:
                for step, (action, doc) in enumerate(MUTATIONS, start=1):
                    with progress:  # let the readers query the state before each mutation
                        progress.wait_for(
                            lambda s=step: len(seen) >= 3 * s or bool(errors),  # type: ignore[misc]
                            CONCURRENCY_TIMEOUT,
                        )
                    _mutate(index, action, doc)
            except BaseException as error:
                errors.append(error)
            finally:
                writing.clear()

        threads = [threading.Thread(target=query, args=(n,)) for n in range(2)]
        threads.append(threading.Thread(target=write))
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(CONCURRENCY_TIMEOUT)
            assert not thread.is_alive(), "deadlock: a thread did not finish"
        assert not errors, f"{len(errors)} error(s) while querying and mutating: {errors[0]!r}"
        assert len(seen) >= 3 * len(MUTATIONS)
        for i, got in seen:
            assert any(self._same_ranking(got, state[i]) for state in states), (
                f"{CONCURRENT_QUERIES[i].query!r} -> {got} is no state of a sequential replay"
            )
        final = [ranking(index.retrieve(p.query, k=k)) for p in CONCURRENT_QUERIES]
        assert all(self._same_ranking(g, e) for g, e in zip(final, states[-1], strict=True))

    def test_concurrent_inserts_land_exactly_once(self, index: BaseIndex) -> None:
        jobs = [[d] for d in CONCURRENT_EXTRAS] + [[EXTRA], [EXTRA]]  # one document twice
        start = threading.Barrier(len(jobs), timeout=CONCURRENCY_TIMEOUT)
        added: list[list[str] | BaseException] = [[] for _ in jobs]

        def insert(n: int) -> None:
            try:
                start.wait()
                added[n] = index.insert(compliance_documents(jobs[n]))
            except BaseException as error:
                added[n] = error

        threads = [threading.Thread(target=insert, args=(n,)) for n in range(len(jobs))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(CONCURRENCY_TIMEOUT)
            assert not thread.is_alive(), "deadlock: an insert did not finish"
        failed = [a for a in added if isinstance(a, BaseException)]
        assert not failed, f"concurrent inserts raised: {failed[0]!r}"
        assert added[: len(CONCURRENT_EXTRAS)] == [[d.id] for d in CONCURRENT_EXTRAS]
        twice = sorted(tuple(a) for a in added[len(CONCURRENT_EXTRAS) :] if isinstance(a, list))
        assert twice == [(), (EXTRA.id,)], f"one document inserted by two threads at once: {twice}"
        inserted = [*CORPUS, *CONCURRENT_EXTRAS, EXTRA]
        sequential = self._build(compliance_documents(inserted), self.make_embedder())
        hits = index.retrieve(QUERIES[0].query, k=len(inserted))
        expected = sequential.retrieve(QUERIES[0].query, k=len(inserted))
        assert Counter(h.doc_id for h in hits) == Counter(h.doc_id for h in expected)
        assert sorted(h.id for h in hits) == sorted(h.id for h in expected)
        self._assert_finds(index, EXTRA_QUERY)

    @pytest.mark.asyncio
    async def test_ainsert_and_adelete_do_not_block_the_event_loop(self, index: BaseIndex) -> None:
        before = self._answers(index)
        held = 0.3  # another thread holds a query lock that long: the mutation must wait

        def hold_read_lock(entered: threading.Event) -> None:
            with index.rwlock.read():
                entered.set()
                threading.Event().wait(held)

        async def while_a_query_runs(mutation: Any, ticks: Callable[[], int]) -> tuple[Any, int]:
            entered = threading.Event()
            holder = threading.Thread(target=hold_read_lock, args=(entered,))
            holder.start()
            entered.wait(CONCURRENCY_TIMEOUT)
            start = ticks()
            result = await mutation
            holder.join(CONCURRENCY_TIMEOUT)
            return result, ticks() - start

        async with loop_ticks() as ticks:
            added, ticked_insert = await while_a_query_runs(
                index.ainsert(compliance_documents([EXTRA])), ticks
            )
            self._assert_finds(index, EXTRA_QUERY)
            removed, ticked_delete = await while_a_query_runs(index.adelete(EXTRA.id), ticks)
            assert await index.adelete(EXTRA.id) is False
        assert added == [EXTRA.id]
        assert removed is True
        self._assert_same_answers(self._answers(index), before)
        # ~30 ticks while the lock is held; a mutation run in the loop's thread gives none
        assert ticked_insert >= 5, f"the event loop stalled during ainsert ({ticked_insert})"
        assert ticked_delete >= 5, f"the event loop stalled during adelete ({ticked_delete})"

    def _same_ranking(self, got: Ranking, expected: Ranking) -> bool:
        return [i for i, _ in got] == [i for i, _ in expected] and all(
            abs(a - b) <= self.score_tolerance for (_, a), (_, b) in zip(got, expected, strict=True)
        )
