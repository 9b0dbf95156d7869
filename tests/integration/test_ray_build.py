"""Builds on a real local Ray (started once for the session, ``num_cpus=2``): the Ray build
gives the single-process index, survives a killed worker, resumes after an interrupted driver
from its checkpoint, and shows its progress."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from graphrag_integrations.baselines.dense import DenseRetriever
from graphrag_integrations.baselines.hybrid import HybridRetriever
from graphrag_integrations.core.index.checkpoint import PreparedBatches, read_checkpoint
from graphrag_integrations.core.index.executors import RayExecutor
from graphrag_integrations.core.types import Passage
from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.methods.qcg.index import QueryCentricGraphIndex
from graphrag_integrations.methods.reg.index import RefinedSubgraphRetriever
from graphrag_integrations.testing.fake_embedder import FakeEmbedder
from tests.unit.core import test_executors
from tests.unit.core.test_executors import DOCS, build_options, same_index

ray = pytest.importorskip("ray")
# the helpers below travel to the workers by value (the test module is not importable there)
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
ray.cloudpickle.register_pickle_by_value(test_executors)  # its fake Doc2Query LLM

CORPUS = DOCS + [d.replace("capital", "largest city") for d in DOCS]


@pytest.fixture(scope="session")
def local_ray() -> Iterator[None]:
    """A local Ray with two CPUs for the session (the executors join it, never stop it)."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


@dataclass
class KillOnce:
    """A preparer whose first batch (over all workers) SIGKILLs its own worker process."""

    inner: Any
    marker: str

    def __call__(self, passages: Sequence[Passage]) -> Any:
        try:
            fd = os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return self.inner(passages)
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        os.kill(os.getpid(), signal.SIGKILL)
        raise AssertionError("unreachable")


