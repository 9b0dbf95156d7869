"""The scale corpus generator (benchmarks/scale_corpus.py): determinism and the prefix property."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from benchmarks.scale_corpus import originals, rename_capitalized, scale_rows, write_jsonl

ROWS = [
    ("Ada Lovelace", "Ada Lovelace worked with Charles Babbage in London."),
    ("Charles Babbage", "Charles Babbage designed the Analytical Engine in London."),
    ("London", "London is the capital of England."),
]


def _corpus(tmp_path: Path) -> Path:
    for name, rows in (("hotpotqa-100", ROWS[:2]), ("musique-100", ROWS[1:]), ("2wiki-corpus", [])):
        (tmp_path / name).mkdir()
        entries = [{"title": t, "text": x} for t, x in rows]
        (tmp_path / name / "corpus.json").write_text(json.dumps(entries), encoding="utf-8")
    return tmp_path


def test_originals_are_deduplicated_in_source_order(tmp_path: Path) -> None:
    assert originals(_corpus(tmp_path)) == ROWS


def test_the_file_is_deterministic_and_smaller_corpora_are_prefixes(tmp_path: Path) -> None:
    rows = originals(_corpus(tmp_path))
    n7, sha7 = write_jsonl(scale_rows(rows, 7, seed=3), tmp_path / "a.jsonl")
    again = write_jsonl(scale_rows(rows, 7, seed=3), tmp_path / "b.jsonl")
    n4, _ = write_jsonl(scale_rows(rows, 4, seed=3), tmp_path / "c.jsonl")
    assert (n7, n4) == (7, 4) and again == (7, sha7)
    big = (tmp_path / "a.jsonl").read_text(encoding="utf-8").splitlines()
    small = (tmp_path / "c.jsonl").read_text(encoding="utf-8").splitlines()
    assert small == big[:4]
    other_seed = write_jsonl(scale_rows(rows, 7, seed=4), tmp_path / "d.jsonl")[1]
    assert other_seed != sha7


def test_copy_zero_is_the_originals_and_copies_rename_consistently(tmp_path: Path) -> None:
    out = list(scale_rows(ROWS, 9, seed=0))
    assert [c for c, _, _ in out] == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    assert [(t, x) for _, t, x in out[:3]] == ROWS
    copy1 = out[3:6]
    texts = " ".join(f"{t} {x}" for _, t, x in copy1)
    assert not {"Ada", "Lovelace", "Babbage", "London", "England"} & set(
        texts.replace(".", "").split()
    )
    london = rename_capitalized("London", 1, 0)
    assert copy1[2][1] == london and copy1[0][2].endswith(f"in {london}.")
    assert "worked with" in copy1[0][2] and "is the capital of" in copy1[2][2]
    assert out[6:] != copy1 and rename_capitalized("London", 2, 0) != london


def test_rows_without_names_cannot_fill_a_larger_corpus() -> None:
    with pytest.raises(ValueError, match="no names"):
        list(scale_rows([("x", "only lower case words.")], 3))
