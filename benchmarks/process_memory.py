"""Memory and disk figures the benchmarks report: current and peak RSS, a folder's size, and
the JSON line of a stage run in a fresh interpreter (so its RSS starts from nothing), with the
command line of the benchmarks that query an index per corpus size that way.

Examples
--------
>>> current_rss_mib() > 0 and peak_rss_mib() >= current_rss_mib() * 0.5
True
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

MIB = 1024 * 1024


def peak_rss_mib() -> float:
    """High-water RSS of this process in MiB.

    On Linux ``VmHWM`` of ``/proc/self/status``: the high-water mark of this program's own
    memory. (``ru_maxrss`` keeps the parent's high-water mark across ``fork`` + ``exec``, so a
    benchmark process started by a large one would report its parent's peak.) Elsewhere
    ``ru_maxrss`` (bytes on macOS).
    """
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024  # kB
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return maxrss / MIB if sys.platform == "darwin" else maxrss / 1024


def current_rss_mib() -> float:
    """Current RSS in MiB (``/proc/self/statm``; the peak as a fallback off Linux)."""
    statm = Path("/proc/self/statm")
    if statm.exists():
        pages = int(statm.read_text().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / MIB
    return peak_rss_mib()


def dir_size_mib(path: Path) -> float:
    """Total size of the files under ``path`` in MiB."""
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / MIB


def fresh_process_json(cmd: Sequence[str], env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Run ``cmd`` (a benchmark stage) in a fresh process and return the JSON object of the
    last line it prints; its stderr (progress bars, logs) passes through, since a captured
    pipe could fill and block it."""
    out = subprocess.run(
        list(cmd),
        check=True,
        stdout=subprocess.PIPE,
        text=True,
        env=None if env is None else dict(env),
    ).stdout
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


def sized_stage_parser(
    doc: str, *, sizes: int, sizes_help: str, queries: int, queries_help: str
) -> argparse.ArgumentParser:
    """The arguments of a benchmark that builds an index per corpus size and queries each in
    a fresh process: ``--data``, ``--out``, ``--sizes``, ``--queries``, and the hidden
    ``--stage query --index DIR`` of that process (see :func:`parse_sized_stage`)."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--data", type=Path, default=Path("../shared/data"), help="benchmark root")
    ap.add_argument("--out", type=Path, help="where the indexes are persisted")
    ap.add_argument("--sizes", type=int, nargs="+", default=[sizes], help=sizes_help)
    ap.add_argument("--queries", type=int, default=queries, help=queries_help)
    ap.add_argument("--stage", choices=("query",), help=argparse.SUPPRESS)
    ap.add_argument("--index", type=Path, help=argparse.SUPPRESS)
    return ap


def parse_sized_stage(
    ap: argparse.ArgumentParser, stage_query: Callable[[argparse.Namespace], dict[str, Any]]
) -> argparse.Namespace | None:
    """Parse the arguments of :func:`sized_stage_parser`; in the query process, print the JSON
    line of ``stage_query(args)`` and return ``None``; else check ``--out`` and ``--sizes``."""
    args = ap.parse_args()
    if args.stage:
        print(json.dumps(stage_query(args)), flush=True)
        return None
    if args.out is None:
        ap.error("--out is required")
    if min(args.sizes) < 1:
        ap.error("--sizes must be positive")
    return args


def query_stage_command(script: str, args: argparse.Namespace, index: Path) -> list[str]:
    """The command of ``script``'s query stage on ``index`` (the run's data and questions)."""
    return [
        *(sys.executable, script, "--stage", "query", "--index", str(index)),
        *("--data", str(args.data), "--queries", str(args.queries)),
    ]
