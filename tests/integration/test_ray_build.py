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
