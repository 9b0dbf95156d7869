"""Issue 12 (data safety): persist never deletes foreign files, stale siblings are cleaned,
damaged indexes fail with one error naming the file, and the embedding dimension is checked
at load."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from graphrag_integrations.adapters.validation import check_k as adapter_check_k
from graphrag_integrations.baselines.dense import DenseRetriever
from graphrag_integrations.baselines.hybrid import HybridRetriever
from graphrag_integrations.core.persistence import (
    MANIFEST_NAME,
    Manifest,
    atomic_directory,
    clean_stale_siblings,
    read_manifest,
    reading_index,
    write_manifest,
)
from graphrag_integrations.core.validation import check_k
from graphrag_integrations.core.vector_store import InMemoryVectorIndex
from graphrag_integrations.errors import (
    CorruptIndexError,
    GraphRAGError,
    IndexExistsError,
    IndexMismatchError,
    InvalidArgumentError,
    InvalidArgumentTypeError,
)
from tests.conftest import FakeEmbedder

DOCS = ["Paris is in France.", "Rome is in Italy.", "Berlin is in Germany.", "Oslo, Norway."]
SRC = str(Path(__file__).resolve().parents[3] / "src")


@pytest.fixture
def dense() -> DenseRetriever:
    return DenseRetriever.from_documents(DOCS, embedding=FakeEmbedder())


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def _edit_manifest(index_dir: Path, **changes: object) -> None:
    path = index_dir / MANIFEST_NAME
    data = json.loads(path.read_text(encoding="utf-8"))
    data.update(changes)
    path.write_text(json.dumps(data), encoding="utf-8")


# -- persist never deletes what it did not write -------------------------------------------
def test_persist_refuses_a_folder_of_documents(tmp_path: Path, dense: DenseRetriever) -> None:
    docs = tmp_path / "my_docs"
    docs.mkdir()
    (docs / "thesis.txt").write_text("years of work")
    with pytest.raises(IndexExistsError, match="non-empty folder that holds no index"):
        dense.persist(docs)
    assert _names(docs) == ["thesis.txt"]
    assert _names(tmp_path) == ["my_docs"]  # no temporary directory left either


def test_overwrite_writes_the_index_but_keeps_foreign_files(
    tmp_path: Path, dense: DenseRetriever
) -> None:
    docs = tmp_path / "my_docs"
    (docs / "notes").mkdir(parents=True)
    (docs / "thesis.txt").write_text("years of work")
    (docs / "notes" / "a.md").write_text("a")
    dense.persist(docs, overwrite=True)
    assert (docs / "thesis.txt").read_text() == "years of work"
    assert (docs / "notes" / "a.md").read_text() == "a"
    assert len(DenseRetriever.load(docs, embedding=FakeEmbedder()).passages) == 4
    # the folder is now a dense index: persisting again needs no overwrite and still keeps them
    dense.delete(dense.passages[0].doc_id)
    dense.persist(docs)
    assert (docs / "thesis.txt").read_text() == "years of work"
    assert len(DenseRetriever.load(docs, embedding=FakeEmbedder()).passages) == 3
    assert set(read_manifest(docs).files) == {"passages.json", "vectors.npy"}


def test_file_dropped_into_an_index_survives_a_re_persist(
    tmp_path: Path, dense: DenseRetriever
) -> None:
    dense.persist(tmp_path / "ix")
    (tmp_path / "ix" / "README.txt").write_text("mine")
    dense.persist(tmp_path / "ix")
    assert (tmp_path / "ix" / "README.txt").read_text() == "mine"
    assert _names(tmp_path) == ["ix"]


def test_re_persist_without_foreign_files_is_an_atomic_swap(
    tmp_path: Path, dense: DenseRetriever
) -> None:
    dense.persist(tmp_path / "ix")
    before = os.stat(tmp_path / "ix").st_ino
    dense.persist(tmp_path / "ix")
    assert os.stat(tmp_path / "ix").st_ino != before  # a new directory renamed in place


def test_foreign_file_with_an_index_file_name_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "f"
    folder.mkdir()
    (folder / "vectors.npy").write_text("not mine")
    index = InMemoryVectorIndex(3, "m")
    index.add(["a"], [[1.0, 0.0, 0.0]])
    with pytest.raises(IndexExistsError, match="would be overwritten"):
        index.persist(folder, overwrite=True)
    assert (folder / "vectors.npy").read_text() == "not mine"


def test_another_methods_index_needs_overwrite(tmp_path: Path, dense: DenseRetriever) -> None:
    target = tmp_path / "ix"
    write_manifest(target, Manifest(method="bm25"))
    with pytest.raises(IndexExistsError, match="replace the 'bm25' index"):
        dense.persist(target)
    assert read_manifest(target).method == "bm25"
    dense.persist(target, overwrite=True)
    assert read_manifest(target).method == "dense"


def test_method_is_read_from_the_new_manifest_when_not_given(tmp_path: Path) -> None:
    target = tmp_path / "ix"
    write_manifest(target, Manifest(method="bm25"))
    refused = pytest.raises(IndexExistsError, match=r"'bm25' index .* with a 'dense' index")
    with refused, atomic_directory(target) as tmp:
        write_manifest(tmp, Manifest(method="dense"))
    assert read_manifest(target).method == "bm25"


# -- stale siblings --------------------------------------------------------------------------
_WRITER = textwrap.dedent(
    """
    import sys, time
    from graphrag_integrations.core.persistence import atomic_directory
    with atomic_directory(sys.argv[1]) as tmp:
        (tmp / "part").write_bytes(b"x" * 1000)
        print("inside", flush=True)
        time.sleep(60)
    """
)


def _start_writer(target: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": SRC}
    proc = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(target)], stdout=subprocess.PIPE, text=True, env=env
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "inside"
    return proc


_PERSIST = textwrap.dedent(
    """
    import sys
    from graphrag_integrations.baselines.dense import DenseRetriever
    from tests.conftest import FakeEmbedder
    index = DenseRetriever.from_documents(["one document"], embedding=FakeEmbedder())
    index.persist(sys.argv[1], overwrite=True)  # another index: replaced only when told
    """
)


def _start_persist(target: Path, delay: float) -> subprocess.Popen[str]:
    root = str(Path(SRC).parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, root])}
    return subprocess.Popen([sys.executable, "-c", _PERSIST, str(target)], env=env, cwd=root)


def _siblings(target: Path) -> list[str]:
    return sorted(p.name for p in target.parent.iterdir() if p.name.startswith(f".{target.name}."))


def test_killed_writer_leftovers_are_cleaned_but_live_writers_are_not(
    tmp_path: Path, dense: DenseRetriever
) -> None:
    target = tmp_path / "ix"
    dense.persist(target)
    live = _start_writer(target)
    try:
        dense.persist(target)  # a second process persisting the same target at the same time
        assert len(_siblings(target)) == 1  # its temporary directory is held: left alone
        DenseRetriever.load(target, embedding=FakeEmbedder())
        assert len(_siblings(target)) == 1
    finally:
        live.send_signal(signal.SIGKILL)
        live.wait()
    assert len(_siblings(target)) == 1  # killed mid-way: the leftover stays ...
    dense.persist(target)  # ... until the next persist of that target
    assert _siblings(target) == []
    assert _names(tmp_path) == ["ix"]


def test_load_cleans_stale_siblings(
    tmp_path: Path, dense: DenseRetriever, caplog: pytest.LogCaptureFixture
) -> None:
    target = tmp_path / "ix"
    dense.persist(target)
    for name in (".ix.tmp-abcd1234", ".ix.old-abcd1234", ".ix.tmp-zzzz9999"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "big.npy").write_bytes(b"0" * 100)
    (tmp_path / ".ix.notes").mkdir()  # not a name persist makes: never touched
    with caplog.at_level(logging.WARNING, logger="graphrag_integrations.core.persistence"):
        DenseRetriever.load(target, embedding=FakeEmbedder())
    assert _names(tmp_path) == [".ix.notes", "ix"]
    assert "deleted 3 stale temporary sibling(s)" in caplog.text


def test_interrupted_swap_is_restored_from_the_backup(
    tmp_path: Path, dense: DenseRetriever
) -> None:
    target = tmp_path / "ix"
    dense.persist(target)
    os.replace(target, tmp_path / ".ix.old-abcd1234")  # killed between the two renames
    loaded = DenseRetriever.load(target, embedding=FakeEmbedder())
    assert len(loaded.passages) == 4
    assert _names(tmp_path) == ["ix"]


def test_a_reader_delays_the_swap_until_it_is_done(tmp_path: Path, dense: DenseRetriever) -> None:
    target = tmp_path / "ix"
    dense.persist(target)
    with reading_index(target) as src:
        manifest = read_manifest(src)
        writer = _start_persist(target, delay=0.0)
        time.sleep(1.0)
        # the writer waits for the shared lock: the files still match the manifest read
        assert writer.poll() is None
        assert read_manifest(src).created_at == manifest.created_at
        assert len(DenseRetriever.load(src, embedding=FakeEmbedder()).passages) == 4
    assert writer.wait(timeout=60) == 0
    assert len(DenseRetriever.load(target, embedding=FakeEmbedder()).passages) == 1


def test_clean_stale_siblings_skips_locked_directories(tmp_path: Path) -> None:
    fcntl = pytest.importorskip("fcntl")
    held = tmp_path / ".ix.tmp-held0000"
    held.mkdir()
    fd = os.open(held, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert clean_stale_siblings(tmp_path / "ix") == 0
        assert held.exists()
    finally:
        os.close(fd)
    assert clean_stale_siblings(tmp_path / "ix") == 1
    assert not held.exists()


# -- corruption --------------------------------------------------------------------------------
def test_manifest_lists_checksums_of_every_file(tmp_path: Path) -> None:
    hybrid = HybridRetriever.from_documents(DOCS, embedding=FakeEmbedder())
    hybrid.persist(tmp_path / "h")
    files = read_manifest(tmp_path / "h").files
    on_disk = {
        p.relative_to(tmp_path / "h").as_posix() for p in (tmp_path / "h").rglob("*") if p.is_file()
    }
    assert set(files) == on_disk - {MANIFEST_NAME}
    assert "dense/vectors.npy" in files and "dense/manifest.json" in files


@pytest.mark.parametrize("checksums", [True, False], ids=["checksummed", "older-index"])
def test_zero_byte_vectors(tmp_path: Path, dense: DenseRetriever, checksums: bool) -> None:
    dense.persist(tmp_path / "ix")
    if not checksums:
        _edit_manifest(tmp_path / "ix", files={})
    (tmp_path / "ix" / "vectors.npy").write_bytes(b"")
    with pytest.raises(CorruptIndexError, match=r"vectors\.npy"):
        DenseRetriever.load(tmp_path / "ix", embedding=FakeEmbedder())


def test_flipped_bit_is_detected(tmp_path: Path, dense: DenseRetriever) -> None:
    dense.persist(tmp_path / "ix")
    path = tmp_path / "ix" / "vectors.npy"
    data = bytearray(path.read_bytes())
    data[-3] ^= 0x01  # still a valid float: only the checksum can tell
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptIndexError, match=r"vectors\.npy: checksum mismatch"):
        DenseRetriever.load(tmp_path / "ix", embedding=FakeEmbedder())


def test_nan_vectors_are_refused_even_without_checksums(
    tmp_path: Path, dense: DenseRetriever
) -> None:
    dense.persist(tmp_path / "ix")
    _edit_manifest(tmp_path / "ix", files={})
    matrix = np.load(tmp_path / "ix" / "vectors.npy")
    matrix[2, 5] = np.nan
    np.save(tmp_path / "ix" / "vectors.npy", matrix)
    with pytest.raises(CorruptIndexError, match=r"vectors\.npy: 1 vector\(s\) hold NaN .*\[2\]"):
        DenseRetriever.load(tmp_path / "ix", embedding=FakeEmbedder())


def test_edited_passage_text_is_detected(tmp_path: Path, dense: DenseRetriever) -> None:
    dense.persist(tmp_path / "ix")
    path = tmp_path / "ix" / "passages.json"
    path.write_text(path.read_text().replace("Rome", "Nome"))
    with pytest.raises(CorruptIndexError, match=r"passages\.json: checksum mismatch"):
        DenseRetriever.load(tmp_path / "ix", embedding=FakeEmbedder())


def test_missing_listed_file_and_broken_manifest(tmp_path: Path, dense: DenseRetriever) -> None:
    dense.persist(tmp_path / "ix")
    (tmp_path / "ix" / "passages.json").unlink()
    with pytest.raises(CorruptIndexError, match=r"passages\.json: missing"):
        DenseRetriever.load(tmp_path / "ix", embedding=FakeEmbedder())
    (tmp_path / "ix" / MANIFEST_NAME).write_text("{")
    with pytest.raises(CorruptIndexError, match=r"manifest\.json is not valid JSON"):
        DenseRetriever.load(tmp_path / "ix", embedding=FakeEmbedder())


@pytest.mark.parametrize(
    "files",
    [{"../x": "0" * 64}, {"a": "nothex"}, ["a"]],
    ids=["escaping-path", "bad-digest", "not-a-map"],
)
def test_bad_file_lists_are_corrupt(tmp_path: Path, dense: DenseRetriever, files: object) -> None:
    dense.persist(tmp_path / "ix")
    _edit_manifest(tmp_path / "ix", files=files)
    with pytest.raises(CorruptIndexError, match="files"):
        read_manifest(tmp_path / "ix")


def test_older_index_without_checksums_loads_with_a_note(
    tmp_path: Path, dense: DenseRetriever, caplog: pytest.LogCaptureFixture
) -> None:
    dense.persist(tmp_path / "ix")
    data = json.loads((tmp_path / "ix" / MANIFEST_NAME).read_text())
    del data["files"]
    (tmp_path / "ix" / MANIFEST_NAME).write_text(json.dumps(data))
    with caplog.at_level(logging.INFO, logger="graphrag_integrations.core.persistence"):
        loaded = DenseRetriever.load(tmp_path / "ix", embedding=FakeEmbedder())
    assert len(loaded.passages) == 4
    assert "lists no file checksums" in caplog.text


# -- manifest checks -------------------------------------------------------------------------
def test_same_model_name_other_dimension_fails_at_load(tmp_path: Path) -> None:
    index = DenseRetriever.from_documents(DOCS, embedding=FakeEmbedder(64, model_name="m"))
    index.persist(tmp_path / "ix")
    with pytest.raises(IndexMismatchError, match="dimension 64, the embedding 'm' makes 32"):
        DenseRetriever.load(tmp_path / "ix", embedding=FakeEmbedder(32, model_name="m"))


def test_other_method_is_named_before_the_format_version(tmp_path: Path) -> None:
    write_manifest(tmp_path / "clue", Manifest(method="clue", format_version=2))
    with pytest.raises(IndexMismatchError, match="method mismatch: expected 'dense', found 'clue'"):
        DenseRetriever.load(tmp_path / "clue", embedding=FakeEmbedder())


# -- input: k ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("k", "error", "message"),
    [
        (0, InvalidArgumentError, "got 0"),
        (-1, InvalidArgumentError, "got -1"),
        ("3", InvalidArgumentTypeError, "got str '3'"),
        (2.0, InvalidArgumentTypeError, "got float 2.0"),
        (True, InvalidArgumentTypeError, "got bool True"),
    ],
)
def test_check_k_rejects(k: object, error: type[Exception], message: str) -> None:
    for check in (check_k, adapter_check_k):
        with pytest.raises(error, match=f"k must be an integer >= 1, {message}"):
            check(k)  # type: ignore[operator]
    assert issubclass(error, GraphRAGError) and issubclass(error, ValueError)
    assert issubclass(InvalidArgumentTypeError, TypeError)


def test_check_k_accepts_integers_and_the_default() -> None:
    assert check_k(np.int64(4)) == 4 and type(check_k(np.int64(4))) is int
    assert check_k(None, 5) == 5
    with pytest.raises(InvalidArgumentTypeError, match="got None"):
        check_k(None)
    with pytest.raises(InvalidArgumentError, match="default k"):
        check_k(None, 0)
    assert adapter_check_k(None) is None
