"""Plain-text result tables (what the ``eval`` command prints)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from graphrag_integrations.evaluation.harness import EvalReport

#: Method the ratio table compares against.
BASELINE = "dense"


def _fmt(value: float | None, digits: int = 1) -> str:
    if value is None or not math.isfinite(value):
        return "-"
    return f"{value:.{digits}f}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=True)]
    lines = [
        "  ".join(
            str(c).ljust(w) if i == 0 else str(c).rjust(w)
            for i, (c, w) in enumerate(zip(line, widths, strict=True))
        )
        for line in [header, *rows]
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def format_report(report: EvalReport) -> str:
    """The results table, then ratios vs the dense baseline when ``dense`` was run.

    Ratios are ``method / dense`` for every ``R@k`` and for the p50 latency.

    Examples
    --------
    >>> print(format_report(EvalReport("toy", 3, 1, (2, 5))))  # doctest: +NORMALIZE_WHITESPACE
    toy: 3 passages, 1 questions
    method  R@2  R@5  p50 ms  p95 ms  index s  passages/s
    ------  ---  ---  ------  ------  -------  ----------
    """
    rows_json = {name: r.to_json() for name, r in report.results.items()}
    rkeys = [f"R@{k}" for k in report.ks]
    extra = list(dict.fromkeys(k for r in report.results.values() for k in r.answer_metrics))
    header = ["method", *rkeys, "p50 ms", "p95 ms", "index s", "passages/s", *extra]
    rows = [
        [
            name,
            *(_fmt(row.get(key)) for key in rkeys),
            _fmt(row.get("latency_p50_ms")),
            _fmt(row.get("latency_p95_ms")),
            _fmt(row.get("index_s"), 2),
            _fmt(row.get("passages_per_s"), 0),
            *(_fmt(row.get(key)) for key in extra),
        ]
        for name, row in rows_json.items()
    ]
    title = f"{report.dataset}: {report.passages} passages, {report.questions} questions"
    if report.excluded_questions:
        title += f" ({report.excluded_questions} without gold passages, excluded from R@k)"
    out = [title, _table(header, rows)]
    base = rows_json.get(BASELINE)
    if base is not None and len(rows_json) > 1:
        ratio_header = ["vs dense", *(f"{k} ratio" for k in rkeys), "p50 ratio"]
        ratio_rows = []
        for name, row in rows_json.items():
            if name == BASELINE:
                continue
            ratio_rows.append(
                [
                    name,
                    *(_fmt(_ratio(row.get(k), base.get(k)), 2) for k in rkeys),
                    _fmt(_ratio(row.get("latency_p50_ms"), base.get("latency_p50_ms")), 2),
                ]
            )
        out += ["", _table(ratio_header, ratio_rows)]
    return "\n".join(out)


def _ratio(value: float | None, base: float | None) -> float | None:
    if value is None or base is None or not math.isfinite(value) or not base:
        return None
    return value / base
