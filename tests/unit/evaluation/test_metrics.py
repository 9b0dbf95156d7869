"""Metrics against hand-computed values."""

from __future__ import annotations

import math

import pytest

from graphrag_integrations.evaluation.metrics import (
    answer_recall_at_k,
    answer_set_f1,
    exact_match,
    f1_score,
    hit,
    hit_at_1,
    latency_percentiles,
    macro_f1,
    mean_percent,
    mean_recall_at_k,
    normalize_answer,
    recall_at_k,
)


def test_recall_at_k_counts_gold_in_top_k() -> None:
    retrieved = ["p3", "p1", "p9", "p2"]
    gold = ["p1", "p2", "p7"]
    assert recall_at_k(retrieved, gold, 1) == 0.0
    assert recall_at_k(retrieved, gold, 2) == pytest.approx(1 / 3)
    assert recall_at_k(retrieved, gold, 4) == pytest.approx(2 / 3)
    assert recall_at_k(retrieved, gold, 100) == pytest.approx(2 / 3)


def test_recall_duplicates_counted_once() -> None:
    assert recall_at_k(["a", "a", "b"], ["a", "a", "b"], 2) == 0.5


def test_recall_rejects_empty_gold_and_bad_k() -> None:
    with pytest.raises(ValueError, match="without gold"):
        recall_at_k(["a"], [], 1)
    with pytest.raises(ValueError, match="k must be"):
        recall_at_k(["a"], ["a"], 0)


def test_mean_recall_is_percentage_and_excludes_no_gold() -> None:
    runs = [
        (["a", "b", "c"], ["a", "c"]),  # R@2 = 1/2
        (["x", "y", "z"], ["z"]),  # R@2 = 0
        (["q", "r"], []),  # excluded
        (["m", "n"], ["n", "m"]),  # R@2 = 1
    ]
    s = mean_recall_at_k(runs, 2)
    assert s.value == pytest.approx(100 * (0.5 + 0 + 1) / 3)
    assert (s.evaluated, s.excluded) == (3, 1)


def test_mean_recall_all_excluded_is_nan() -> None:
    s = mean_recall_at_k([(["a"], [])], 5)
    assert math.isnan(s.value)
    assert s.excluded == 1


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("The Beatles", "beatles"),
        ("  A  tale of   Two Cities. ", "tale of two cities"),
        ("U.S.A.", "usa"),
        ("an apple, the pear", "apple pear"),
        ("Theatre", "theatre"),
    ],
)
def test_normalize_answer(raw: str, expected: str) -> None:
    assert normalize_answer(raw) == expected


def test_exact_match_best_over_aliases() -> None:
    assert exact_match("Stanley Hall", ["G. Stanley Hall", "Stanley Hall"]) == 1.0
    assert exact_match("Hall", ["G. Stanley Hall", "Stanley Hall"]) == 0.0


def test_f1_hand_computed() -> None:
    # pred tokens: [stanley, hall, university]; gold [g, stanley, hall]: common 2
    # P = 2/3, R = 2/3 -> F1 = 2/3; alias "Stanley Hall": P = 2/3, R = 1 -> 0.8 (best)
    assert f1_score("Stanley Hall University", ["G. Stanley Hall"]) == pytest.approx(2 / 3)
    assert f1_score("Stanley Hall University", ["G. Stanley Hall", "Stanley Hall"]) == (
        pytest.approx(0.8)
    )
    assert f1_score("Paris", ["London"]) == 0.0
    assert f1_score("the", ["a"]) == 1.0  # both normalise to empty
    assert f1_score("the", ["London"]) == 0.0


def test_f1_counts_repeated_tokens_with_multiplicity() -> None:
    # pred [new, new, york]; gold [new, york]: common = min counts -> 2; P=2/3, R=1 -> 0.8
    assert f1_score("new new york", ["New York"]) == pytest.approx(0.8)


def test_kgqa_answer_metrics() -> None:
    pred = ["Kismet", "Other", "The Hunchback", "Third"]
    gold = ["kismet", "Hunchback", "Missing"]
    assert answer_recall_at_k(pred, gold, 1) == pytest.approx(1 / 3)
    assert answer_recall_at_k(pred, gold, 3) == pytest.approx(2 / 3)
    assert hit(pred, gold) == 1.0
    assert hit_at_1(pred, gold) == 1.0
    assert hit_at_1(pred[1:], gold) == 0.0
    assert hit(["nothing"], gold) == 0.0
    with pytest.raises(ValueError):
        answer_recall_at_k(pred, [], 3)


def test_answer_set_f1_and_macro() -> None:
    # pred {p, q, x}, gold {p, q, r, s}: P = 2/3, R = 1/2 -> F1 = 4/7
    assert answer_set_f1(["p", "q", "x"], ["p", "q", "r", "s"]) == pytest.approx(4 / 7)
    assert answer_set_f1([], ["p"]) == 0.0
    assert macro_f1([(["p"], ["p"]), (["p", "q", "x"], ["p", "q", "r", "s"])]) == pytest.approx(
        100 * (1 + 4 / 7) / 2
    )
    assert math.isnan(macro_f1([]))
    assert mean_percent([1.0, 0.0, 0.0, 1.0]) == 50.0


def test_latency_percentiles_linear_interpolation() -> None:
    # 1..100 ms: p50 = 50.5, p95 = 1 + 0.95 * 99 = 95.05
    lat = latency_percentiles([i / 1000 for i in range(1, 101)])
    assert lat["latency_p50_ms"] == pytest.approx(50.5)
    assert lat["latency_p95_ms"] == pytest.approx(95.05)
    assert math.isnan(latency_percentiles([])["latency_p50_ms"])
