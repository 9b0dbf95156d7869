"""Micro-benchmarks of the constrained-decoding indexes (docs/reference/constraints.md quotes them).

Every case runs in a fresh subprocess so its memory figures are its own:

* ``trie``            - TokenTrie over entity-like entries (1-8 tokens) totalling ``--tokens``;
* ``suffix`` / ``fm`` - SubstringIndex backends over hyperrelation-like entries (8-40
  tokens), once totalling ``--tokens`` and once with ``--small-entries`` entries.

Reported per case (times are CPU time of the process, ``time.process_time``, so a busy
machine does not inflate them): build seconds, peak RSS growth during the build (MiB),
resident growth after it (MiB), and ``allowed()`` throughput on two workloads:

* ``walk``   - decoding walks: start from the empty prefix, append a random allowed token,
  stop at the terminator or after 16 tokens (the paper's relation span limit); this is what
  a logits processor does, so the FM-index prefix-interval cache is warm;
* ``random`` - random spans/prefixes of random entries (cold lookups).

Synthetic token ids follow a Zipf law over ``--vocab`` ids (like real text). Answers are
checked against brute force on a sample before timing.

Usage::

    python benchmarks/bench_constraints.py --tokens 1000000
    python benchmarks/bench_constraints.py --tokens 100000 --cases trie fm
    python benchmarks/bench_constraints.py --tokens 1000000 --cases sa
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import time
from typing import Any

import numpy as np
from process_memory import current_rss_mib as rss_mib
from process_memory import peak_rss_mib

TERM = 0
MAX_SPAN = 16


def make_entries(
    total_tokens: int, min_len: int, max_len: int, vocab: int, seed: int
) -> list[list[int]]:
    """Entries of uniform random length whose ids follow a Zipf law, ``total_tokens`` in all."""
    rng = np.random.default_rng(seed)
    lengths: list[int] = []
    while sum(lengths) < total_tokens:
        lengths.extend(rng.integers(min_len, max_len + 1, size=1024).tolist())
    cut = int(np.searchsorted(np.cumsum(lengths), total_tokens)) + 1
    lengths = lengths[:cut]
    ids = (rng.zipf(1.3, size=sum(lengths)) - 1) % (vocab - 1) + 1
    out, pos = [], 0
    for n in lengths:
        out.append(ids[pos : pos + n].tolist())
        pos += n
    return out


def trie_reference(entries: list[list[int]], prefix: tuple[int, ...]) -> list[int]:
    """Brute-force next ids of ``prefix`` over the entries (terminator where one ends)."""
    found = set()
    for entry in entries:
        if tuple(entry[: len(prefix)]) == prefix:
            found.add(entry[len(prefix)] if len(entry) > len(prefix) else TERM)
    return sorted(found)


def time_calls(fn: Any, prefixes: list[tuple[int, ...]]) -> float:
    """Mean microseconds per call of ``fn`` over ``prefixes``."""
    start = time.process_time()
    for prefix in prefixes:
        fn(prefix)
    return (time.process_time() - start) / max(len(prefixes), 1) * 1e6


def median_call_us(fn: Any, prefixes: list[tuple[int, ...]]) -> float:
    """Median microseconds of one call (timed one by one; shows the typical, not the mean)."""
    clock = time.process_time_ns
    times = []
    for prefix in prefixes:
        start = clock()
        fn(prefix)
        times.append(clock() - start)
    return float(np.median(times)) / 1e3 if times else 0.0


def walk_prefixes(allowed: Any, n_walks: int, terminator: int, seed: int) -> list[tuple[int, ...]]:
    """Prefixes visited by random decoding walks (untimed; replayed for timing)."""
    rng = np.random.default_rng(seed)
    visited: list[tuple[int, ...]] = []
    for _ in range(n_walks):
        prefix: tuple[int, ...] = ()
        while len(prefix) < MAX_SPAN:
            visited.append(prefix)
            ids = allowed(prefix)
            if len(ids) == 0:
                break
            token = int(ids[rng.integers(len(ids))])
            if token == terminator:
                break
            prefix = (*prefix, token)
    return visited


def run_case(args: argparse.Namespace) -> dict[str, Any]:
    from graphrag_integrations.core.constraints import SubstringIndex, TokenTrie
    from graphrag_integrations.core.constraints.substring import brute_force_allowed

    rng = np.random.default_rng(args.seed + 1)
    if args.case == "trie":
        entries = make_entries(args.case_tokens, 1, 8, args.vocab, args.seed)
    else:
        entries = make_entries(args.case_tokens, 8, 40, args.vocab, args.seed)
        if args.case_entries:
            entries = entries[: args.case_entries]
    n_tokens = sum(len(e) for e in entries)
    # load the libraries (and warm them up) outside the timed build
    TokenTrie([[1]], eos_token_id=TERM)
    SubstringIndex([[1]], terminator_id=TERM, backend="suffix")
    SubstringIndex([[1]], terminator_id=TERM, backend="fm")
    gc.collect()
    rss0, peak0 = rss_mib(), peak_rss_mib()
    start = time.process_time()
    index: Any
    if args.case == "trie":
        index = TokenTrie(entries, eos_token_id=TERM)
    else:
        index = SubstringIndex(entries, terminator_id=TERM, backend=args.case)
    build_s = time.process_time() - start
    gc.collect()
    result: dict[str, Any] = {
        "case": args.case,
        "entries": len(entries),
        "tokens": n_tokens,
        "build_s": round(build_s, 4),
        "peak_build_mib": round(max(peak_rss_mib() - peak0, 0.0), 1),
        "resident_mib": round(rss_mib() - rss0, 1),
    }
    if args.case == "trie":
        result["serialised_mib"] = round(index.stats.size_bytes / 2**20, 2)
        result["nodes"] = index.stats.nodes
    picks = rng.integers(len(entries), size=args.lookups)
    if args.case == "trie":
        randoms = [tuple(entries[i][: rng.integers(len(entries[i]) + 1)]) for i in picks]

        def check(prefix: tuple[int, ...]) -> list[int]:
            return trie_reference(entries, prefix)

    else:
        randoms = []
        for i in picks:
            entry = entries[i]
            a = int(rng.integers(len(entry) + 1))
            b = min(len(entry), a + int(rng.integers(MAX_SPAN + 1)))
            randoms.append(tuple(entry[a:b]))

        def check(prefix: tuple[int, ...]) -> list[int]:
            return brute_force_allowed(entries, prefix, TERM).tolist()

    for prefix in randoms[:20]:  # correctness spot check before timing
        assert index.allowed(prefix).tolist() == check(prefix), prefix
    walks = walk_prefixes(index.allowed, args.walks, TERM, args.seed + 2)
    result["us_random"] = round(time_calls(index.allowed, randoms), 2)
    result["us_random_median"] = round(median_call_us(index.allowed, randoms), 2)
    result["mean_allowed_size"] = round(float(np.mean([len(index.allowed(p)) for p in randoms])), 1)
    result["us_walk"] = round(time_calls(index.allowed, walks), 2)
    result["walk_calls"] = len(walks)
    result["lookups_per_s_random"] = round(1e6 / result["us_random"])
    return result


def bench_suffix_arrays(sizes: list[int], vocab: int, seed: int) -> None:
    """CPU ms of the two suffix-array builders on texts of the given lengths."""
    import pydivsufsort

    from graphrag_integrations.core.constraints.fm_index import suffix_array_doubling

    print(f"{'symbols':>9} {'doubling ms':>12} {'divsufsort ms':>14}")
    pydivsufsort.divsufsort(np.array([2, 1, 0], dtype=np.int32))  # load the library
    for size in sizes:
        entries = make_entries(size, 8, 40, vocab, seed)
        text = np.array([*[t for e in entries for t in e][:size], 0], dtype=np.int32)
        row = []
        for build in (suffix_array_doubling, pydivsufsort.divsufsort):
            start = time.process_time()
            build(text)
            row.append((time.process_time() - start) * 1e3)
        print(f"{len(text):>9} {row[0]:>12.2f} {row[1]:>14.2f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokens", type=int, default=1_000_000, help="large-scale size")
    parser.add_argument("--small-entries", type=int, default=100, help="small-scale entries")
    parser.add_argument("--vocab", type=int, default=50_000)
    parser.add_argument("--lookups", type=int, default=20_000, help="random lookups per case")
    parser.add_argument("--walks", type=int, default=2_000, help="decoding walks per case")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--suffix-max-tokens",
        type=int,
        default=100_000,
        help="cap the suffix trie's large case (its size is quadratic in entry length: "
        "100k tokens already peak at ~700 MiB)",
    )
    parser.add_argument(
        "--cases",
        nargs="+",
        default=["trie", "suffix", "fm"],
        choices=["trie", "suffix", "fm", "sa"],
        help="'sa' times the two suffix-array builders instead",
    )
    parser.add_argument("--json", action="store_true", help="print JSON lines only")
    # internal: run one case in this process
    parser.add_argument("--case", help=argparse.SUPPRESS)
    parser.add_argument("--case-tokens", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--case-entries", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.case:
        print(json.dumps(run_case(args)))
        return
    if "sa" in args.cases:
        bench_suffix_arrays([200, 2_000, 8_192, 20_000, args.tokens], args.vocab, args.seed)
        return
    plan: list[tuple[str, int, int]] = []
    for case in args.cases:
        if case == "trie":
            plan.append(("trie", args.tokens, 0))
            continue
        plan.append((case, args.small_entries * 40, args.small_entries))
        if case == "suffix" and args.tokens > args.suffix_max_tokens:
            print(f"# suffix trie capped at --suffix-max-tokens={args.suffix_max_tokens}")
            plan.append((case, args.suffix_max_tokens, 0))
        else:
            plan.append((case, args.tokens, 0))
    header = (
        f"{'case':7} {'entries':>8} {'tokens':>9} {'build s':>8} {'peak MiB':>9} "
        f"{'res MiB':>8} {'us/random':>10} {'median':>7} {'|allowed|':>9} {'us/walk':>8} "
        f"{'lookups/s':>10}"
    )
    if not args.json:
        print(header)
    for case, tokens, entries in plan:
        cmd = [
            sys.executable, __file__, "--case", case, "--case-tokens", str(tokens),
            "--case-entries", str(entries), "--vocab", str(args.vocab),
            "--lookups", str(args.lookups), "--walks", str(args.walks), "--seed", str(args.seed),
        ]  # fmt: skip
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        row = json.loads(out.strip().splitlines()[-1])
        if args.json:
            print(json.dumps(row))
            continue
        print(
            f"{row['case']:7} {row['entries']:>8} {row['tokens']:>9} {row['build_s']:>8.3f} "
            f"{row['peak_build_mib']:>9.1f} {row['resident_mib']:>8.1f} {row['us_random']:>10.2f} "
            f"{row['us_random_median']:>7.2f} {row['mean_allowed_size']:>9.1f} "
            f"{row['us_walk']:>8.2f} {row['lookups_per_s_random']:>10}"
        )


if __name__ == "__main__":
    from graphrag_integrations.core.threads import apply_thread_limit

    apply_thread_limit()  # 1 intra-op thread unless OMP_NUM_THREADS (docs/lab/threads.md)
    main()
