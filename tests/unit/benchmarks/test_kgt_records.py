"""KG-Translator record summaries (``benchmarks/kgt_records.py``), plain and gzip-compressed."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from benchmarks.kgt_records import (
    read_jsonl,
    read_records,
    record_ids,
    rrf,
    rrf_grid,
    summarise_records,
    top_up,
)

RESULTS = Path(__file__).resolve().parents[3] / "benchmarks" / "results" / "kgt"


def _record(qid: str, gold: list[str], kgt: list[list[object]], dense: list[str]) -> dict[str, Any]:
    return {
        "qid": qid,
        "gold": gold,
        "kgt": kgt,
        "dense": dense,
        "bm25": dense[::-1],
        "wall_s": 2.0,
        "cpu_s": 3.0,
        "reverse_ran": not kgt,
        "load1": 1.0,
    }


RECORDS = [
    _record("q1", ["a", "b"], [["a", 0.9, ["forward"]], ["x", 0.5, ["reverse"]]], ["b", "y"]),
    _record("q2", ["c"], [], ["z", "c"]),
]


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    text = "".join(json.dumps(r) + "\n" for r in rows)
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(text.encode(), mtime=0))
    else:
        path.write_text(text)


@pytest.mark.parametrize("name", ["r.jsonl", "r.jsonl.gz"])
def test_records_read_alike_plain_or_compressed(tmp_path: Path, name: str) -> None:
    header = {"header": True, "dataset": "toy"}
    _write(tmp_path / name, [header, *RECORDS])
    headers, records = read_records([tmp_path / name])
    assert headers == [header] and records == RECORDS
    assert record_ids(tmp_path / name) == {"q1", "q2"}


def test_a_broken_line_names_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "r.jsonl").write_text('{"qid": "q1"}\n{"qid": \n')
    with pytest.raises(ValueError, match=r"r\.jsonl:2: not JSON"):
        read_jsonl(tmp_path / "r.jsonl")


def test_summary_of_every_mode() -> None:
    summary = summarise_records(RECORDS, [{"header": True, "dataset": "toy"}])
    table = summary["table"]
    assert table["dense"] == {"R@2": 75.0, "R@5": 75.0}  # q1: b of a, b; q2: c
    assert table["kgt paper (traced only)"] == {"R@2": 25.0, "R@5": 25.0, "Ctx": 1}
    assert table["kgt top-up"] == {"R@2": 75.0, "R@5": 100.0}  # q1: a, x, then dense b
    assert table["forward-only paper"]["Ctx"] == 0.5
    assert summary["runs"] == [{"dataset": "toy"}]
    assert summary["reverse_ran"] == 1 and summary["no_passage_traced"] == 1
    assert summary["kgt_wall_p50_p95_s"] == [2.0, 2.0]
    with pytest.raises(ValueError, match="no records"):
        summarise_records([])


def test_fusion_and_top_up() -> None:
    assert top_up(["a", "b", "c"], ["d"], 2) == ["a", "b"]
    # a: w / 1 + 1 / 2, b: 1 / 1
    assert rrf(["a"], ["b", "a"], fusion_k=0.0, weight=0.25) == ["b", "a"]
    assert rrf(["a"], ["b", "a"], fusion_k=0.0, weight=2.0) == ["a", "b"]
    grid = rrf_grid(RECORDS, fusion_ks=[60.0], weights=[1.0, 2.0])
    assert grid == {(60.0, 1.0): 100.0, (60.0, 2.0): 100.0}


def test_committed_records_are_compressed_and_readable() -> None:
    files = sorted(RESULTS.glob("*.jsonl*"))
    assert files and all(f.name.endswith(".jsonl.gz") for f in files)
    headers, records = read_records([RESULTS / "musique-cf-bf16.jsonl.gz"])
    assert len(headers) == 1 and len(records) == 100
    table = summarise_records(records, fusion_k=5.0, fusion_weight=0.5)["table"]
    assert set(table) >= {"dense", "bm25", "kgt top-up"}
