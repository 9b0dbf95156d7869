"""KG-Translator per-question records: reading them and the recall / latency tables.

``benchmarks/bench_kgt_records.py run`` writes one JSON line per question (after a header
line ``{"header": true, ...}`` describing the run): the gold passage ids, KG-Translator's
traced ranking ``kgt`` (``[passage id, score, directions of the clues that traced it]``, all
traced passages, no top-up), the ``dense`` and ``bm25`` rankings of the same corpus
(:data:`DEPTH` deep), ``wall_s`` / ``cpu_s`` of the KG-Translator query, ``reverse_ran``
and the load average ``load1``. From those, :func:`summarise_records` computes for the same
questions every mode the product offers without re-running the translator:

* ``kgt paper (traced only)`` - the traced top-k (fewer when fewer are traced: the paper's
  Ctx);
* ``kgt top-up`` - the traced top-k filled up to k with the nearest untraced passages of the
  dense ranking (``top_up=True``);
* ``forward-only`` - the same two with only passages traced by a forward clue
  (``reverse="never"``);
* ``kgt+dense RRF`` - reciprocal-rank fusion of the traced and dense rankings
  (``fusion="rrf"``).

Records are read from ``.jsonl`` or gzip-compressed ``.jsonl.gz`` files alike (the committed
ones in ``benchmarks/results/kgt/`` are compressed).

Examples
--------
>>> record = {"qid": "q1", "gold": ["p2", "p9"], "kgt": [["p2", 0.9, ["forward"]]],
...           "dense": ["p1", "p9", "p2"], "bm25": ["p9"], "wall_s": 1.0, "cpu_s": 1.5,
...           "reverse_ran": False, "load1": 2.0}
>>> summary = summarise_records([record])
>>> summary["table"]["kgt top-up"]
{'R@2': 50.0, 'R@5': 100.0}
>>> summary["table"]["kgt paper (traced only)"]
{'R@2': 50.0, 'R@5': 50.0, 'Ctx': 1}
"""

from __future__ import annotations

import gzip
import json
import statistics
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "DEPTH",
    "format_table",
    "percentile",
    "read_jsonl",
    "read_records",
    "recall",
    "record_ids",
    "rrf",
    "rrf_grid",
    "summarise_records",
    "top_up",
]

#: Dense / BM25 ranking depth kept per question (top-up and fusion need more than k).
DEPTH = 50

Record = dict[str, Any]


