"""core.index.store.IndexStore on three graph backends: the networkx GraphStore, DictGraph
and FalkorDBGraph (on the real server of the ``falkordb_server`` fixture).

``DictGraph`` is a second, minimal implementation of the ``GraphBackend`` protocol written
from its documented semantics (plain dicts, JSON persistence); every IndexStore test runs on
all three, so the store relies on nothing but the protocol. The FalkorDB-only tests at the
end cover the pointer file, overwrite refusal, re-homing and a lost server.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from graphrag_integrations.core.graph.backends import is_in_process
from graphrag_integrations.core.graph.networkx_store import GraphStore
from graphrag_integrations.core.graph.protocol import GraphBackend, Removed
from graphrag_integrations.core.index import store as index_store
from graphrag_integrations.core.index import store_base
from graphrag_integrations.core.index.node_ids import node_id, node_key, node_kind
from graphrag_integrations.core.index.store import IndexStore
from graphrag_integrations.core.index.store_base import in_memory_vectors
from graphrag_integrations.core.persistence import Manifest, read_manifest
from graphrag_integrations.core.vector_store import InMemoryVectorIndex, VectorIndex
from graphrag_integrations.errors import IndexExistsError, IndexMismatchError, IndexNotFoundError


class DictGraph:
    """A GraphBackend on insertion-ordered dicts (no networkx)."""

    def __init__(self) -> None:
        self._nodes: dict[str, dict[str, Any]] = {}
        # u -> v -> key -> data ; v -> u -> key (in-edges) ; both in insertion order
        self._out: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
        self._in: dict[str, dict[str, dict[str, None]]] = {}

    def __len__(self) -> int:
        return len(self._nodes)

    def __contains__(self, node: object) -> bool:
        return node in self._nodes

    def add_node(self, id: str, type: str, provenance: Iterable[str] = (), **attrs: Any) -> None:
        if id in self._nodes:
            data = self._nodes[id]
            if data["type"] != type:
                raise ValueError(f"node {id!r} has type {data['type']!r}")
            data["provenance"] |= set(provenance)
            data.update(attrs)
            return
        self._nodes[id] = {"type": type, "provenance": set(provenance), **attrs}
        self._out[id] = {}
        self._in[id] = {}

    def add_edge(
        self,
        u: str,
        v: str,
        type: str,
        provenance: Iterable[str] = (),
        *,
        key: str | None = None,
        **attrs: Any,
    ) -> str:
        for node in (u, v):
            if node not in self._nodes:
                raise KeyError(node)
        k = type if key is None else key
        keys = self._out[u].setdefault(v, {})
        if k in keys:
            if keys[k]["type"] != type:
                raise ValueError(f"edge {(u, v, k)!r} has type {keys[k]['type']!r}")
            keys[k]["provenance"] |= set(provenance)
            keys[k].update(attrs)
        else:
            keys[k] = {"type": type, "provenance": set(provenance), **attrs}
            self._in[v].setdefault(u, {})[k] = None
        return k

    def nodes(self, type: str | None = None) -> list[str]:
        return [n for n, d in self._nodes.items() if type is None or d["type"] == type]

    def node(self, id: str) -> dict[str, Any]:
        data = self._nodes[id]
        return {**data, "provenance": set(data["provenance"])}

    def neighbors(
        self,
        id: str,
        edge_type: str | Iterable[str] | None = None,
        direction: str = "out",
        node_type: str | None = None,
    ) -> list[str]:
        if id not in self._nodes:
            raise KeyError(id)
        types = {edge_type} if isinstance(edge_type, str) else edge_type
        types = None if types is None else set(types)
        found: dict[str, None] = {}
        pairs: list[tuple[str, str, str]] = []
        if direction in ("out", "both"):
            pairs += [(v, id, v) for v in self._out[id]]
        if direction in ("in", "both"):
            pairs += [(id, u, u) for u in self._in[id]]
        for target, source, nbr in pairs:
            edges = self._out[source][target].values()
            typed = any(types is None or e["type"] in types for e in edges)
            if typed and (node_type is None or self._nodes[nbr]["type"] == node_type):
                found.setdefault(nbr, None)
        return list(found)

    def neighbors_many(
        self,
        ids: Iterable[str],
        edge_type: str | Iterable[str] | None = None,
        direction: str = "out",
        node_type: str | None = None,
    ) -> dict[str, list[str]]:
        return {i: self.neighbors(i, edge_type, direction, node_type) for i in dict.fromkeys(ids)}

    def nodes_data(self, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        return {i: self.node(i) for i in dict.fromkeys(ids)}

    def number_of_edges(self, type: str | None = None) -> int:
        return sum(
            1
            for targets in self._out.values()
            for keys in targets.values()
            for e in keys.values()
            if type is None or e["type"] == type
        )

    def _drop_edge(self, u: str, v: str, k: str) -> None:
        del self._out[u][v][k]
        del self._in[v][u][k]
        if not self._out[u][v]:
            del self._out[u][v]
            del self._in[v][u]

    def remove_edges(self, edges: Any) -> list[tuple[str, str, str]]:
        removed = []
        for u, v, k in edges:
            if k in self._out.get(u, {}).get(v, {}):
                self._drop_edge(u, v, k)
                removed.append((u, v, k))
        return removed

    def remove_provenance(self, doc_id: str) -> Removed:
        edges: list[tuple[str, str, str]] = []
        for u, targets in list(self._out.items()):
            for v, keys in list(targets.items()):
                for k, e in list(keys.items()):
                    if doc_id in e["provenance"]:
                        e["provenance"].discard(doc_id)
                        if not e["provenance"]:
                            self._drop_edge(u, v, k)
                            edges.append((u, v, k))
        nodes: list[str] = []
        for n, d in list(self._nodes.items()):
            if doc_id in d["provenance"]:
                d["provenance"].discard(doc_id)
                if not d["provenance"]:
                    for v, keys in list(self._out[n].items()):
                        for k in list(keys):
                            self._drop_edge(n, v, k)
                            edges.append((n, v, k))
                    for u, keys2 in list(self._in[n].items()):
                        for k in list(keys2):
                            self._drop_edge(u, n, k)
                            edges.append((u, n, k))
                    del self._nodes[n], self._out[n], self._in[n]
                    nodes.append(n)
        return Removed(nodes, edges)

    def save(self, path: str | Path) -> None:
        data = {
            "nodes": [
                [n, {**d, "provenance": sorted(d["provenance"])}] for n, d in self._nodes.items()
            ],
            "edges": [
                [u, v, k, {**e, "provenance": sorted(e["provenance"])}]
                for u, targets in self._out.items()
                for v, keys in targets.items()
                for k, e in keys.items()
            ],
        }
        Path(path).write_text(json.dumps(data), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> DictGraph:
        src = Path(path)
        if not src.is_file():
            raise IndexNotFoundError(f"no graph at {src}")
        data = json.loads(src.read_text(encoding="utf-8"))
        g = cls()
        for n, d in data["nodes"]:
            g.add_node(n, d.pop("type"), d.pop("provenance"), **d)
        for u, v, k, e in data["edges"]:
            g.add_edge(u, v, e.pop("type"), e.pop("provenance"), key=k, **e)
        return g


BACKENDS = [GraphStore, DictGraph]
LAYERS = {"chunk": "chunks", "entity": "entities"}


def doc_metadata(graph: GraphBackend, kind: str, key: str) -> Mapping[str, Any] | None:
    """Chunks carry their document id; entities (shared) carry nothing."""
    if kind == "chunk":
        return {"doc_id": graph.node(node_id(kind, key))["doc_id"]}
    return None


class Recording(InMemoryVectorIndex):
    """Counts queries and keeps the layer name its factory was asked for."""

    def __init__(self, layer: str, dimension: int, model_name: str) -> None:
        super().__init__(dimension, model_name)
        self.layer = layer
        self.queries = 0

    def query(self, embedding: Any, k: int, where: Any = None) -> list[tuple[str, float]]:
        self.queries += 1
        return super().query(embedding, k, where)


def recording(layer: str, dimension: int, model_name: str) -> VectorIndex:
    return Recording(layer, dimension, model_name)


def unit(*values: float) -> np.ndarray:
    v = np.array(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def toy(backend: type[GraphBackend], **kwargs: Any) -> IndexStore:
    """Two documents: d1 has chunk c1 mentioning paris and france, d2 has c2 mentioning
    france and rome (france is shared)."""
    store = IndexStore("toy", LAYERS, graph=backend, metadata=doc_metadata, **kwargs)
    with store.writing():
        for chunk, doc, names in (
            ("c1", "d1", ("paris", "france")),
            ("c2", "d2", ("france", "rome")),
        ):
            c = store.add_node("chunk", chunk, (doc,), text=f"text {chunk}", doc_id=doc)
            for name in names:
                e = store.add_node("entity", name, (doc,), name=name.title())
                store.add_edge(c, e, "mentions", (doc,))
        store.add_vectors("chunk", {"c1": unit(1, 0, 0), "c2": unit(0, 1, 0)})
        store.add_vectors(
            "entity",
            {"paris": unit(1, 1, 0), "france": unit(1, 1, 0), "rome": unit(0, 0, 1)},
        )
    return store


@pytest.fixture(
    params=[*BACKENDS, pytest.param("falkordb", marks=pytest.mark.falkordb_server)],
    ids=lambda b: getattr(b, "__name__", b),
)
def backend(request: pytest.FixtureRequest) -> Iterator[type[GraphBackend]]:
    if request.param != "falkordb":
        yield request.param
        return
    yield from _fresh_falkordb(request.getfixturevalue("falkordb_server"))


def _fresh_falkordb(server: Any) -> Iterator[type[GraphBackend]]:
    """A FalkorDBGraph class making a new graph on ``server`` per instance (all deleted
    afterwards)."""
    from graphrag_integrations.core.graph.falkordb_graph import FalkorDBGraph

    made: list[str] = []

    class FreshFalkorDBGraph(FalkorDBGraph):
        def __init__(self) -> None:
            made.append(server.url(f"t_{uuid.uuid4().hex[:12]}"))
            super().__init__(made[-1])

    yield FreshFalkorDBGraph
    for url in made:
        _drop_graph(url)


def _drop_graph(url: str) -> None:
    from graphrag_integrations.core.graph.falkordb_connection import connect, parse_falkordb_url

    where = parse_falkordb_url(url)
    client = connect(where)
    if where.graph in client.list_graphs():
        client.select_graph(where.graph).delete()


def test_dict_graph_follows_the_protocol() -> None:
    assert isinstance(DictGraph(), GraphBackend)
    assert isinstance(GraphStore(), GraphBackend)


def test_node_ids() -> None:
    assert node_id("entity", "a:b") == "entity:a:b"
    assert node_key("entity:a:b") == "a:b" and node_kind("entity:a:b") == "entity"
    with pytest.raises(ValueError):
        node_id("bad:kind", "x")


def test_nodes_edges_and_vectors(backend: type[GraphBackend]) -> None:
    store = toy(backend)
    assert isinstance(store.graph, backend)
    assert store.keys("entity") == ["paris", "france", "rome"]  # insertion order
    assert store.graph.neighbors(node_id("chunk", "c2"), "mentions") == [
        node_id("entity", "france"),
        node_id("entity", "rome"),
    ]
    assert store.graph.neighbors(node_id("entity", "france"), direction="in") == [
        node_id("chunk", "c1"),
        node_id("chunk", "c2"),
    ]
    assert store.graph.node(node_id("entity", "france"))["provenance"] == {"d1", "d2"}
    assert store.dimension == 3
    got = store.embeddings("entity", ["rome", "paris"])
    assert np.allclose(got, np.stack([unit(0, 0, 1), unit(1, 1, 0)]))
    assert store.embeddings("chunk", []).shape == (0, 3)
    chunks = store.vectors["chunks"]
    assert isinstance(chunks, InMemoryVectorIndex)
    assert chunks.get_metadata("c2") == {"doc_id": "d2"}


def test_bad_vectors_are_rejected(backend: type[GraphBackend]) -> None:
    store = toy(backend)
    with pytest.raises(KeyError, match="unknown entity"):
        store.add_vectors("entity", {"berlin": unit(1, 0, 0)})
    with pytest.raises(KeyError, match="no vector layer"):
        store.add_vectors("query", {"q": unit(1, 0, 0)})
    store.add_node("entity", "berlin", ("d3",))
    with pytest.raises(ValueError, match="dimension"):
        store.add_vectors("entity", {"berlin": np.ones(4)})
    with pytest.raises(ValueError, match="share a layer"):
        IndexStore("toy", {"a": "x", "b": "x"}, graph=backend)


def test_nearest_keeps_boundary_ties(backend: type[GraphBackend]) -> None:
    store = toy(backend)
    query = unit(1, 1, 0)
    hits = store.nearest("entity", query, 1)
    assert sorted(k for k, _ in hits) == ["france", "paris"]  # an exact tie at k = 1
    assert [k for k, _ in store.nearest("entity", unit(0, 0, 1), 1)] == ["rome"]
    assert store.nearest("entity", np.zeros(3, dtype=np.float32), 2) == []
    assert store.nearest("entity", query, 0) == []


def test_remove_document_reports_what_went(backend: type[GraphBackend]) -> None:
    store = toy(backend)
    before = store.version
    assert store.remove_document("d1") == {"chunk": ["c1"], "entity": ["paris"]}
    assert store.version > before
    assert store.keys("entity") == ["france", "rome"]  # shared entity kept, order kept
    assert store.graph.node(node_id("entity", "france"))["provenance"] == {"d2"}
    assert len(store.vectors["chunks"]) == 1 and len(store.vectors["entities"]) == 2
    assert store.graph.number_of_edges("mentions") == 2
    assert store.remove_document("nope") == {}
    assert store.remove_document("d2") == {"chunk": ["c2"], "entity": ["france", "rome"]}
    assert len(store.graph) == 0 and all(len(v) == 0 for v in store.vectors.values())


def test_persist_and_load_round_trip(backend: type[GraphBackend], tmp_path: Path) -> None:
    store = toy(backend)
    store.persist(tmp_path)
    loaded = IndexStore.load(
        tmp_path,
        model_name="toy",
        dimension=3,
        layers=LAYERS,
        graph=backend,
        metadata=doc_metadata,
    )
    assert isinstance(loaded.graph, backend)
    for kind in LAYERS:
        assert loaded.keys(kind) == store.keys(kind)
        assert np.array_equal(
            loaded.embeddings(kind, store.keys(kind)), store.embeddings(kind, store.keys(kind))
        )
    assert loaded.graph.node(node_id("chunk", "c1"))["text"] == "text c1"
    assert loaded.nearest("entity", unit(0, 0, 1), 1) == store.nearest("entity", unit(0, 0, 1), 1)


def test_persist_with_a_manifest_writes_the_whole_index_safely(
    backend: type[GraphBackend], tmp_path: Path
) -> None:
    store = toy(backend)
    target = tmp_path / "index"
    store.persist(target, Manifest(method="toy-method"))
    manifest = read_manifest(target)  # checksums verified
    assert manifest.method == "toy-method"
    graph_file = "graph.json" if is_in_process(backend) else "graph.pointer.json"
    assert graph_file in manifest.files and "vectors/chunks/vectors.npy" in manifest.files
    # a folder of documents is refused, and kept, unless overwrite=True
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "thesis.txt").write_text("mine")
    with pytest.raises(IndexExistsError, match="non-empty folder"):
        store.persist(docs, Manifest(method="toy-method"))
    assert sorted(p.name for p in docs.iterdir()) == ["thesis.txt"]
    store.persist(docs, Manifest(method="toy-method"), overwrite=True)
    assert (docs / "thesis.txt").read_text() == "mine"
    # another method's index is refused: the manifest's method is the writer's
    with pytest.raises(IndexExistsError, match="'toy-method' index"):
        store.persist(target, Manifest(method="other"))
    loaded = IndexStore.load(
        docs, model_name="toy", dimension=3, layers=LAYERS, graph=backend, metadata=doc_metadata
    )
    assert loaded.keys("entity") == store.keys("entity")


def test_load_reads_inside_reading_index(
    backend: type[GraphBackend], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    toy(backend).persist(tmp_path / "index", Manifest(method="toy-method"))
    (tmp_path / ".index.tmp-abcd1234").mkdir()  # left by a killed writer
    seen: list[Path] = []
    real = index_store.reading_index

    @contextmanager
    def spy(path: Path) -> Iterator[Path]:
        with real(path) as src:
            seen.append(Path(src))
            yield src

    monkeypatch.setattr(index_store, "reading_index", spy)
    IndexStore.load(tmp_path / "index", model_name="toy", dimension=3, layers=LAYERS, graph=backend)
    assert seen == [tmp_path / "index"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index"]  # stale sibling cleaned


def test_load_rehomes_vectors_with_their_metadata(
    backend: type[GraphBackend], tmp_path: Path
) -> None:
    toy(backend).persist(tmp_path)
    loaded = IndexStore.load(
        tmp_path,
        model_name="toy",
        dimension=3,
        layers=LAYERS,
        factory=recording,
        graph=backend,
        metadata=doc_metadata,
    )
    chunks = loaded.vectors["chunks"]
    assert isinstance(chunks, Recording) and chunks.layer == "chunks"
    assert chunks.get_metadata("c1") == {"doc_id": "d1"}
    loaded.nearest("chunk", unit(1, 0, 0), 1)
    assert chunks.queries == 1


def test_persist_copies_a_foreign_backend(backend: type[GraphBackend], tmp_path: Path) -> None:
    store = toy(backend, factory=lambda layer, d, m: _Wrapper(InMemoryVectorIndex(d, m)))
    assert not isinstance(store.vectors["chunks"], InMemoryVectorIndex)
    store.persist(tmp_path)
    stored = InMemoryVectorIndex.load(tmp_path / "vectors" / "chunks")
    assert stored.ids == ["c1", "c2"]
    assert stored.get_metadata("c2") == {"doc_id": "d2"}  # metadata re-derived from the graph


class _Wrapper:
    """A VectorIndex that is not an InMemoryVectorIndex (delegates everything)."""

    def __init__(self, inner: VectorIndex) -> None:
        self.inner = inner

    def add(self, *args: Any, **kwargs: Any) -> None:
        self.inner.add(*args, **kwargs)

    def delete(self, ids: Sequence[str]) -> None:
        self.inner.delete(ids)

    def query(self, *args: Any, **kwargs: Any) -> list[tuple[str, float]]:
        return self.inner.query(*args, **kwargs)

    def get_embeddings(self, ids: Sequence[str]) -> Any:
        return self.inner.get_embeddings(ids)

    def __len__(self) -> int:
        return len(self.inner)


def test_load_checks_graph_and_vectors_agree(backend: type[GraphBackend], tmp_path: Path) -> None:
    toy(backend).persist(tmp_path)
    vectors = InMemoryVectorIndex.load(tmp_path / "vectors" / "entities")
    vectors.delete(["rome"])
    vectors.persist(tmp_path / "vectors" / "entities")
    with pytest.raises(IndexMismatchError, match="do not match"):
        IndexStore.load(tmp_path, model_name="toy", dimension=3, layers=LAYERS, graph=backend)
    with pytest.raises(IndexMismatchError):
        IndexStore.load(tmp_path, model_name="other", dimension=3, layers=LAYERS, graph=backend)
    with pytest.raises(IndexNotFoundError):
        IndexStore.load(tmp_path / "none", model_name="toy", dimension=3, layers=LAYERS)


def test_derived_view_is_rebuilt_only_after_a_mutation(backend: type[GraphBackend]) -> None:
    store = toy(backend)
    calls: list[Any] = []

    def build(s: IndexStore, previous: list[str] | None) -> list[str]:
        calls.append(previous)
        return s.keys("entity")

    first = store.derived("names", build)
    assert store.derived("names", build) is first and len(calls) == 1
    store.remove_document("d1")
    second = store.derived("names", build)
    assert second == ["france", "rome"] and second is not first
    assert calls == [None, first]  # the previous view is handed to the rebuild
    store.add_node("entity", "berlin", ("d3",))
    assert store.derived("names", build) == ["france", "rome", "berlin"]
    assert store.derived("other", lambda s, p: len(s.graph)) == 4  # views are independent


def test_derived_view_waits_for_a_batch_and_builds_once(backend: type[GraphBackend]) -> None:
    store = IndexStore("toy", LAYERS, graph=backend)
    started, release = threading.Event(), threading.Event()
    builds: list[int] = []
    seen: list[list[str]] = []

    def build(s: IndexStore, previous: list[str] | None) -> list[str]:
        builds.append(s.version)
        return s.keys("entity")

    def writer() -> None:
        with store.writing():
            store.add_node("entity", "a", ("d",))
            started.set()
            release.wait(5)
            store.add_node("entity", "b", ("d",))

    def reader() -> None:
        seen.append(store.derived("names", build))

    w = threading.Thread(target=writer)
    w.start()
    assert started.wait(5)
    readers = [threading.Thread(target=reader) for _ in range(4)]
    for r in readers:
        r.start()
    time.sleep(0.2)  # the readers now wait on the lock in the middle of the batch
    release.set()
    for t in (w, *readers):
        t.join(5)
    assert seen == [["a", "b"]] * 4  # never half a batch
    assert len(builds) == 1  # one build for the version, shared by every reader


def test_default_factory_is_in_memory(backend: type[GraphBackend]) -> None:
    store = toy(backend)
    assert store.factory is in_memory_vectors
    assert all(isinstance(v, InMemoryVectorIndex) for v in store.vectors.values())


@pytest.mark.parametrize("backend", [GraphStore, DictGraph])
def test_remove_edges_whatever_provenance_and_readd_goes_last(
    backend: type[GraphBackend],
) -> None:
    store = IndexStore("toy", {}, graph=backend)
    a, b, c = (store.add_node("query", k, ("d1",)) for k in "abc")
    store.add_edge(a, b, "similar", ("d1",))
    store.add_edge(a, c, "similar", ("d1", "d2"))
    version = store.version
    removed = store.remove_edges([(a, b, "similar"), (a, c, "similar"), (b, a, "similar")])
    assert removed == [(a, b, "similar"), (a, c, "similar")]
    assert store.version > version
    assert store.graph.neighbors(a, "similar") == []
    assert store.graph.number_of_edges("similar") == 0
    store.add_edge(a, c, "similar", ("d1",))
    store.add_edge(a, b, "similar", ("d1",))
    assert store.graph.neighbors(a, "similar") == [c, b]
    assert len(store.graph) == 3


# -- FalkorDB: pointer file, overwrite refusal, re-homing, a lost server -------------------
def _load(directory: Path, graph: type[GraphBackend] | None = None) -> IndexStore:
    return IndexStore.load(
        directory, model_name="toy", dimension=3, layers=LAYERS, graph=graph, metadata=doc_metadata
    )


@pytest.mark.falkordb_server
def test_falkordb_persist_writes_a_pointer_and_reloads(falkordb_url: str, tmp_path: Path) -> None:
    from graphrag_integrations.core.graph.falkordb_graph import FalkorDBGraph

    secret = falkordb_url.replace("falkordb://", "falkordb://me:s3cret@")
    store = toy(FalkorDBGraph.at(falkordb_url))
    other_client = FalkorDBGraph.open(falkordb_url)
    assert len(other_client) == 5  # writing() flushed the batch when it ended
    store.persist(tmp_path / "index", Manifest(method="toy-method"))
    files = sorted(p.name for p in (tmp_path / "index").iterdir())
    assert "graph.pointer.json" in files and "graph.json" not in files
    assert all("s3cret" not in p.read_text() for p in (tmp_path / "index").glob("*.json"))
    assert "s3cret" not in repr(FalkorDBGraph.at(secret))
    # any graph class given: the pointer wins, and a new client reads the same graph
    loaded = _load(tmp_path / "index")
    assert isinstance(loaded.graph, FalkorDBGraph)
    assert loaded.keys("entity") == ["paris", "france", "rome"]
    assert loaded.graph.neighbors(node_id("entity", "france"), direction="in") == [
        node_id("chunk", "c1"),
        node_id("chunk", "c2"),
    ]
    assert loaded.vectors["chunks"].get_metadata("c2") == {"doc_id": "d2"}  # type: ignore[attr-defined]
    assert loaded.remove_document("d1") == {"chunk": ["c1"], "entity": ["paris"]}
    assert store.graph.nodes("entity") == [node_id("entity", k) for k in ("france", "rome")]


@pytest.mark.falkordb_server
def test_falkordb_new_index_refuses_a_graph_with_data(falkordb_url: str) -> None:
    from graphrag_integrations.core.graph.falkordb_graph import FalkorDBGraph

    toy(FalkorDBGraph.at(falkordb_url))
    with pytest.raises(IndexExistsError, match="holds 5 nodes; pass overwrite=True") as error:
        toy(FalkorDBGraph.at(falkordb_url))
    assert "\n" not in str(error.value)
    assert len(FalkorDBGraph.open(falkordb_url)) == 5  # nothing lost
    replaced = IndexStore("toy", LAYERS, graph=FalkorDBGraph.at(falkordb_url, overwrite=True))
    assert len(replaced.graph) == 0


@pytest.mark.falkordb_server
def test_falkordb_load_rehomes_a_networkx_saved_graph(falkordb_url: str, tmp_path: Path) -> None:
    from graphrag_integrations.core.graph.falkordb_graph import FalkorDBGraph

    saved = toy(GraphStore)
    saved.persist(tmp_path / "nx")
    before = (tmp_path / "nx" / "graph.json").read_bytes()
    rehomed = _load(tmp_path / "nx", FalkorDBGraph.at(falkordb_url))
    assert isinstance(rehomed.graph, FalkorDBGraph)
    assert rehomed.graph.to_graph_store() == saved.graph
    assert (tmp_path / "nx" / "graph.json").read_bytes() == before  # the saved index is kept
    rehomed.persist(tmp_path / "db")
    assert (tmp_path / "db" / "graph.pointer.json").is_file()
    assert not (tmp_path / "db" / "graph.json").exists()
    # the graph is now taken: re-homing again there is refused
    with pytest.raises(IndexExistsError):
        _load(tmp_path / "nx", FalkorDBGraph.at(falkordb_url))


@pytest.mark.falkordb_server
def test_falkordb_lost_server_is_a_one_line_error(tmp_path: Path) -> None:
    from graphrag_integrations.core.graph.falkordb_graph import FalkorDBGraph
    from graphrag_integrations.testing.falkordb_server import FalkorDBServer

    with FalkorDBServer() as server:
        store = toy(FalkorDBGraph.at(server.url("doomed")))
        store.persist(tmp_path)
    with pytest.raises(ConnectionError, match=r"FalkorDB at 127\.0\.0\.1:\d+") as error:
        store.keys("entity")
    assert "\n" not in str(error.value)
    with pytest.raises(ConnectionError, match="does not answer") as error:
        _load(tmp_path)
    assert "\n" not in str(error.value)


def test_a_layer_is_copied_between_stores_in_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_base, "COPY_BATCH", 2)
    keys = list("abcde")
    store = IndexStore("toy", {"entity": "entities"})
    for key in keys:
        store.add_node("entity", key, ("d",))
    vectors = np.eye(5, dtype=np.float32)
    reads: list[int] = []

    class CountingIndex(InMemoryVectorIndex):
        def get_embeddings(self, ids: Sequence[str]) -> Any:
            reads.append(len(ids))
            return super().get_embeddings(ids)

    source = CountingIndex(5, "toy")
    source.add(keys, vectors)
    target = InMemoryVectorIndex(5, "toy")
    store._copy("entity", source, target)
    assert reads == [2, 2, 1]
    assert np.array_equal(target.get_embeddings(keys), vectors)
