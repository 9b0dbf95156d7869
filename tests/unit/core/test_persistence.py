"""Manifest validation and atomic writes."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest

import graphrag_integrations
from graphrag_integrations.core.persistence import (
    FORMAT_VERSION,
    MANIFEST_NAME,
    Manifest,
    atomic_directory,
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_text,
    check_manifest,
    read_manifest,
    write_manifest,
)
from graphrag_integrations.errors import IndexExistsError, IndexMismatchError, IndexNotFoundError


def _manifest(**overrides: object) -> Manifest:
    fields: dict[str, object] = {
        "method": "dense",
        "parameters": {"k": 5, "chunk_size": 256},
        "models": {"embedding": "all-MiniLM-L6-v2"},
        "embedding_dimension": 384,
    }
    fields.update(overrides)
    return Manifest(**fields)  # type: ignore[arg-type]


# -- Manifest ------------------------------------------------------------------------------
def test_manifest_defaults() -> None:
    m = Manifest(method="clue")
    assert m.package_version == graphrag_integrations.__version__
    assert m.format_version == FORMAT_VERSION
    assert m.embedding_model is None
    assert m.created_at.endswith("+00:00")


def test_manifest_round_trip(tmp_path: Path) -> None:
    m = _manifest()
    path = write_manifest(tmp_path, m)
    assert path == tmp_path / MANIFEST_NAME
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["method"] == "dense"
    assert data["models"] == {"embedding": "all-MiniLM-L6-v2"}
    assert data["embedding_dimension"] == 384
    assert read_manifest(tmp_path) == m


def test_manifest_keeps_unknown_keys(tmp_path: Path) -> None:
    data = _manifest().to_dict()
    data["future_field"] = {"x": 1}
    (tmp_path / MANIFEST_NAME).write_text(json.dumps(data), encoding="utf-8")
    m = read_manifest(tmp_path)
    assert m.extra == {"future_field": {"x": 1}}
    assert m.to_dict()["future_field"] == {"x": 1}


def test_read_manifest_missing_dir_names_it(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(IndexNotFoundError, match=re.escape(str(missing))):
        read_manifest(missing)


def test_read_manifest_dir_without_manifest(tmp_path: Path) -> None:
    with pytest.raises(IndexNotFoundError, match=r"manifest\.json"):
        read_manifest(tmp_path)
    # IndexNotFoundError is also a FileNotFoundError for generic handlers
    with pytest.raises(FileNotFoundError):
        read_manifest(tmp_path)


@pytest.mark.parametrize(
    "content",
    ["{not json", "", "\xff\xfe garbage"],
)
def test_read_manifest_corrupt(tmp_path: Path, content: str) -> None:
    (tmp_path / MANIFEST_NAME).write_text(content, encoding="latin-1")
    with pytest.raises(IndexMismatchError, match="not valid JSON"):
        read_manifest(tmp_path)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([1, 2], "expected a JSON object"),
        ({"format_version": 1}, "'method' is missing"),
        ({"method": "dense"}, "'format_version' is missing"),
        ({"method": 3, "format_version": 1}, "'method' must be str"),
        ({"method": "dense", "format_version": "1"}, "'format_version' must be int"),
        ({"method": "dense", "format_version": True}, "'format_version' must be int"),
        ({"method": "dense", "format_version": 1, "models": {"embedding": 3}}, "'models'"),
        ({"method": "dense", "format_version": 1, "parameters": []}, "'parameters'"),
        ({"method": "dense", "format_version": 1, "embedding_dimension": -1}, "dimension"),
    ],
)
def test_read_manifest_invalid_fields(tmp_path: Path, data: object, message: str) -> None:
    (tmp_path / MANIFEST_NAME).write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(IndexMismatchError, match=message):
        read_manifest(tmp_path)


# -- check_manifest ------------------------------------------------------------------------
def test_check_manifest_accepts_match() -> None:
    m = _manifest()
    assert check_manifest(m, method="dense", embedding_model="all-MiniLM-L6-v2", dimension=384) is m
    assert check_manifest(m, method="dense") is m


def test_check_manifest_method_mismatch() -> None:
    with pytest.raises(IndexMismatchError, match="expected 'clue', found 'dense'"):
        check_manifest(_manifest(), method="clue")


def test_check_manifest_model_mismatch() -> None:
    with pytest.raises(
        IndexMismatchError, match="embedding model mismatch: expected 'bge', found 'all-MiniLM"
    ):
        check_manifest(_manifest(), method="dense", embedding_model="bge")


def test_check_manifest_model_missing_from_manifest() -> None:
    with pytest.raises(IndexMismatchError, match="found None"):
        check_manifest(_manifest(models={}), method="dense", embedding_model="bge")


def test_check_manifest_dimension_mismatch() -> None:
    with pytest.raises(IndexMismatchError, match="expected 768, found 384"):
        check_manifest(_manifest(), method="dense", dimension=768)


def test_check_manifest_newer_format() -> None:
    with pytest.raises(IndexMismatchError, match=f"newer than supported {FORMAT_VERSION}"):
        check_manifest(_manifest(format_version=FORMAT_VERSION + 1), method="dense")
    # an older format is accepted
    m = _manifest(format_version=FORMAT_VERSION)
    assert check_manifest(m, method="dense", supported_format_version=FORMAT_VERSION + 1) is m


# -- atomic file writes --------------------------------------------------------------------
def test_atomic_writes_create_and_replace(tmp_path: Path) -> None:
    p = tmp_path / "sub" / "f.txt"
    atomic_write_text(p, "one")
    assert p.read_text(encoding="utf-8") == "one"
    atomic_write_text(p, "twö")
    assert p.read_text(encoding="utf-8") == "twö"
    atomic_write_bytes(p, b"\x00\x01")
    assert p.read_bytes() == b"\x00\x01"
    atomic_write_json(tmp_path / "d.json", {"a": [1, "é"]})
    assert json.loads((tmp_path / "d.json").read_text(encoding="utf-8")) == {"a": [1, "é"]}
    # no temporary files are left behind
    assert sorted(x.name for x in tmp_path.rglob("*")) == ["d.json", "f.txt", "sub"]


def test_atomic_write_json_failure_keeps_old_file(tmp_path: Path) -> None:
    p = tmp_path / "d.json"
    atomic_write_json(p, {"v": 1})
    with pytest.raises(TypeError):
        atomic_write_json(p, {"v": object()})
    with pytest.raises(ValueError):
        atomic_write_json(p, {"v": float("nan")})
    assert json.loads(p.read_text(encoding="utf-8")) == {"v": 1}
    assert [x.name for x in tmp_path.iterdir()] == ["d.json"]


def test_atomic_write_keeps_existing_mode(tmp_path: Path) -> None:
    p = tmp_path / "f.txt"
    p.write_text("x")
    os.chmod(p, 0o640)
    atomic_write_text(p, "y")
    assert stat.S_IMODE(p.stat().st_mode) == 0o640
    new = tmp_path / "g.txt"
    atomic_write_text(new, "z")
    # not the 0o600 of a raw temporary file: the usual umask-derived mode
    assert stat.S_IMODE(new.stat().st_mode) & 0o044 == 0o666 & ~_umask() & 0o044


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# -- atomic directories --------------------------------------------------------------------
def test_atomic_directory_creates(tmp_path: Path) -> None:
    target = tmp_path / "index"
    with atomic_directory(target) as tmp:
        assert tmp.parent == tmp_path
        assert tmp != target
        assert not target.exists()
        (tmp / "a.txt").write_text("a")
    assert (target / "a.txt").read_text() == "a"
    assert [x.name for x in tmp_path.iterdir()] == ["index"]


def test_atomic_directory_replaces_old_contents(tmp_path: Path) -> None:
    target = tmp_path / "index"
    target.mkdir()
    write_manifest(target, _manifest())  # an index (of no recorded files) may be replaced
    (target / "old.txt").write_text("old")
    with atomic_directory(target) as tmp:
        (tmp / "new.txt").write_text("new")
        assert (target / "old.txt").exists()  # untouched until the block succeeds
    assert sorted(x.name for x in target.iterdir()) == ["new.txt"]
    assert [x.name for x in tmp_path.iterdir()] == ["index"]


def test_atomic_directory_keeps_old_contents_on_error(tmp_path: Path) -> None:
    target = tmp_path / "index"
    target.mkdir()
    write_manifest(target, _manifest())
    (target / "old.txt").write_text("old")
    with pytest.raises(RuntimeError, match="boom"), atomic_directory(target) as tmp:
        (tmp / "new.txt").write_text("partial")
        raise RuntimeError("boom")
    assert sorted(x.name for x in target.iterdir()) == ["manifest.json", "old.txt"]
    assert (target / "old.txt").read_text() == "old"
    assert [x.name for x in tmp_path.iterdir()] == ["index"]


def test_atomic_directory_error_without_previous(tmp_path: Path) -> None:
    target = tmp_path / "index"
    with pytest.raises(KeyError), atomic_directory(target):
        raise KeyError("x")
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []


def test_atomic_directory_rejects_file(tmp_path: Path) -> None:
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(NotADirectoryError, match="not a directory"), atomic_directory(f):
        pass
    assert f.read_text() == "x"


def test_atomic_directory_with_manifest(tmp_path: Path) -> None:
    target = tmp_path / "idx"
    with atomic_directory(target) as tmp:
        write_manifest(tmp, _manifest())
    assert read_manifest(target).method == "dense"


def test_atomic_directory_failed_swap_restores_old(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "index"
    target.mkdir()
    write_manifest(target, _manifest())
    (target / "old.txt").write_text("old")
    real_replace = os.replace
    calls: list[tuple[str, str]] = []

    def flaky_replace(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        calls.append((str(src), str(dst)))
        if len(calls) == 2:  # the move of the new directory into place
            raise OSError("disk full")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", flaky_replace)
    with pytest.raises(OSError, match="disk full"), atomic_directory(target) as tmp:
        (tmp / "new.txt").write_text("new")
    monkeypatch.undo()
    assert len(calls) == 3  # aside, (failed) swap in, back
    assert sorted(x.name for x in target.iterdir()) == ["manifest.json", "old.txt"]
    assert [x.name for x in tmp_path.iterdir()] == ["index"]


def test_check_manifest_refuses_a_layout_older_than_the_loader_reads() -> None:
    old = Manifest(method="clue", format_version=1)
    with pytest.raises(IndexMismatchError, match=r"format version 1 predates .* \(2\); rebuild"):
        check_manifest(old, method="clue", supported_format_version=2, oldest_format_version=2)
    assert check_manifest(old, method="clue", supported_format_version=2) is old


# -- index identity (issue 20) -----------------------------------------------------------------
def _write_index(target: Path, index_id: str, data: str, **options: object) -> None:
    with atomic_directory(target, **options) as tmp:  # type: ignore[arg-type]
        (tmp / "data.txt").write_text(data)
        write_manifest(tmp, _manifest(index_id=index_id))


def test_manifest_records_index_id_and_timings(tmp_path: Path) -> None:
    m = _manifest(index_id="a" * 32, timings={"total": 1.5, "graph": float("nan")})
    write_manifest(tmp_path, m)
    data = json.loads((tmp_path / MANIFEST_NAME).read_text(encoding="utf-8"))
    assert data["index_id"] == "a" * 32
    assert data["timings"] == {"total": 1.5}  # an unknown (nan) timing is not written
    back = read_manifest(tmp_path)
    assert (back.index_id, back.timings) == ("a" * 32, {"total": 1.5})


@pytest.mark.parametrize(
    ("data", "message"),
    [({"index_id": 3}, "'index_id' must be a string"), ({"timings": {"x": "1"}}, "'timings'")],
)
def test_manifest_refuses_a_bad_index_id_or_timings(
    tmp_path: Path, data: dict[str, object], message: str
) -> None:
    (tmp_path / MANIFEST_NAME).write_text(json.dumps({**_manifest().to_dict(), **data}))
    with pytest.raises(IndexMismatchError, match=re.escape(message)):
        read_manifest(tmp_path)


def test_atomic_directory_refuses_another_index_of_the_same_method(tmp_path: Path) -> None:
    target = tmp_path / "index"
    _write_index(target, "a" * 32, "A")
    refused = pytest.raises(IndexExistsError)  # before the block runs
    with refused as error, atomic_directory(target, method="dense", index_id="b" * 32):
        pytest.fail("the block ran")
    message = str(error.value)
    assert str(target) in message and "pass overwrite=True" in message and "\n" not in message
    with pytest.raises(IndexExistsError, match="another index"):  # id read from the manifest
        _write_index(target, "b" * 32, "B")
    assert (target / "data.txt").read_text() == "A"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index"]
    _write_index(target, "a" * 32, "A2")  # the same index: replaced
    assert (target / "data.txt").read_text() == "A2"
    _write_index(target, "b" * 32, "B", overwrite=True)
    assert read_manifest(target).index_id == "b" * 32


def test_atomic_directory_treats_an_index_without_id_as_another_index(tmp_path: Path) -> None:
    target = tmp_path / "index"
    _write_index(target, "", "old")  # written before index ids existed
    with pytest.raises(IndexExistsError, match="without an index id"):
        _write_index(target, "a" * 32, "new")
    assert (target / "data.txt").read_text() == "old"
    _write_index(target, "", "anonymous")  # a writer without an id: no identity check
    _write_index(target, "a" * 32, "new", overwrite=True)
    assert (target / "data.txt").read_text() == "new"
