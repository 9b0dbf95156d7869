"""The commands on a persisted index: ``query`` (print the top passages) and ``show`` (an
HTML picture of the subgraph behind them)."""

from __future__ import annotations

import argparse
import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphrag_integrations.cli.graph_stores import OPTION as GRAPH_STORE
from graphrag_integrations.cli.graph_stores import takes_graph_store
from graphrag_integrations.cli.options import _accepts, filter_option, query_options
from graphrag_integrations.errors import GraphRAGError

if TYPE_CHECKING:
    from graphrag_integrations.core.persistence import Manifest

logger = logging.getLogger(__name__)


def _read_manifest(path: Path) -> Manifest:
    """The manifest of the index in ``path`` (validated; the index's ``load`` verifies the
    checksums of its files)."""
    from graphrag_integrations.core.persistence import read_manifest

    return read_manifest(path, verify=False)


def _load_index(
    path: Path, embedding: str | None, options: Sequence[str] = (), graph_store: str | None = None
) -> tuple[Any, Any, Manifest]:
    """Load the index in ``path`` with its registered class (and the manifest's embedder):
    ``(index, retriever, manifest)``, the retriever ``index.as_retriever(**options)`` (the
    options validated first; without options it is the index itself). ``graph_store``: where
    the index's graph is now (``--graph-store``; ``None``: where the index says).

    Raises
    ------
    GraphRAGError
        Query options for an index class without ``as_retriever`` (one outside the API
        contract), or a graph store for a method without a graph, before anything is loaded.
    """
    from graphrag_integrations.evaluation.registry import get_registration

    manifest = _read_manifest(path)
    reg = get_registration(manifest.method)
    overrides = query_options(reg, options)  # before the (slow) load
    cls = reg.resolve_index_class()
    if overrides and not callable(getattr(cls, "as_retriever", None)):
        raise GraphRAGError(f"{cls.__name__} has no as_retriever: it cannot take query options")
    kwargs: dict[str, Any] = {}
    if graph_store is not None:
        if not takes_graph_store(reg):
            raise GraphRAGError(f"--graph-store: a {reg.name} index keeps no graph")
        kwargs[GRAPH_STORE] = graph_store
    if _accepts(cls, "embedding"):
        kwargs["embedding"] = embedding or manifest.embedding_model
    index = cls.load(path, **kwargs)
    return index, (index.as_retriever(**overrides) if overrides else index), manifest


def cmd_query(args: argparse.Namespace) -> int:
    """Load the index in ``--index`` and print the top ``-k`` passages for the question (of
    the passages ``--filter`` allows)."""
    from graphrag_integrations.core.validation import check_k

    k = None if args.k is None else check_k(args.k)  # before loading anything
    where = filter_option(args.filter)
    _, retriever, _ = _load_index(args.index, args.embedding, args.option, args.graph_store)
    results = retriever.retrieve(args.question, k=k, filter=where)
    if args.json:
        rows = [
            {"rank": i, "score": r.score, "text": r.text, **r.to_metadata()}
            for i, r in enumerate(results, 1)
        ]
        print(json.dumps(rows, indent=2))
        return 0
    for i, r in enumerate(results, 1):
        title = r.passage.metadata.get("title") or r.passage.doc_id
        print(f"[{i}] score={r.score:.4f}  {title}  (passage {r.passage.id})")
        print("    " + " ".join(r.text.split())[:300])
        print(f"    explanation: {json.dumps(dict(r.explanation), default=str)}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    """Write the HTML picture of ``question`` on ``--index`` and open it unless ``--no-open``."""
    import hashlib
    import webbrowser

    from graphrag_integrations.core.validation import check_k, check_query
    from graphrag_integrations.evaluation.show import render_html, retrieval_subgraph

    k = None if args.k is None else check_k(args.k)
    question = check_query(args.question)
    where = filter_option(args.filter)
    out = args.out or Path(f"show-{hashlib.sha256(question.encode()).hexdigest()[:8]}.html")
    if out.is_dir():
        raise GraphRAGError(f"--out {out} is a folder: pass an .html file name")
    index, retriever, manifest = _load_index(
        args.index, args.embedding, args.option, args.graph_store
    )
    results = retriever.retrieve(question, k=k, filter=where)
    explain = getattr(index, "explanation_scores", None)  # node scores, where a method has them
    graph = retrieval_subgraph(question, results, explain(question, results) if explain else None)
    info = {"index": args.index, "method": manifest.method, "k": k or len(results)}
    if args.filter is not None:
        info["filter"] = args.filter
    page = render_html(question, results, graph=graph, index_info=info)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page, encoding="utf-8")
    print(f"wrote {out} ({len(results)} passages)")
    if not args.no_open:
        try:
            opened = webbrowser.open(out.resolve().as_uri())
        except Exception as exc:  # a broken browser setup must not fail the command
            logger.warning("could not open a browser: %s", exc)
            opened = False
        if not opened:
            print(f"no browser opened; open {out} yourself")
    return 0