def read_jsonl(path: str | Path) -> list[Record]:
    """The JSON objects of a JSON-lines file, gzip-compressed when its name ends in ``.gz``.

    Parameters
    ----------
    path
        A ``.jsonl`` or ``.jsonl.gz`` file; blank lines are skipped.

    Returns
    -------
    list[dict]
        One object per line, in file order.

    Raises
    ------
    ValueError
        A line that is not a JSON object (the message names the file and line).

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "r.jsonl.gz").write_bytes(gzip.compress(b'{"qid": "q1"}\\n\\n'))
    >>> read_jsonl(folder / "r.jsonl.gz")
    [{'qid': 'q1'}]
    """
    path = Path(path)
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    rows: list[Record] = []
    for number, line in enumerate(data.decode("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{number}: not JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise ValueError(f"{path}:{number}: not a JSON object")
        rows.append(row)
    return rows


def read_records(paths: Iterable[str | Path]) -> tuple[list[Record], list[Record]]:
    """The run headers and the question records of record files, in order.

    Parameters
    ----------
    paths
        Files written by ``bench_kgt_records.py run`` (``.jsonl`` or ``.jsonl.gz``).

    Returns
    -------
    tuple[list[dict], list[dict]]
        ``(headers, records)``: the lines with ``"header": true``, then all others.
    """
    headers: list[Record] = []
    records: list[Record] = []
    for path in paths:
        for row in read_jsonl(path):
            (headers if row.get("header") else records).append(row)
    return headers, records


def record_ids(path: str | Path) -> set[str]:
    """The question ids (``qid``) of a record file (headers have none).

    Parameters
    ----------
    path
        A ``.jsonl`` or ``.jsonl.gz`` record file.

    Returns
    -------
    set[str]
        Every ``qid`` in it.
    """
    return {row["qid"] for row in read_jsonl(path) if "qid" in row}


def recall(ids: Sequence[str], gold: Sequence[str], k: int) -> float:
    """Share of the gold passages among the first ``k`` ids (HippoRAG's recall@k).

    Examples
    --------
    >>> recall(["a", "b", "c"], ["c", "d"], 2), recall(["a", "b", "c"], ["c", "d"], 3)
    (0.0, 0.5)
    """
    return len(set(ids[:k]) & set(gold)) / len(set(gold))


def top_up(traced: Sequence[str], dense: Sequence[str], k: int) -> list[str]:
    """The traced top-``k``, filled up to ``k`` with the best untraced ids of ``dense``.

    Examples
    --------
    >>> top_up(["p3"], ["p1", "p3", "p2"], 3)
    ['p3', 'p1', 'p2']
    """
    head = list(traced[:k])
    return head + [p for p in dense if p not in head][: k - len(head)]


def rrf(
    traced: Sequence[str], dense: Sequence[str], fusion_k: float, weight: float = 1.0
) -> list[str]:
    """Reciprocal-rank fusion: ids by ``weight / (fusion_k + traced rank) + 1 / (fusion_k +
    dense rank)``, best first, ties by id (what ``fusion="rrf"`` returns with the records'
    dense depth as ``fusion_depth``).

    Examples
    --------
    >>> rrf(["a", "b"], ["b", "c"], fusion_k=1.0)
    ['b', 'a', 'c']
    """
    score: dict[str, float] = {}
    for rank, pid in enumerate(traced, 1):
        score[pid] = weight / (fusion_k + rank)
    for rank, pid in enumerate(dense, 1):
        score[pid] = score.get(pid, 0.0) + 1.0 / (fusion_k + rank)
    return sorted(score, key=lambda p: (-score[p], p))


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (linear interpolation), rounded to 2 decimals.

    Examples
    --------
    >>> percentile([1.0, 2.0, 3.0, 10.0], 50)
    2.5
    """
    import numpy as np

    return round(float(np.percentile(values, q)), 2)


def _mean_recall(
    rankings: Sequence[Sequence[str]], golds: Sequence[Sequence[str]], k: int
) -> float:
    """Mean recall@k in percent, rounded to 1 decimal."""
    return round(
        100 * statistics.mean(recall(i, g, k) for i, g in zip(rankings, golds, strict=True)), 1
    )


def summarise_records(
    records: Sequence[Mapping[str, Any]],
    headers: Sequence[Mapping[str, Any]] = (),
    *,
    fusion_k: float = 60.0,
    fusion_weight: float = 1.0,
) -> dict[str, Any]:
    """Recall of every mode and the KG-Translator latency over the same questions.

    Parameters
    ----------
    records
        Question records (:func:`read_records`).
    headers
        Their run headers, copied into ``runs`` (without the ``header`` flag).
    fusion_k, fusion_weight
        The RRF constant and the weight of the traced ranking (:func:`rrf`).

    Returns
    -------
    dict
        ``questions``, ``runs``, ``table`` (by mode: ``R@2``, ``R@5`` in percent, and ``Ctx``
        - mean passages returned - for the two traced-only modes), ``kgt_wall_p50_p95_s``,
        ``kgt_cpu_p50_p95_s``, ``reverse_ran`` and ``no_passage_traced`` (question counts)
        and ``mean_load1``.

    Raises
    ------
    ValueError
        No records.
    """
    if not records:
        raise ValueError("no records")
    rows: dict[str, list[list[str]]] = {}
    for r in records:
        traced = [pid for pid, _, _ in r["kgt"]]
        forward = [pid for pid, _, dirs in r["kgt"] if "forward" in dirs]
        variants = {
            "dense": r["dense"],
            "bm25": r["bm25"],
            "kgt paper (traced only)": traced,
            "kgt top-up": top_up(traced, r["dense"], 5),
            "forward-only paper": forward,
            "forward-only top-up": top_up(forward, r["dense"], 5),
            f"kgt+dense RRF (k={fusion_k:g}, w={fusion_weight:g})": rrf(
                traced, r["dense"], fusion_k, fusion_weight
            ),
        }
        for name, ids in variants.items():
            rows.setdefault(name, []).append(ids)
    golds = [r["gold"] for r in records]
    table: dict[str, dict[str, float]] = {
        name: {"R@2": _mean_recall(rankings, golds, 2), "R@5": _mean_recall(rankings, golds, 5)}
        for name, rankings in rows.items()
    }
    ctx = [len(r["kgt"]) for r in records]
    fctx = [sum("forward" in d for _, _, d in r["kgt"]) for r in records]
    table["kgt paper (traced only)"]["Ctx"] = round(statistics.mean(ctx), 2)
    table["forward-only paper"]["Ctx"] = round(statistics.mean(fctx), 2)
    walls = [r["wall_s"] for r in records]
    cpus = [r["cpu_s"] for r in records]
    return {
        "questions": len(records),
        "runs": [{k: v for k, v in h.items() if k != "header"} for h in headers],
        "table": table,
        "kgt_wall_p50_p95_s": [percentile(walls, 50), percentile(walls, 95)],
        "kgt_cpu_p50_p95_s": [percentile(cpus, 50), percentile(cpus, 95)],
        "reverse_ran": sum(r["reverse_ran"] for r in records),
        "no_passage_traced": sum(not r["kgt"] for r in records),
        "mean_load1": round(statistics.mean(r["load1"] for r in records), 1),
    }


def format_table(table: Mapping[str, Mapping[str, float]]) -> str:
    """The ``table`` of :func:`summarise_records` as fixed-width text (mode, R@2, R@5, Ctx).

    Examples
    --------
    >>> print(format_table({"kgt paper": {"R@2": 50.0, "R@5": 75.0, "Ctx": 2.5}}))
    variant                             R@2    R@5    Ctx
    kgt paper                          50.0   75.0    2.5
    """
    lines = [f"{'variant':32s} {'R@2':>6s} {'R@5':>6s} {'Ctx':>6s}"]
    for name, m in table.items():
        lines.append(f"{name:32s} {m['R@2']:6.1f} {m['R@5']:6.1f} {m.get('Ctx', ''):>6}")
    return "\n".join(lines)


def rrf_grid(
    records: Sequence[Mapping[str, Any]],
    fusion_ks: Sequence[float] = (5.0, 20.0, 60.0),
    weights: Sequence[float] = (0.25, 0.5, 1.0, 2.0),
) -> dict[tuple[float, float], float]:
    """Mean R@5 (percent, unrounded) of :func:`rrf` for every ``(fusion_k, weight)`` pair.

    Examples
    --------
    >>> record = {"gold": ["b"], "kgt": [["a", 1.0, ["forward"]]], "dense": ["b"]}
    >>> rrf_grid([record], fusion_ks=[5.0], weights=[1.0])
    {(5.0, 1.0): 100.0}
    """
    return {
        (fk, w): 100
        * statistics.mean(
            recall(rrf([p for p, _, _ in r["kgt"]], r["dense"], fk, w), r["gold"], 5)
            for r in records
        )
        for fk in fusion_ks
        for w in weights
    }
