"""The argument parser of the ``graphrag-integrations`` command (:func:`build_parser`), its
argument types and ``--version`` (:func:`version_text`)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def _int_list(value: str) -> list[int]:
    try:
        ks = [int(x) for x in value.split(",") if x.strip()]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers, got {value!r}"
        ) from exc
    if not ks or min(ks) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers, got {value!r}")
    return ks


def _methods(value: str) -> list[str]:
    names = [x.strip() for x in value.split(",") if x.strip()]
    if not names:
        raise argparse.ArgumentTypeError("no method given")
    return list(dict.fromkeys(names))


def _positive_int(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {value!r}")
    return n


def version_text() -> str:
    """``--version``: the package version, then torch's and transformers' (read from their
    installed metadata: nothing is imported).

    Examples
    --------
    >>> version_text().splitlines()[0].startswith("graphrag-integrations ")
    True
    """
    from importlib.metadata import PackageNotFoundError, version

    from graphrag_integrations import __version__

    libs = []
    for dist in ("torch", "transformers"):
        try:
            libs.append(f"{dist} {version(dist)}")
        except PackageNotFoundError:
            libs.append(f"{dist} (not installed)")
    return f"graphrag-integrations {__version__}\n{', '.join(libs)}"


class _VersionAction(argparse.Action):
    """``--version``: print :func:`version_text` (two lines) and exit."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        print(version_text())
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``graphrag-integrations`` command."""
    parser = argparse.ArgumentParser(
        prog="graphrag-integrations",
        description="Graph-RAG retrievers: build indexes, query them, evaluate methods.",
    )
    parser.add_argument("--version", action=_VersionAction, help="print the versions and exit")
    chatter = parser.add_mutually_exclusive_group()
    chatter.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="log at INFO level; show the model libraries' progress bars and warnings",
    )
    chatter.add_argument(
        "-q", "--quiet", action="store_true", help="log errors only; no progress bars"
    )
    parser.add_argument(
        "--threads",
        type=_positive_int,
        metavar="N",
        help="intra-op threads of torch and BLAS (default: OMP_NUM_THREADS if set, else the "
        "cores the load average leaves free, at least 1)",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    ev = sub.add_parser("eval", help="evaluate methods on a benchmark dataset")
    ev.add_argument("--method", required=True, type=_methods, help="comma-separated methods")
    ev.add_argument("--dataset", required=True, type=Path, help="dataset folder or questions file")
    ev.add_argument("--queries", type=Path, help="questions file replacing the dataset's")
    ev.add_argument("--distractors", type=Path, help="corpus appended as distractors")
    ev.add_argument("--limit", type=int, help="evaluate only the first N questions")
    ev.add_argument(
        "--hops",
        type=int,
        help="MetaQA: hop set, or hop count of --queries (default: its N-hop folder)",
    )
    ev.add_argument("--json", type=Path, help="write the JSON summary here")
    ev.add_argument("--k", type=_int_list, help="recall depths (default 2,5; LiHuaWorld: 5,10)")
    ev.add_argument("--embedding", help="embedding model name or path (default all-MiniLM-L6-v2)")
    _add_option(
        ev,
        "METHOD.KEY=VALUE",
        "method option, e.g. hybrid.fusion=rrf (repeatable; see the methods command)",
    )
    _add_graph_store(ev, "GRAPH_<method>_<dataset> of that server for each graph method")
    ev.add_argument(
        "--overwrite",
        action="store_true",
        help="with --graph-store: replace what the method graphs hold (a run refuses a graph "
        "that holds data otherwise)",
    )
    ev.add_argument("--no-progress", action="store_true", help="no progress bars")
    ev.add_argument(  # LiHuaWorld only (evaluation.lihuaworld_run)
        "--chunking", help="LiHuaWorld chunking SIZE/OVERLAP in tokens (default 1200/100)"
    )
    ev.add_argument("--answer-llm", help="LiHuaWorld QA: answer LLM (model name or path)")
    ev.add_argument("--judge", help="LiHuaWorld QA: judge LLM (model name or path)")

    me = sub.add_parser("methods", help="list the methods, or one method's options")
    me.add_argument("name", nargs="?", help="a method: print its options")

    ix = sub.add_parser("index", help="build and persist a method's index")
    ix.add_argument("--method", required=True)
    ix.add_argument(
        "--input", required=True, nargs="+", type=Path, help="files, folders or dataset folders"
    )
    ix.add_argument("--out", required=True, type=Path, help="index directory to write")
    ix.add_argument("--embedding", help="embedding model name or path")
    _add_option(
        ix,
        "KEY=VALUE",
        "index-time option or named object of the method, e.g. alpha=0 (repeatable)",
    )
    ix.add_argument(
        "--overwrite",
        action="store_true",
        help="write into a non-empty folder that holds no index, or over an existing index "
        "(files the index did not write are kept); with --graph-store, replace what the "
        "graph holds",
    )
    _add_graph_store(ix, "this graph (it must be empty, or --overwrite)")
    ix.add_argument(
        "--checkpoint",
        type=Path,
        metavar="DIR",
        help="build in batches saved to DIR; re-run the same command to resume after a kill",
    )
    ix.add_argument(
        "--checkpoint-every",
        type=int,
        metavar="N",
        help="documents per checkpointed batch (default 500; needs --checkpoint)",
    )
    ix.add_argument("--no-progress", action="store_true", help="no progress bars")
    ix.add_argument(
        "--executor",
        choices=("local", "ray"),
        default="local",
        help="who runs the per-passage work: this process (default) or Ray workers "
        "(RAY_ADDRESS names a cluster; else a local Ray is started)",
    )
    ix.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="Ray workers (default: the cluster's CPUs; needs --executor ray)",
    )

    tr = sub.add_parser("train", help="train a method's learned component and save it")
    tr.add_argument("--method", required=True)
    tr.add_argument("--dataset", required=True, type=Path, help="training data (file or folder)")
    tr.add_argument("--out", required=True, type=Path, help="directory to write the model to")
    _add_option(
        tr,
        "KEY=VALUE",
        "training option of the method (repeatable; see `methods NAME`)",
    )
    tr.add_argument("--no-progress", action="store_true", help="no progress bars")

    qu = sub.add_parser("query", help="query a persisted index")
    qu.add_argument("--index", required=True, type=Path, help="index directory")
    qu.add_argument("question", help="the query text")
    qu.add_argument("-k", type=int, help="number of passages, >= 1 (default: the index's own k)")
    qu.add_argument("--embedding", help="embedding model (default: the one in the manifest)")
    _add_query_option(qu)
    _add_filter(qu)
    _add_graph_store(qu, "this graph instead of the one the index names (it moved)")
    qu.add_argument("--json", action="store_true", help="print results as JSON")

    sh = sub.add_parser(
        "show", help="write an HTML picture of the subgraph behind a query's top passages"
    )
    sh.add_argument("--index", required=True, type=Path, help="index directory")
    sh.add_argument("question", help="the query text")
    sh.add_argument("--out", type=Path, help="HTML file to write (default: ./show-<hash>.html)")
    sh.add_argument(
        "-k", "--k", type=int, help="number of passages, >= 1 (default: the index's own k)"
    )
    sh.add_argument("--embedding", help="embedding model (default: the one in the manifest)")
    _add_query_option(sh)
    _add_filter(sh)
    _add_graph_store(sh, "this graph instead of the one the index names (it moved)")
    sh.add_argument("--no-open", action="store_true", help="do not open a browser")
    _add_serve(sub)
    return parser


def _add_serve(sub: Any) -> None:
    se = sub.add_parser(
        "serve",
        help="serve persisted indexes as MCP tools (stdio, or streamable HTTP with --http)",
    )
    se.add_argument(
        "--index",
        required=True,
        action="append",
        type=Path,
        metavar="DIR",
        help="index directory (repeatable: one search tool per index)",
    )
    se.add_argument(
        "--name",
        action="append",
        help="search tool name, once per --index (default: search_<folder name>)",
    )
    se.add_argument(
        "--description",
        action="append",
        help="search tool description, once per --index (default: from the corpus and method)",
    )
    se.add_argument("--embedding", help="embedding model (default: the one in the manifest)")
    _add_query_option(se)
    se.add_argument(
        "--filter",
        metavar="JSON",
        help="metadata filter ANDed with every call's (LangChain dict form; a caller cannot "
        'widen it), e.g. \'{"tenant": "acme"}\'',
    )
    se.add_argument(
        "--allow-writes",
        action="store_true",
        help="add <name>_insert and <name>_delete tools that change and persist the index",
    )
    se.add_argument(
        "--max-k",
        type=int,
        default=50,
        metavar="N",
        help="largest k a call may ask for (default 50)",
    )
    se.add_argument(
        "--http", action="store_true", help="serve streamable HTTP at /mcp instead of stdio"
    )
    se.add_argument("--host", help="with --http: address to bind (default 127.0.0.1)")
    se.add_argument("--port", type=int, help="with --http: port (default 8000; 0: a free one)")
    se.add_argument(
        "--token",
        help="with --http: bearer token every request must carry (default: "
        "$GRAPHRAG_INTEGRATIONS_MCP_TOKEN; required on a non-loopback --host)",
    )


def _add_query_option(parser: argparse.ArgumentParser) -> None:
    _add_option(
        parser,
        "[METHOD.]KEY=VALUE",
        "query-time option of the index's method, e.g. h=2 or kgt.fusion=rrf "
        "(repeatable; see `methods NAME`)",
    )


def _add_filter(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--filter",
        metavar="JSON",
        help="metadata filter in LangChain's dict language, e.g. "
        '\'{"tenant": "A", "year": {"$gte": 2020}}\': the query answers as if the index held '
        "only the matching passages",
    )


def _add_option(parser: argparse.ArgumentParser, metavar: str, help: str) -> None:
    """The repeatable ``--option`` of a command (a list, empty by default)."""
    parser.add_argument("--option", action="append", default=[], metavar=metavar, help=help)


def _add_graph_store(parser: argparse.ArgumentParser, where: str) -> None:
    parser.add_argument(
        "--graph-store",
        metavar="URL",
        help="keep the graph of a graph method in FalkorDB: falkordb://[USER[:PASSWORD]@]HOST"
        f"[:PORT]/GRAPH uses {where} (the password may come from FALKORDB_PASSWORD; "
        "default: in the process)",
    )
