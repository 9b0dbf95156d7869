"""The multi-seed summaries of ``benchmarks/seed_statistics.py`` (``bench_reg_supervision.py``)."""

from __future__ import annotations

import pytest
from benchmarks.seed_statistics import (
    numeric_leaves,
    paired_differences,
    seed_summary,
    seed_table,
)


def _row(seed: int, ansr: float, hit: float) -> dict[str, object]:
    return {"seed": seed, "best_epoch": 3, "test": {"AnsR@50": ansr, "Hit@1": hit}}


def test_seed_summary_mean_sd_min_max() -> None:
    summary = seed_summary([_row(1, 40.0, 2.0), _row(2, 50.0, 4.0), _row(3, 60.0, 6.0)])
    assert summary["test.AnsR@50"] == {"mean": 50.0, "sd": 10.0, "min": 40.0, "max": 60.0, "n": 3}
    assert summary["seed"]["mean"] == 2.0
    assert seed_summary([_row(1, 40.0, 2.0)])["test.Hit@1"]["sd"] == 0.0


def test_only_figures_every_row_has_are_summarised() -> None:
    rows = [{"seed": 1, "test": {"R": 1.0, "extra": 5.0}}, {"seed": 2, "test": {"R": 3.0}}]
    assert sorted(seed_summary(rows)) == ["seed", "test.R"]
    assert numeric_leaves({"flag": True, "name": "x", "ids": [1], "a": {"b": {"c": 2}}}) == {
        "a.b.c": 2.0
    }


def test_paired_differences_match_seeds() -> None:
    weak = [_row(1, 50.0, 2.0), _row(2, 40.0, 2.0)]
    refined = [_row(2, 45.0, 3.0), _row(1, 48.0, 2.0), _row(9, 0.0, 0.0)]  # seed 9: no pair
    diff = paired_differences(refined, weak, ["test.AnsR@50"])
    assert diff["test.AnsR@50"]["mean"] == pytest.approx(1.5)  # (+5 and -2) / 2
    assert diff["test.AnsR@50"]["n"] == 2
    table = seed_table({"refined - weak": diff}, ["test.AnsR@50", "test.Hit@1"])
    assert table.splitlines()[0] == "| supervision | AnsR@50 | Hit@1 |"
    assert table.splitlines()[2] == "| refined - weak | 1.5 ± 4.9 [-2.0, 5.0] | - |"
