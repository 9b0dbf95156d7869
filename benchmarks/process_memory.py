"""Memory and disk figures the benchmarks report: current and peak RSS, a folder's size, and
the JSON line of a stage run in a fresh interpreter (so its RSS starts from nothing).

Examples
--------
>>> current_rss_mib() > 0 and peak_rss_mib() >= current_rss_mib() * 0.5
True
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections.abc import Mapping, Sequence
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
