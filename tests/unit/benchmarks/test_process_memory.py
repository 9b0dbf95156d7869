"""The benchmarks' memory readings."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from benchmarks.process_memory import current_rss_mib, peak_rss_mib

#: What a benchmark script has on ``sys.path`` first: its own folder.
BENCHMARKS = Path(__file__).resolve().parents[3] / "benchmarks"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_child_process_reports_its_own_peak_not_its_parents() -> None:
    # ru_maxrss carries the parent's high-water mark across fork + exec; a query process
    # started by a large build process would report the build's peak
    ballast = bytearray(300 * 1024 * 1024)
    for i in range(0, len(ballast), 4096):
        ballast[i] = 1
    assert peak_rss_mib() >= 300
    code = (
        f"import sys; sys.path.insert(0, {str(BENCHMARKS)!r}); "
        "from process_memory import peak_rss_mib; print(peak_rss_mib())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    del ballast
    assert float(out.stdout) < 250


def test_peak_is_at_least_the_current_rss() -> None:
    assert peak_rss_mib() >= current_rss_mib() * 0.99


def test_fresh_process_json_reads_the_last_line_and_passes_env() -> None:
    import os
    import sys

    from benchmarks.process_memory import fresh_process_json

    code = "import json, os; print('noise'); print(json.dumps({'x': os.environ['GI_X']}))"
    env = {**os.environ, "GI_X": "7"}
    assert fresh_process_json([sys.executable, "-c", code], env) == {"x": "7"}


def test_a_sized_stage_benchmark_runs_its_query_stage_or_checks_its_driver_arguments(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from benchmarks.process_memory import (
        parse_sized_stage,
        query_stage_command,
        sized_stage_parser,
    )

    ap = sized_stage_parser("Doc.\nMore.", sizes=5, sizes_help="n", queries=3, queries_help="q")
    monkeypatch.setattr(sys, "argv", ["bench", "--stage", "query", "--index", "ix"])
    assert parse_sized_stage(ap, lambda args: {"index": str(args.index)}) is None
    assert capsys.readouterr().out == '{"index": "ix"}\n'
    monkeypatch.setattr(sys, "argv", ["bench", "--out", "o"])
    args = parse_sized_stage(ap, lambda args: {})
    assert args is not None and args.sizes == [5] and args.queries == 3
    command = query_stage_command("b.py", args, Path("ix"))
    stage = ["b.py", "--stage", "query", "--index", "ix"]
    assert command[1:] == [*stage, "--data", "../shared/data", "--queries", "3"]
    for argv in (["bench"], ["bench", "--out", "o", "--sizes", "0"]):
        monkeypatch.setattr(sys, "argv", argv)
        with pytest.raises(SystemExit):
            parse_sized_stage(ap, lambda args: {})
