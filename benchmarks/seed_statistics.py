"""Summaries of runs repeated over training seeds: mean / sd / range and paired differences.

A *row* is the result of one run (one training seed): a possibly nested mapping of figures,
e.g. ``{"seed": 42, "best_epoch": 7, "test": {"AnsR@50": 61.0, "Hit@1": 40.5}}``. Nested
mappings are flattened to dotted names (``"test.AnsR@50"``); only numbers are summarised
(booleans, strings and lists are ignored). ``benchmarks/bench_reg_supervision.py --seeds``
prints these summaries for the ReG supervisions (weak, refined, oracle).

Examples
--------
>>> rows = [{"seed": 1, "test": {"R": 40.0}}, {"seed": 2, "test": {"R": 50.0}}]
>>> seed_summary(rows)["test.R"]["mean"]
45.0
>>> print(seed_table({"weak": seed_summary(rows)}, ["test.R"]))
| supervision | R |
|---|---|
| weak | 45.0 ± 7.1 [40.0, 50.0] |
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["numeric_leaves", "paired_differences", "seed_summary", "seed_table"]

#: The summary of one figure: ``mean``, sample ``sd`` (0 for one row), ``min``, ``max``, ``n``.
Summary = dict[str, float]


def numeric_leaves(row: Mapping[str, Any], prefix: str = "") -> dict[str, float]:
    """The numeric leaves of ``row``, nested mappings flattened to ``"outer.inner"``.

    Parameters
    ----------
    row
        One run's figures (nested mappings allowed).
    prefix
        Prepended to every name (used by the recursion).

    Returns
    -------
    dict[str, float]
        Every int or float leaf (not ``bool``) as a float, by its dotted name.

    Examples
    --------
    >>> numeric_leaves({"seed": 3, "ok": True, "test": {"Hit@1": 2, "ids": [1, 2]}})
    {'seed': 3.0, 'test.Hit@1': 2.0}
    """
    out: dict[str, float] = {}
    for key, value in row.items():
        if isinstance(value, Mapping):
            out.update(numeric_leaves(value, f"{prefix}{key}."))
        elif isinstance(value, int | float) and not isinstance(value, bool):
            out[f"{prefix}{key}"] = float(value)
    return out


def seed_summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, Summary]:
    """Mean, sample sd, min and max of every numeric figure the ``rows`` all have.

    Parameters
    ----------
    rows
        The per-seed results of one configuration.

    Returns
    -------
    dict[str, dict[str, float]]
        By flattened name (:func:`numeric_leaves`): ``{"mean", "sd", "min", "max", "n"}``;
        ``sd`` is the sample standard deviation, 0 for a single row. A figure missing from
        one row is left out; no rows give ``{}``.

    Examples
    --------
    >>> seed_summary([{"test": {"AnsR@50": 40.0}}, {"test": {"AnsR@50": 50.0}}])
    {'test.AnsR@50': {'mean': 45.0, 'sd': 7.0710678118654755, 'min': 40.0, 'max': 50.0, 'n': 2.0}}
    >>> seed_summary([])
    {}
    """
    flat = [numeric_leaves(r) for r in rows]
    keys = [k for k in flat[0] if all(k in f for f in flat)] if flat else []
    out: dict[str, Summary] = {}
    for key in keys:
        values = [f[key] for f in flat]
        out[key] = {
            "mean": statistics.fmean(values),
            "sd": statistics.stdev(values) if len(values) > 1 else 0.0,
            "min": min(values),
            "max": max(values),
            "n": float(len(values)),
        }
    return out


def paired_differences(
    rows: Sequence[Mapping[str, Any]],
    reference: Sequence[Mapping[str, Any]],
    keys: Sequence[str],
) -> dict[str, Summary]:
    """Per-seed differences ``rows - reference`` of ``keys``, summarised like
    :func:`seed_summary`.

    Runs are paired by their ``"seed"`` (same initialisation and data order), so the
    seed-to-seed variance both share cancels; a row whose seed the reference lacks is
    skipped.

    Parameters
    ----------
    rows, reference
        Per-seed results of two configurations; every row has a ``"seed"``.
    keys
        Flattened figure names (``"test.AnsR@50"``) to compare.

    Returns
    -------
    dict[str, dict[str, float]]
        The summary of the differences, by name.

    Raises
    ------
    KeyError
        A row without ``"seed"``, or a paired row without one of ``keys``.

    Examples
    --------
    >>> weak = [{"seed": 1, "R": 50.0}, {"seed": 2, "R": 40.0}]
    >>> refined = [{"seed": 2, "R": 45.0}, {"seed": 1, "R": 48.0}, {"seed": 9, "R": 0.0}]
    >>> d = paired_differences(refined, weak, ["R"])["R"]
    >>> d["mean"], d["min"], d["max"], d["n"]
    (1.5, -2.0, 5.0, 2.0)
    """
    by_seed = {r["seed"]: numeric_leaves(r) for r in reference}
    diffs = [
        {k: numeric_leaves(r)[k] - by_seed[r["seed"]][k] for k in keys}
        for r in rows
        if r["seed"] in by_seed
    ]
    return seed_summary(diffs)


def seed_table(runs: Mapping[str, Mapping[str, Summary]], metrics: Sequence[str]) -> str:
    """A markdown table, one row per run: ``mean ± sd [min, max]`` of each metric.

    Parameters
    ----------
    runs
        Summaries (:func:`seed_summary` or :func:`paired_differences`) by run name.
    metrics
        Flattened names; the column header is the part after the first dot. A metric a run
        lacks is shown as ``-``.

    Returns
    -------
    str
        The table (header, separator and one line per run), without a final newline.

    Examples
    --------
    >>> summary = {"test.Hit@1": {"mean": 2.0, "sd": 0.5, "min": 1.5, "max": 2.5, "n": 2.0}}
    >>> print(seed_table({"oracle": summary}, ["test.Hit@1", "test.AnsR@50"]))
    | supervision | Hit@1 | AnsR@50 |
    |---|---|---|
    | oracle | 2.0 ± 0.5 [1.5, 2.5] | - |
    """
    head = ["supervision", *(m.split(".", 1)[-1] for m in metrics)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, summary in runs.items():
        cells = [
            f"{s['mean']:.1f} ± {s['sd']:.1f} [{s['min']:.1f}, {s['max']:.1f}]"
            if (s := summary.get(m))
            else "-"
            for m in metrics
        ]
        lines.append("| " + " | ".join([name, *cells]) + " |")
    return "\n".join(lines)
