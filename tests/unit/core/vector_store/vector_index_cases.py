"""The behavioural cases every vector index passes (:class:`VectorIndexCases`, and
:class:`ReloadCase` for a backend that reopens its index), run on the built-in backends
(``test_vector_store.py``), the store adapters in this process (``test_store_adapters.py``)
and on real servers (``tests/integration/test_store_vectors.py``): a test class there
inherits them and its module gives the ``backend`` fixture (a :class:`Backend`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np
import pytest

from graphrag_integrations.core.retrieval.filters import parse_filter
from graphrag_integrations.core.vector_store import VectorIndex

DIM = 8


class Backend(Protocol):
    """Makes an empty index of one backend, and reopens one from its storage."""

    def make(self, dimension: int = DIM, model: str = "toy-model") -> Any: ...

    def reopen(self, index: Any, dimension: int = DIM, model: str = "toy-model") -> Any: ...


def vectors(n: int, seed: int = 0, dim: int = DIM) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, dim)).astype(np.float32)


def unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def exact(matrix: np.ndarray, ids: list[str], q: np.ndarray, k: int) -> list[str]:
    scores = unit(matrix) @ unit(q)
    order = sorted(range(len(ids)), key=lambda i: -scores[i])
    return [ids[i] for i in order[:k]]


RICH_FILTERS: list[dict[str, Any]] = [
    {"year": {"$gt": 2000}},
    {"year": {"$gte": 2001, "$lt": 2002}},
    {"lang": {"$ne": "en"}},  # records without "lang" do not match (Chroma's $ne would)
    {"lang": {"$nin": ["fr"]}},
    {"$or": [{"lang": "en"}, {"flag": True}]},
    {"$and": [{"year": {"$lte": 2001}}, {"$or": [{"lang": "fr"}, {"year": 2000}]}]},
    {"title": {"$gt": "m"}},  # string order: Chroma cannot, evaluated client-side
    {"title": {"$contains": "ee"}},
    {"year": {"$in": [2000, 2002.0]}},  # mixed types: client-side on Chroma
    {"nothing": 1},
]


#: Calls an index refuses (nothing added), the error and its message.
BAD_INPUTS: list[tuple[Callable[[Any], object], type[Exception], str]] = [
    (lambda ix: ix.add(["a"], np.ones((1, DIM + 1))), ValueError, "dimension mismatch"),
    (lambda ix: ix.add(["a", "b"], np.ones((1, DIM))), ValueError, "expected 2 vectors"),
    (lambda ix: ix.add(["a", "a"], np.ones((2, DIM))), ValueError, "duplicate ids"),
    (lambda ix: ix.add([""], np.ones((1, DIM))), ValueError, "non-empty string"),
    (lambda ix: ix.add("ab", np.ones((2, DIM))), TypeError, "single string"),
    (lambda ix: ix.add(["a"], np.zeros((1, DIM))), ValueError, "zero vectors"),
    (lambda ix: ix.add(["a"], np.full((1, DIM), np.nan)), ValueError, "NaN"),
    (
        lambda ix: ix.add(["a"], np.ones((1, DIM)), metadatas=[{"x": [1]}]),
        ValueError,
        "metadata value 'x'",
    ),
    (
        lambda ix: ix.add(["a"], np.ones((1, DIM)), metadatas=[{}, {}]),
        ValueError,
        "expected 1 metadatas",
    ),
    (
        lambda ix: ix.add(["a"], np.ones((1, DIM)), documents=[3]),
        ValueError,
        "documents must be strings",
    ),
    (lambda ix: ix.query(np.ones(DIM + 2), k=1), ValueError, "dimension mismatch"),
    (lambda ix: ix.query(np.ones((2, DIM)), k=1), ValueError, "one vector"),
    (lambda ix: ix.query(np.ones(DIM), k=-1), ValueError, "k must be >= 0"),
    (lambda ix: ix.query(np.ones(DIM), k=1.5), TypeError, "k must be an integer"),
    (lambda ix: ix.query(np.ones(DIM), k=1, where={"a": {"$gt": [1]}}), ValueError, r"\(gt\)"),
    (lambda ix: ix.query(np.ones(DIM), k=1, where={"a": {"$like": 1}}), ValueError, r"\$like"),
    (lambda ix: ix.query(np.ones(DIM), k=1, where={"$or": []}), ValueError, "non-empty list"),
    (lambda ix: ix.query(np.ones(DIM), k=1, where={"a": {"$in": []}}), ValueError, "non-empty"),
]


class VectorIndexCases:
    """What every vector index does: the protocol, exact cosine ranking, replace, delete,
    ``where`` filters (exact best matches among the matching records), one-line input errors."""

    def test_satisfies_protocol(self, backend: Backend) -> None:
        index = backend.make()
        assert isinstance(index, VectorIndex)
        assert index.dimension == DIM
        assert index.model_name == "toy-model"
        assert len(index) == 0
        assert index.query(vectors(1)[0], k=3) == []

    def test_add_and_query_exact_cosine(self, backend: Backend) -> None:
        index = backend.make()
        vecs = vectors(30)
        ids = [f"id{i}" for i in range(30)]
        index.add(ids, vecs)
        assert len(index) == 30
        q = vectors(1, seed=7)[0]
        hits = index.query(q, k=5)
        assert [h[0] for h in hits] == exact(vecs, ids, q, 5)
        expected = unit(vecs) @ unit(q)
        for id_, score in hits:
            assert score == pytest.approx(float(expected[ids.index(id_)]), abs=1e-5)
        assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
        # a stored vector is its own best match with similarity 1
        top_id, top_score = index.query(vecs[3] * 5.0, k=1)[0]
        assert top_id == "id3"
        assert top_score == pytest.approx(1.0, abs=1e-5)

    def test_k_larger_than_index_and_zero(self, backend: Backend) -> None:
        index = backend.make()
        index.add(["a", "b"], vectors(2))
        assert len(index.query(vectors(1, 3)[0], k=10)) == 2
        assert index.query(vectors(1, 3)[0], k=0) == []

    def test_get_embeddings_in_given_order(self, backend: Backend) -> None:
        index = backend.make()
        vecs = vectors(5)
        ids = list("abcde")
        index.add(ids, vecs)
        got = index.get_embeddings(["d", "a", "d"])
        assert got.dtype == np.float32
        assert got.shape == (3, DIM)
        np.testing.assert_allclose(got, unit(vecs[[3, 0, 3]]), atol=1e-6)
        assert index.get_embeddings([]).shape == (0, DIM)
        with pytest.raises(KeyError, match="zz"):
            index.get_embeddings(["a", "zz"])

    def test_add_replaces_existing_id(self, backend: Backend) -> None:
        index = backend.make()
        vecs = vectors(3)
        index.add(
            ["a", "b", "c"],
            vecs,
            metadatas=[{"g": 1}, {"g": 1}, {"g": 2}],
            documents=["A", "B", "C"],
        )
        new = vectors(1, seed=99)
        index.add(["b"], new)
        assert len(index) == 3
        np.testing.assert_allclose(index.get_embeddings(["b"]), unit(new), atol=1e-6)
        # the whole record is replaced: no stale metadata or document
        assert index.get_metadata("b") == {}
        assert index.get_document("b") is None
        assert index.get_document("a") == "A"
        assert [i for i, _ in index.query(new[0], k=3, where={"g": 1})] == ["a"]

    def test_delete(self, backend: Backend) -> None:
        index = backend.make()
        vecs = vectors(6)
        ids = [f"p{i}" for i in range(6)]
        index.add(ids, vecs)
        index.delete(["p1", "p4", "not-there"])
        assert len(index) == 4
        got = {i for i, _ in index.query(vecs[1], k=10)}
        assert got == {"p0", "p2", "p3", "p5"}
        with pytest.raises(KeyError):
            index.get_embeddings(["p1"])
        # survivors keep their vectors after the compaction
        np.testing.assert_allclose(
            index.get_embeddings(["p5", "p0"]), unit(vecs[[5, 0]]), atol=1e-6
        )
        # re-adding a deleted id works
        index.add(["p1"], vecs[1:2])
        assert index.query(vecs[1], k=1)[0][0] == "p1"
        index.delete([])
        assert len(index) == 5

    def test_where_filters(self, backend: Backend) -> None:
        index = backend.make()
        vecs = vectors(12)
        ids = [f"x{i}" for i in range(12)]
        metas: list[dict[str, Any] | None] = [
            {"lang": "en" if i % 2 else "fr", "year": 2000 + i % 3, "flag": i < 6}
            for i in range(11)
        ]
        metas.append(None)  # a record without metadata never matches a filter
        index.add(ids, vecs, metadatas=metas)
        q = vectors(1, seed=5)[0]

        def ids_for(where: dict[str, Any]) -> set[str]:
            return {i for i, _ in index.query(q, k=20, where=where)}

        assert ids_for({"lang": "en"}) == {f"x{i}" for i in range(11) if i % 2}
        assert ids_for({"lang": {"$eq": "fr"}}) == {f"x{i}" for i in range(11) if i % 2 == 0}
        assert ids_for({"year": {"$in": [2000, 2002]}}) == {
            f"x{i}" for i in range(11) if i % 3 in (0, 2)
        }
        assert ids_for({"lang": "en", "year": 2001}) == {
            f"x{i}" for i in range(11) if i % 2 and i % 3 == 1
        }
        assert ids_for({"flag": True}) == {f"x{i}" for i in range(6)}
        assert ids_for({"lang": "de"}) == set()
        # filtered results are still the exact best among the matching records
        en = [f"x{i}" for i in range(11) if i % 2]
        hits = index.query(q, k=2, where={"lang": "en"})
        assert [h[0] for h in hits] == exact(vecs[[int(i[1:]) for i in en]], en, q, 2)

    @pytest.mark.parametrize("where", RICH_FILTERS, ids=[json.dumps(w) for w in RICH_FILTERS])
    def test_rich_filters_equal_the_brute_force_top_k(
        self, backend: Backend, where: dict[str, Any]
    ) -> None:
        index = backend.make()
        vecs = vectors(14)
        ids = [f"w{i}" for i in range(14)]
        metas: list[dict[str, Any] | None] = [
            {"year": 2000 + i % 3, "flag": i % 4 == 0, "title": ["apple", "melon", "peer"][i % 3]}
            | ({"lang": "en" if i % 2 else "fr"} if i < 10 else {})
            for i in range(13)
        ]
        metas.append(None)
        index.add(ids, vecs, metadatas=metas)
        q = vectors(1, seed=9)[0]
        flt = parse_filter(where)
        assert flt is not None
        keep = [i for i, m in enumerate(metas) if flt.matches(m or {})]
        expected = exact(vecs[keep], [ids[i] for i in keep], q, 4) if keep else []
        assert [i for i, _ in index.query(q, k=4, where=where)] == expected

    @pytest.mark.parametrize(("call", "error", "message"), BAD_INPUTS)
    def test_bad_input(
        self, backend: Backend, call: Callable[[Any], object], error: type[Exception], message: str
    ) -> None:
        index = backend.make()
        with pytest.raises(error, match=message):
            call(index)
        assert len(index) == 0

    def test_bool_is_not_int_in_filters(self, backend: Backend) -> None:
        index = backend.make()
        index.add(["t", "one"], vectors(2), metadatas=[{"v": True}, {"v": 1}])
        q = vectors(1, 4)[0]
        assert [i for i, _ in index.query(q, 5, where={"v": True})] == ["t"]
        assert [i for i, _ in index.query(q, 5, where={"v": 1})] == ["one"]


class ReloadCase:
    """A reopened index answers as the one that was stored."""

    def test_reload(self, backend: Backend) -> None:
        index = backend.make()
        vecs = vectors(10)
        ids = [f"r{i}" for i in range(10)]
        index.add(ids, vecs, metadatas=[{"even": i % 2 == 0} for i in range(10)], documents=ids)
        index.delete(["r0"])
        q = vectors(1, seed=11)[0]
        before = index.query(q, k=4, where={"even": True})
        reopened = backend.reopen(index)
        assert len(reopened) == 9
        after = reopened.query(q, k=4, where={"even": True})
        assert [i for i, _ in after] == [i for i, _ in before]
        assert [s for _, s in after] == pytest.approx([s for _, s in before], abs=1e-6)
        np.testing.assert_allclose(reopened.get_embeddings(["r3"]), unit(vecs[[3]]), atol=1e-6)
        assert reopened.get_document("r3") == "r3"
        assert reopened.get_metadata("r2") == {"even": True}
