"""``--graph-store URL``: where the commands keep the graph of a graph method.

* ``index --graph-store URL`` builds the index with its graph in that FalkorDB graph, which
  must be empty unless ``--overwrite`` (then what it holds is replaced); the index folder
  (``--out``) gets a pointer to it.
* ``query`` / ``show --graph-store URL`` read the index's graph from that graph instead of
  the one its folder names (the server or the graph moved).
* ``eval --graph-store falkordb://HOST:PORT/NAME`` gives every graph method of the run a graph
  of its own on that server, named ``NAME_<method>_<dataset>`` (:func:`method_graph_name`;
  e.g. ``x_clue_hotpotqa-100``); baselines keep no graph and ignore it. ``--overwrite``
  lets a run replace what those graphs hold (a second run needs it).

A method takes it when its registration lists the object option ``graph_store`` (every graph
method does). Errors are one line: a bad URL (``InvalidArgumentError``), a server that does
not answer (``ConnectionError``), a graph that holds data (``IndexExistsError``).

Examples
--------
>>> method_graph_name("x", "clue", "hotpotqa-100")
'x_clue_hotpotqa-100'
>>> method_graph_name("runs", "reg-weak", "MetaQA 1-hop/dev")
'runs_reg-weak_MetaQA_1-hop_dev'
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import Any

from graphrag_integrations.errors import GraphRAGError

logger = logging.getLogger(__name__)

#: The object option of a registration that says where its graph lives.
OPTION = "graph_store"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]+")


def method_graph_name(graph: str, method: str, dataset: str) -> str:
    """The graph ``eval`` uses for ``method`` on ``dataset``: ``<graph>_<method>_<dataset>``
    (characters a graph name cannot hold become ``_``)."""
    return "_".join(_UNSAFE.sub("_", part).strip("_") for part in (graph, method, dataset))


def dataset_label(path: Path) -> str:
    """The dataset part of :func:`method_graph_name`: a dataset folder's name, or a questions
    file's folder and stem (``hotpotqa-100``, ``metaqa_questions``)."""
    path = Path(path)
    return f"{path.parent.name}_{path.stem}" if path.suffix else path.name


def takes_graph_store(registration: Any) -> bool:
    """Whether a method registration takes ``graph_store`` (a graph method)."""
    return OPTION in getattr(registration, "objects", {})


def check_single(options: Mapping[str, Any], where: str) -> None:
    """Refuse ``--graph-store`` together with ``--option [METHOD.]graph_store=...``."""
    if OPTION in options:
        raise GraphRAGError(f"--graph-store and --option {where}{OPTION} both set the graph store")


def index_graph_store(url: str, *, overwrite: bool) -> Any:
    """The backend class ``index --graph-store URL`` builds with (URL checked now)."""
    from graphrag_integrations.core.graph.backends import resolve_graph_backend

    return resolve_graph_backend(url, overwrite=overwrite)


def eval_graph_stores(
    url: str,
    registrations: Sequence[Any],
    dataset: Path,
    options: MutableMapping[str, dict[str, Any]],
    *,
    overwrite: bool,
) -> dict[str, str]:
    """Set ``options[method]["graph_store"]`` of every graph method to its own graph on the
    server of ``url`` (:func:`method_graph_name`); returns ``{method: graph URL}`` (without
    the password). Baselines are left alone; none taking it is logged.

    Raises
    ------
    InvalidArgumentError
        What ``graph_store=`` refuses (one line).
    GraphRAGError
        A method also given ``--option METHOD.graph_store``.
    """
    from graphrag_integrations.core.graph.backends import is_in_process, resolve_graph_backend
    from graphrag_integrations.core.graph.falkordb_connection import parse_falkordb_url

    if is_in_process(resolve_graph_backend(url)):  # "networkx": the default, nothing to route
        return {}
    from graphrag_integrations.core.graph.falkordb_graph import FalkorDBGraph

    location = parse_falkordb_url(url)
    label = dataset_label(dataset)
    used: dict[str, str] = {}
    for reg in registrations:
        if not takes_graph_store(reg):
            continue
        check_single(options.get(reg.name, {}), f"{reg.name}.")
        where = location.with_graph(method_graph_name(location.graph, reg.name, label))
        options.setdefault(reg.name, {})[OPTION] = FalkorDBGraph.at(where, overwrite=overwrite)
        used[reg.name] = where.url
    if not used:
        logger.warning("--graph-store: no method of this run keeps a graph (baselines only)")
    for name, graph in used.items():
        logger.info("%s keeps its graph in %s", name, graph)
    return used