@pytest.mark.usefixtures("local_ray")
def test_ray_clue_build_equals_single_process_and_shows_progress(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    local = ClueIndex.from_documents(CORPUS, embedding=FakeEmbedder(), chunking=False)
    executor = RayExecutor(num_workers=2, batch_size=3)
    built = ClueIndex.from_documents(
        CORPUS, embedding=FakeEmbedder(), chunking=False, show_progress=True, executor=executor
    )
    assert "Preparing clue (ray, 2 workers): 10/10 passages (100%)" in capsys.readouterr().err
    assert sum(executor.worker_batches.values()) == 4 and len(executor.worker_batches) == 2
    assert built.graph_store == local.graph_store
    assert same_index(local, built, tmp_path)
    q = "largest city of Spain"
    assert [r.passage.id for r in built.retrieve(q, 4)] == [
        r.passage.id for r in local.retrieve(q, 4)
    ]


@pytest.mark.usefixtures("local_ray")
@pytest.mark.parametrize(
    "cls", [QueryCentricGraphIndex, DenseRetriever, RefinedSubgraphRetriever, HybridRetriever]
)
def test_ray_build_equals_single_process(cls: Any, tmp_path: Path) -> None:
    local = cls.from_documents(CORPUS, **build_options(cls))
    built = cls.from_documents(
        CORPUS, **build_options(cls), executor=RayExecutor(num_workers=2, batch_size=4)
    )
    assert same_index(local, built, tmp_path)


@pytest.mark.usefixtures("local_ray")
def test_ray_build_survives_a_killed_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "killed"
    original = ClueIndex.preparer
    monkeypatch.setattr(ClueIndex, "preparer", lambda self: KillOnce(original(self), str(marker)))
    built = ClueIndex.from_documents(
        CORPUS,
        embedding=FakeEmbedder(),
        chunking=False,
        executor=RayExecutor(num_workers=2, batch_size=3),
    )
    assert marker.is_file()  # a worker process was killed during the build
    monkeypatch.undo()
    local = ClueIndex.from_documents(CORPUS, embedding=FakeEmbedder(), chunking=False)
    assert same_index(local, built, tmp_path)


@pytest.mark.usefixtures("local_ray")
def test_ray_build_resumes_after_an_interrupted_driver(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ckpt = tmp_path / "ckpt"
    put = PreparedBatches.put
    saved: list[int] = []

    def put_then_die(self: PreparedBatches, position: int, batch: Any, result: Any) -> None:
        if len(saved) == 2:
            raise KeyboardInterrupt  # the driver dies after two batches are saved
        put(self, position, batch, result)
        saved.append(position)

    monkeypatch.setattr(PreparedBatches, "put", put_then_die)
    with pytest.raises(KeyboardInterrupt):
        DenseRetriever.from_documents(
            CORPUS,
            embedding=FakeEmbedder(),
            executor=RayExecutor(num_workers=2, batch_size=2),
            checkpoint_dir=ckpt,
        )
    monkeypatch.undo()
    assert read_checkpoint(ckpt)["done"] == []
    executor = RayExecutor(num_workers=2, batch_size=2)
    resumed = DenseRetriever.from_documents(
        CORPUS, embedding=FakeEmbedder(), executor=executor, checkpoint_dir=ckpt
    )
    assert sum(executor.worker_batches.values()) == 5 - 2  # only the missing batches
    local = DenseRetriever.from_documents(CORPUS, embedding=FakeEmbedder())
    assert same_index(local, resumed, tmp_path)


FIX = Path(__file__).resolve().parents[1] / "fixtures" / "eval" / "musique"


def _index(out: Path, method: str, *extra: str) -> int:
    from graphrag_integrations import cli

    return cli.main(["index", "--method", method, "--input", str(FIX), "--out", str(out), *extra])


def test_cli_executor_options_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _index(tmp_path / "a", "bm25", "--workers", "2") == 2
    assert capsys.readouterr().err == "error: --workers needs --executor ray\n"
    assert not (tmp_path / "a").exists()


@pytest.mark.slow
@pytest.mark.usefixtures("local_ray")
def test_cli_index_with_ray_equals_the_local_index(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _index(tmp_path / "local", "dense") == 0
    assert _index(tmp_path / "ray", "dense", "--executor", "ray", "--workers", "2") == 0
    assert "indexed 4 passages with dense" in capsys.readouterr().out
    local = DenseRetriever.load(tmp_path / "local")
    built = DenseRetriever.load(tmp_path / "ray")
    assert [p.id for p in built.passages] == [p.id for p in local.passages]
    for q in ("who founded the city", "when was it built"):
        assert [r.passage.id for r in built.retrieve(q, 4)] == [
            r.passage.id for r in local.retrieve(q, 4)
        ]


# A driver process building Clue into FalkorDB with Ray and a checkpoint, which SIGKILLs itself
# after two prepared batches are saved ("prepared") or once the merge's first graph write
# reached the server ("merge"). It joins the session's Ray (RAY_ADDRESS): its actors die with
# it, the cluster stays, as on a real cluster.
DRIVER = """
import os, signal, sys
from graphrag_integrations.core.graph import falkordb_cypher as cy
from graphrag_integrations.core.graph.falkordb_graph import FalkorDBGraph
from graphrag_integrations.core.index.checkpoint import PreparedBatches
from graphrag_integrations.core.index.executors import RayExecutor
from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.testing.fake_embedder import FakeEmbedder

url, ckpt, kill_at, corpus = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
die = lambda: os.kill(os.getpid(), signal.SIGKILL)
if kill_at == "prepared":
    put, saved = PreparedBatches.put, []
    def put_then_die(self, position, batch, result):
        put(self, position, batch, result)
        saved.append(position)
        if len(saved) == 2:
            die()
    PreparedBatches.put = put_then_die
else:
    query = FalkorDBGraph._query
    def query_then_die(self, text, params=None):
        rows = query(self, text, params)
        if text == cy.MERGE_NODES:
            die()
        return rows
    FalkorDBGraph._query = query_then_die
ClueIndex.from_documents(
    corpus, embedding=FakeEmbedder(), chunking=False, graph_store=url, checkpoint_dir=ckpt,
    executor=RayExecutor(num_workers=1, batch_size=2),
)
raise SystemExit("the driver was not killed")
"""


def _kill_driver(url: str, ckpt: Path, kill_at: str) -> None:
    """Run :data:`DRIVER` in a process of its own; it must die of ``SIGKILL``."""
    import subprocess

    env = {
        **os.environ,
        "RAY_ADDRESS": ray.get_runtime_context().gcs_address,
        "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
    }
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, url, str(ckpt), kill_at, *CORPUS],
        env=env,
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode(errors="replace")[-2000:]


@pytest.fixture
def clean_graph(falkordb_server: Any) -> Iterator[str]:
    """The URL of a graph for the clean build, deleted afterwards."""
    import uuid

    from graphrag_integrations.core.graph.falkordb_connection import connect, parse_falkordb_url

    url = falkordb_server.url(f"t_clean_{uuid.uuid4().hex[:12]}")
    yield url
    location = parse_falkordb_url(url)
    client = connect(location)
    try:
        if location.graph in client.list_graphs():
            client.select_graph(location.graph).delete()
    finally:
        client.connection.close()


@pytest.mark.slow
@pytest.mark.falkordb_server
@pytest.mark.usefixtures("local_ray")
@pytest.mark.parametrize("kill_at", ["prepared", "merge"])
def test_a_killed_ray_driver_resumes_into_falkordb_with_nothing_duplicated(
    kill_at: str, falkordb_url: str, clean_graph: str, tmp_path: Path
) -> None:
    ckpt = tmp_path / "ckpt"
    _kill_driver(falkordb_url, ckpt, kill_at)
    state = read_checkpoint(ckpt)
    assert state["done"] == []  # nothing merged and saved yet
    executor = RayExecutor(num_workers=1, batch_size=2)
    resumed = ClueIndex.from_documents(
        CORPUS,
        embedding=FakeEmbedder(),
        chunking=False,
        graph_store=falkordb_url,
        checkpoint_dir=ckpt,
        executor=executor,
    )
    # only the batches the killed driver had not saved are prepared again
    assert sum(executor.worker_batches.values()) == (5 - 2 if kill_at == "prepared" else 0)
    clean = ClueIndex.from_documents(
        CORPUS, embedding=FakeEmbedder(), chunking=False, graph_store=clean_graph
    )
    assert resumed.doc_ids() == clean.doc_ids()
    assert resumed.graph_store.to_graph_store() == clean.graph_store.to_graph_store()
    q = "largest city of Spain"
    assert [(r.passage.id, round(r.score, 5)) for r in resumed.retrieve(q, 4)] == [
        (r.passage.id, round(r.score, 5)) for r in clean.retrieve(q, 4)
    ]
    loaded = ClueIndex.load(ckpt / "index", embedding=FakeEmbedder())
    assert loaded.doc_ids() == clean.doc_ids()
