"""Executors without Ray: choice of executor, the batched build through an executor object,
prepared-batch checkpoints and their resume, one-line errors (Ray itself:
tests/integration/test_ray_build.py)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from graphrag_integrations.baselines.bm25 import BM25Retriever
from graphrag_integrations.baselines.dense import DenseRetriever
from graphrag_integrations.baselines.hybrid import HybridRetriever
from graphrag_integrations.core.index.checkpoint import PreparedBatches, read_checkpoint
from graphrag_integrations.core.index.executors import (
    LocalExecutor,
    RayExecutor,
    is_local,
    resolve_executor,
)
from graphrag_integrations.errors import (
    EmptyCorpusError,
    IndexMismatchError,
    InvalidArgumentError,
)
from graphrag_integrations.methods.clue.index import ClueIndex
from graphrag_integrations.methods.kgt.index import ParseKGTranslatorRetriever
from graphrag_integrations.methods.qcg.index import QueryCentricGraphIndex
from graphrag_integrations.methods.reg.index import RefinedSubgraphRetriever
from graphrag_integrations.testing.fake_embedder import FakeEmbedder

DOCS = [
    f"{city} is the capital of {country}. {person} lived in {city} in {year}."
    for city, country, person, year in [
        ("Paris", "France", "Marie Curie", 1900),
        ("Rome", "Italy", "Julius Caesar", 1950),
        ("Berlin", "Germany", "Albert Einstein", 1920),
        ("Madrid", "Spain", "Pablo Picasso", 1901),
        ("Vienna", "Austria", "Sigmund Freud", 1910),
    ]
]


class Doc2QueryReplies:
    """A picklable fake Doc2Query LLM: one answered question per sentence of the chunk."""

    model_name = "fake-doc2query"

    def __call__(self, prompt: str) -> str:
        chunk = prompt.rsplit("---Input chunk---\n", 1)[1].strip()
        sentences = [s.strip() + "." for s in chunk.split(".") if s.strip()]
        return json.dumps(
            [
                {"index": i, "query": f"What about {' '.join(s.split()[:2])}?", "answer": s}
                for i, s in enumerate(sentences)
            ]
        )


def build_options(cls: Any) -> dict[str, Any]:
    """Model-free build options of ``cls`` (a fake embedder; a fake LLM for QCG)."""
    if cls is BM25Retriever:
        return {"chunking": False}
    extra = {"llm": Doc2QueryReplies()} if cls is QueryCentricGraphIndex else {}
    return {"embedding": FakeEmbedder(), "chunking": False, **extra}


def same_index(a: Any, b: Any, tmp: Path) -> bool:
    """Both persisted: every file byte-identical but the index ids."""
    a.persist(tmp / "a")
    b.persist(tmp / "b")
    files = sorted(p.relative_to(tmp / "a") for p in (tmp / "a").rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(tmp / "b") for p in (tmp / "b").rglob("*") if p.is_file())
    for rel in files:
        left, right = (tmp / "a" / rel).read_bytes(), (tmp / "b" / rel).read_bytes()
        if rel.suffix == ".json":
            one, two = json.loads(left), json.loads(right)
            for data in (one, two):
                if isinstance(data, dict):
                    data.pop("index_id", None)
                    data.pop("files", None)  # checksums of store.json (holds the id)
                    data.pop("timings", None)
                    data.pop("created_at", None)
            if one != two:
                return False
        elif left != right:
            return False
    return True


class CountingExecutor(LocalExecutor):
    """The local executor, counting the batches it prepared (and optionally stopping)."""

    def __init__(self, batch_size: int, stop_after: int | None = None) -> None:
        super().__init__(batch_size)
        self.prepared = 0
        self.stop_after = stop_after

    def map(self, prepare: Any, batches: Any, *, done: Any = None, **options: Any) -> Any:
        def counted(batch: Any) -> Any:
            if self.stop_after is not None and self.prepared >= self.stop_after:
                raise KeyboardInterrupt  # the driver is killed here
            self.prepared += 1
            return prepare(batch)

        return super().map(counted, batches, done=done, **options)


def test_resolve_executor_names_and_objects() -> None:
    assert isinstance(resolve_executor(None), LocalExecutor)
    assert isinstance(resolve_executor("local"), LocalExecutor)
    mine = LocalExecutor(batch_size=3)
    assert resolve_executor(mine) is mine
    assert is_local("local") and not is_local(mine)


@pytest.mark.parametrize("bad", ["dask", "", 3, LocalExecutor])
def test_bad_executor_is_one_line(bad: Any) -> None:
    with pytest.raises(InvalidArgumentError) as info:
        ClueIndex.from_documents(DOCS, embedding=FakeEmbedder(), executor=bad)
    assert "\n" not in str(info.value) and "executor must be" in str(info.value)


class UnsplitBM25(BM25Retriever):
    """An index whose build is not split into prepare / merge."""

    preparer = None  # type: ignore[assignment]


def test_method_without_split_build_refuses_an_executor_in_one_line() -> None:
    with pytest.raises(InvalidArgumentError) as info:
        UnsplitBM25.from_documents(DOCS, executor=LocalExecutor(2))
    assert "\n" not in str(info.value) and "use executor='local'" in str(info.value)


def test_ray_missing_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "ray" else real(name, *a)
    )
    with pytest.raises(ImportError, match=r"pip install 'graphrag-integrations\[distributed\]'"):
        resolve_executor("ray")


@pytest.mark.parametrize("options", [{"num_workers": 0}, {"batch_size": 0}, {"address": " "}])
def test_ray_executor_checks_its_arguments(options: dict[str, Any]) -> None:
    pytest.importorskip("ray")
    with pytest.raises(ValueError):
        RayExecutor(**options)


def test_local_executor_keeps_input_order_and_reports_each_batch() -> None:
    seen: list[tuple[int, int]] = []
    out = LocalExecutor().map(
        sum, [[1, 2], [3], [4, 5]], done=lambda i, r: seen.append((i, r)), show_progress=False
    )
    assert out == [3, 3, 9] and seen == [(0, 3), (1, 3), (2, 9)]


SPLIT = [
    ClueIndex,
    QueryCentricGraphIndex,
    ParseKGTranslatorRetriever,
    RefinedSubgraphRetriever,
    DenseRetriever,
    BM25Retriever,
    HybridRetriever,
]


def test_every_registered_method_has_a_split_build() -> None:
    from graphrag_integrations.evaluation.registry import registrations

    for name, registration in registrations().items():
        cls = registration.resolve_index_class()
        assert callable(getattr(cls, "preparer", None)), name
        assert callable(getattr(cls, "merge", None)), name


@pytest.mark.parametrize("cls", SPLIT)
def test_batched_build_equals_single_process_build(cls: Any, tmp_path: Path) -> None:
    local = cls.from_documents(DOCS, **build_options(cls))
    batched = cls.from_documents(DOCS, **build_options(cls), executor=LocalExecutor(batch_size=2))
    assert same_index(local, batched, tmp_path)
    if cls is ParseKGTranslatorRetriever:
        return  # its queries need the translator LM (the files are equal)
    q = "capital of Germany"
    assert [r.passage.id for r in local.retrieve(q, 3)] == [
        r.passage.id for r in batched.retrieve(q, 3)
    ]


def test_clue_add_passages_is_merge_of_prepare(tmp_path: Path) -> None:
    index = ClueIndex(embedding=FakeEmbedder())
    passages = ClueIndex.from_documents(DOCS, embedding=FakeEmbedder()).passages
    index.merge([index.preparer()(passages[:2]), index.preparer()(passages[2:])])
    assert (
        index.graph_store == ClueIndex.from_passages(passages, embedding=FakeEmbedder()).graph_store
    )


def test_interrupted_executor_build_resumes_from_prepared_batches(tmp_path: Path) -> None:
    ckpt = tmp_path / "ckpt"
    first = CountingExecutor(batch_size=2, stop_after=2)
    with pytest.raises(KeyboardInterrupt):
        ClueIndex.from_documents(
            DOCS, embedding=FakeEmbedder(), chunking=False, executor=first, checkpoint_dir=ckpt
        )
    assert len(list((ckpt / PreparedBatches.FOLDER).iterdir())) == 2
    assert read_checkpoint(ckpt)["done"] == []
    again = CountingExecutor(batch_size=2)
    index = ClueIndex.from_documents(
        DOCS, embedding=FakeEmbedder(), chunking=False, executor=again, checkpoint_dir=ckpt
    )
    assert again.prepared == 1  # 5 passages = 3 batches, 2 saved before the kill
    local = ClueIndex.from_documents(DOCS, embedding=FakeEmbedder(), chunking=False)
    assert same_index(local, index, tmp_path)
    done = CountingExecutor(batch_size=2)  # a third run loads the finished index
    loaded = ClueIndex.from_documents(
        DOCS, embedding=FakeEmbedder(), chunking=False, executor=done, checkpoint_dir=ckpt
    )
    assert done.prepared == 0 and loaded.graph_store == local.graph_store


def test_executor_checkpoint_is_not_resumed_by_a_local_build(tmp_path: Path) -> None:
    ckpt = tmp_path / "ckpt"
    DenseRetriever.from_documents(
        DOCS, embedding=FakeEmbedder(), executor=LocalExecutor(2), checkpoint_dir=ckpt
    )
    with pytest.raises(IndexMismatchError, match="same executor"):
        DenseRetriever.from_documents(DOCS, embedding=FakeEmbedder(), checkpoint_dir=ckpt)


def test_checkpoint_every_with_an_executor_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgumentError, match="checkpoint_every does not apply"):
        DenseRetriever.from_documents(
            DOCS,
            embedding=FakeEmbedder(),
            executor=LocalExecutor(2),
            checkpoint_dir=tmp_path / "c",
            checkpoint_every=2,
        )


def test_executor_build_shows_progress(capsys: pytest.CaptureFixture[str]) -> None:
    DenseRetriever.from_documents(
        DOCS, embedding=FakeEmbedder(), show_progress=True, executor=LocalExecutor(2)
    )
    assert "Preparing dense: 5/5 passages (100%)" in capsys.readouterr().err


@pytest.mark.parametrize("cls", [BM25Retriever, HybridRetriever, RefinedSubgraphRetriever])
def test_add_passages_is_merge_of_prepare_in_batches(cls: Any, tmp_path: Path) -> None:
    options = build_options(cls)
    whole = cls.from_documents(DOCS, **options)
    passages = whole.passages
    index = cls.from_documents(DOCS[:1], **options)
    index.merge([index.preparer()(passages[1:3]), index.preparer()(passages[3:])])
    assert same_index(whole, index, tmp_path)


def test_bm25_delete_after_merge_equals_a_fresh_build(tmp_path: Path) -> None:
    index = BM25Retriever.from_documents(DOCS, chunking=False)
    index.delete(index.passages[1].doc_id)
    fresh = BM25Retriever.from_documents(DOCS[:1] + DOCS[2:], chunking=False)
    assert same_index(fresh, index, tmp_path)


def test_reg_executor_build_reads_triple_files_here(tmp_path: Path) -> None:
    table = tmp_path / "kb.tsv"
    table.write_text("Kismet\tdirected_by\tWilliam Dieterle\n", encoding="utf-8")
    docs = [str(table), *DOCS]
    options = build_options(RefinedSubgraphRetriever)
    local = RefinedSubgraphRetriever.from_documents(docs, **options)
    batched = RefinedSubgraphRetriever.from_documents(
        docs, **options, executor=LocalExecutor(batch_size=2)
    )
    assert "kb.tsv" in batched.doc_ids()
    assert same_index(local, batched, tmp_path)
    only = RefinedSubgraphRetriever.from_documents(
        [str(table)], embedding=FakeEmbedder(), executor=LocalExecutor(2)
    )
    assert only.doc_ids() == ["kb.tsv"]


def test_reg_executor_build_without_triples_is_an_empty_corpus() -> None:
    with pytest.raises(EmptyCorpusError, match="no triples"):
        RefinedSubgraphRetriever.from_documents(
            ["it rained.", "nothing happened."],
            embedding=FakeEmbedder(),
            executor=LocalExecutor(batch_size=1),
        )
