"""A picture of one retrieval: the subgraph that led to the top passages, as one HTML page.

:func:`retrieval_subgraph` turns a query's results into a layered graph read from their
explanations (every method's results carry one, JSON-serialisable):

Clue-RAG (``paths`` of ``entities`` / ``units``, ``query_entities``, ``anchors``)
    question -> query entities -> anchor / path entities -> knowledge units -> chunks: the
    question links its spaCy (or LLM) entities; each step of a kept Q-Iter path links the
    anchor entity that led to a unit and the unit to the next entity of the path; the last
    unit links the chunk. Paths carry their Q-Iter score, chunks their final score.
any other method
    question -> evidence -> passages: every list in an explanation (QCG's generated
    ``queries``, KGT's ``clues``, ReG's ``triples`` and ``anchors``...) gives one evidence node
    per item, with its score when the item or a parallel ``<name>_scores`` list holds one;
    scalar entries are shown with the passage. An explanation with no list links the question
    to the passage directly.

:func:`render_html` lays it out as a deterministic layered SVG (one column per layer, nodes in
order of first appearance) in a self-contained page: inline CSS, SVG and a few lines of
JavaScript (hovering a node highlights its edges), no external resource, so it works offline
and can be mailed as one file. ``graphrag-integrations show`` writes it for a persisted index.

Examples
--------
>>> from graphrag_integrations.core.types import Passage, RetrievedPassage
>>> hit = RetrievedPassage(
...     Passage("p1", "Paris is the capital of France.", "d1"),
...     0.9,
...     {"method": "clue", "query_entities": ["France"], "anchors": ["France"],
...      "paths": [{"depth": 1, "score": 0.8, "entities": ["France"],
...                 "units": ["Paris is the capital of France."]}]},
... )
>>> graph = retrieval_subgraph("capital of France?", [hit])
>>> [(n.layer, n.kind) for n in graph.nodes]  # doctest: +NORMALIZE_WHITESPACE
[('question', ''), ('passage', 'rank 1'), ('entity', 'query entity, anchor, path entity'),
 ('unit', '')]
>>> page = render_html("capital of France?", [hit], graph=graph)
>>> "<svg" in page and "0.9000" in page and "http" not in page
True
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from graphrag_integrations.core.types import RetrievedPassage

#: Layers, left to right (a graph uses those it has).
LAYERS = ("question", "entity", "unit", "evidence", "passage")
_LAYER_TITLES = {
    "question": "question",
    "entity": "entities (query / anchors)",
    "unit": "knowledge units",
    "evidence": "evidence",
    "passage": "top passages",
}
_NODE_W, _NODE_H, _COL_GAP, _ROW_GAP, _TOP = 230, 38, 90, 14, 40
_LABEL_CHARS = 34


@dataclass
class Node:
    """One node of the picture: ``layer`` (one of :data:`LAYERS`), label, details."""

    id: str
    layer: str
    label: str
    score: float | None = None
    kind: str = ""  # e.g. "query entity", "anchor", "path entity"
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class Edge:
    """A directed edge, optionally labelled (e.g. a path score)."""

    source: str
    target: str
    label: str = ""


@dataclass
class Subgraph:
    """The nodes and edges of one retrieval, in order of first appearance."""

    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)

    def node(self, node_id: str, layer: str, label: str, **extra: Any) -> Node:
        """The node ``node_id``, added if new (a later call may fill its score, add a kind)."""
        for n in self.nodes:
            if n.id == node_id:
                kind = extra.pop("kind", "")
                if kind and kind not in n.kind.split(", "):
                    n.kind = f"{n.kind}, {kind}" if n.kind else kind
                for key, value in extra.items():
                    if getattr(n, key) in (None, {}):
                        setattr(n, key, value)
                return n
        made = Node(node_id, layer, label, **extra)
        self.nodes.append(made)
        return made

    def edge(self, source: str, target: str, label: str = "") -> None:
        """Add an edge once (same ends: the first label is kept)."""
        if source != target and not any(
            e.source == source and e.target == target for e in self.edges
        ):
            self.edges.append(Edge(source, target, label))


def _is_clue(explanation: Mapping[str, Any]) -> bool:
    paths = explanation.get("paths")
    return isinstance(paths, list) and all(
        isinstance(p, Mapping) and "units" in p and "entities" in p for p in paths
    )


def _item_label(item: Any) -> str:
    if isinstance(item, str):
        return item
    if isinstance(item, Sequence):
        return " | ".join(str(x) for x in item)
    if isinstance(item, Mapping):
        for key in ("query", "text", "clue", "triple", "name"):
            if key in item:
                return _item_label(item[key])
    return json.dumps(item, default=str, sort_keys=True)


def _item_score(item: Any, parallel: Any, i: int) -> float | None:
    if isinstance(item, Mapping):
        for key in ("score", "s"):
            if isinstance(item.get(key), (int, float)):
                return float(item[key])
    if isinstance(parallel, list) and i < len(parallel) and isinstance(parallel[i], (int, float)):
        return float(parallel[i])
    return None


def _add_clue(graph: Subgraph, passage_id: str, explanation: Mapping[str, Any]) -> None:
    for name in explanation.get("query_entities") or []:
        graph.node(f"e:{name.lower()}", "entity", name, kind="query entity")
        graph.edge("q", f"e:{name.lower()}")
    for name in explanation.get("anchors") or []:
        graph.node(f"e:{name.lower()}", "entity", name, kind="anchor")
    for path in explanation.get("paths") or []:
        score = path.get("score")
        label = f"path {score:.3f}" if isinstance(score, (int, float)) else ""
        prev: str | None = None
        for entity, unit in zip(path["entities"], path["units"], strict=False):
            e_id, u_id = f"e:{entity.lower()}", f"u:{unit}"
            graph.node(e_id, "entity", entity, kind="path entity")
            graph.node(u_id, "unit", unit, score=float(score) if label else None)
            if prev is not None:
                graph.edge(prev, e_id)
            graph.edge(e_id, u_id, label)
            prev = u_id
        if prev is not None:
            graph.edge(prev, passage_id, label)


def _add_generic(graph: Subgraph, passage_id: str, explanation: Mapping[str, Any]) -> bool:
    linked = False
    for key, value in explanation.items():
        if not isinstance(value, list) or not value or key.endswith("_scores"):
            continue
        parallel = explanation.get(f"{key.rstrip('s')}_scores")
        for i, item in enumerate(value):
            label = _item_label(item)
            node = graph.node(
                f"x:{key}:{label}",
                "evidence",
                label,
                score=_item_score(item, parallel, i),
                kind=key,
                details=dict(item) if isinstance(item, Mapping) else {},
            )
            graph.edge("q", node.id)
            graph.edge(node.id, passage_id)
            linked = True
    return linked


def retrieval_subgraph(
    question: str,
    results: Sequence[RetrievedPassage],
    scores: Mapping[str, Mapping[str, float]] | None = None,
) -> Subgraph:
    """The layered subgraph that led to ``results`` (see the module notes).

    Parameters
    ----------
    question : str
        The query.
    results : sequence of RetrievedPassage
        What the index returned, best first.
    scores : mapping, optional
        Node scores by layer and label, e.g. ``{"entity": {name: cosine}, "unit": {text:
        cosine}}`` (what an index's ``explanation_scores(question, results)`` returns, e.g.
        :meth:`~graphrag_integrations.methods.clue.index.ClueIndex.explanation_scores`); they
        replace the path score shown on units.

    Returns
    -------
    Subgraph
    """
    graph = Subgraph()
    graph.node("q", "question", question)
    for rank, hit in enumerate(results, 1):
        pid = f"p:{hit.passage.id}"
        scalars = {k: v for k, v in hit.explanation.items() if not isinstance(v, (list, dict))}
        graph.node(
            pid,
            "passage",
            hit.text,
            score=float(hit.score),
            kind=f"rank {rank}",
            details={"passage id": hit.passage.id, "doc id": hit.passage.doc_id, **scalars},
        )
        if _is_clue(hit.explanation):
            _add_clue(graph, pid, hit.explanation)
            if not hit.explanation.get("paths"):
                graph.edge("q", pid, "filled by score")
        elif not _add_generic(graph, pid, hit.explanation):
            graph.edge("q", pid, f"{hit.score:.3f}")
    for n in graph.nodes:
        value = (scores or {}).get(n.layer, {}).get(n.label)
        if value is not None:
            n.score = float(value)
    return graph


def _layout(graph: Subgraph) -> tuple[dict[str, tuple[int, int]], list[str], int, int]:
    layers = [name for name in LAYERS if any(n.layer == name for n in graph.nodes)]
    pos: dict[str, tuple[int, int]] = {}
    rows = 0
    for col, layer in enumerate(layers):
        members = [n for n in graph.nodes if n.layer == layer]
        for row, n in enumerate(members):
            pos[n.id] = (col * (_NODE_W + _COL_GAP) + 10, _TOP + row * (_NODE_H + _ROW_GAP))
        rows = max(rows, len(members))
    width = len(layers) * (_NODE_W + _COL_GAP)
    height = _TOP + rows * (_NODE_H + _ROW_GAP) + 10
    return pos, layers, width, height


def _short(text: str, n: int = _LABEL_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= n else flat[: n - 1] + "\u2026"


def _svg(graph: Subgraph) -> str:
    pos, layers, width, height = _layout(graph)
    esc = html.escape
    out = [f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img">']
    out.append(
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#889"/></marker></defs>'
    )
    for col, layer in enumerate(layers):
        x = col * (_NODE_W + _COL_GAP) + 10
        out.append(f'<text class="layer" x="{x}" y="20">{esc(_LAYER_TITLES[layer])}</text>')
    for i, e in enumerate(graph.edges):
        (x1, y1), (x2, y2) = pos[e.source], pos[e.target]
        sx, sy = x1 + _NODE_W, y1 + _NODE_H // 2
        tx, ty = x2, y2 + _NODE_H // 2
        if tx <= sx:  # a backward edge (unit -> next entity): loop below the nodes
            sx, tx = x1 + _NODE_W // 2, x2 + _NODE_W // 2
            sy, ty = y1 + _NODE_H, y2 + _NODE_H
            mid = max(sy, ty) + 30
            d = f"M{sx},{sy} C{sx},{mid} {tx},{mid} {tx},{ty}"
        else:
            c = (sx + tx) // 2
            d = f"M{sx},{sy} C{c},{sy} {c},{ty} {tx},{ty}"
        out.append(
            f'<path class="edge" id="edge{i}" data-src="{esc(e.source)}" '
            f'data-dst="{esc(e.target)}" d="{d}" marker-end="url(#arrow)">'
            f"<title>{esc(e.label)}</title></path>"
        )
    for n in graph.nodes:
        x, y = pos[n.id]
        score = f" {n.score:.4f}" if n.score is not None else ""
        tip = f"{n.kind + ': ' if n.kind else ''}{n.label}{score}"
        kinds = " ".join(k.replace(" ", "-") for k in n.kind.split(", ") if k)
        cls = f"node {n.layer} {kinds}".strip()
        out.append(f'<g class="{esc(cls)}" data-id="{esc(n.id)}"><title>{esc(tip)}</title>')
        out.append(f'<rect x="{x}" y="{y}" width="{_NODE_W}" height="{_NODE_H}" rx="6"/>')
        out.append(f'<text x="{x + 8}" y="{y + 16}">{esc(_short(n.label))}</text>')
        sub = " ".join(p for p in (n.kind, score.strip()) if p)
        out.append(f'<text class="sub" x="{x + 8}" y="{y + 31}">{esc(sub)}</text></g>')
    out.append("</svg>")
    return "\n".join(out)


_CSS = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.3em; } h2 { font-size: 1.1em; margin-top: 1.5em; }
.graph { overflow: auto; border: 1px solid #ddd; padding: 6px; }
svg text { font-size: 12px; fill: #222; } svg text.sub { font-size: 10px; fill: #666; }
svg text.layer { font-weight: bold; fill: #555; }
.node rect { fill: #f4f6fb; stroke: #99a; }
.node.question rect { fill: #ffe9c7; } .node.entity rect { fill: #e3f1ff; }
.node.query-entity rect { stroke: #1a5fb4; stroke-width: 2; }
.node.unit rect { fill: #eaf7e6; } .node.evidence rect { fill: #f3e8fb; }
.node.passage rect { fill: #fff4f4; stroke: #b44; }
.edge { fill: none; stroke: #aab; stroke-width: 1.3; }
.edge.hot { stroke: #d33; stroke-width: 2.5; } .node.hot rect { stroke: #d33; stroke-width: 2.5; }
table { border-collapse: collapse; margin-top: .5em; }
td, th { border: 1px solid #ddd; padding: 4px 8px; vertical-align: top; font-size: .9em; }
pre { white-space: pre-wrap; font-size: .8em; background: #f8f8f8; padding: 6px; }
"""

_JS = """
document.querySelectorAll('.node').forEach(function (g) {
  var id = g.getAttribute('data-id');
  g.addEventListener('mouseenter', function () {
    g.classList.add('hot');
    document.querySelectorAll('.edge').forEach(function (e) {
      if (e.getAttribute('data-src') === id || e.getAttribute('data-dst') === id) {
        e.classList.add('hot');
      }
    });
  });
  g.addEventListener('mouseleave', function () {
    document.querySelectorAll('.hot').forEach(function (e) { e.classList.remove('hot'); });
  });
});
"""


def render_html(
    question: str,
    results: Sequence[RetrievedPassage],
    *,
    graph: Subgraph | None = None,
    title: str = "graphrag-integrations: retrieval",
    index_info: Mapping[str, Any] | None = None,
) -> str:
    """A self-contained HTML page of one retrieval (no external resource; see the module).

    Parameters
    ----------
    question : str
        The query.
    results : sequence of RetrievedPassage
        The top passages, best first.
    graph : Subgraph, optional
        Default :func:`retrieval_subgraph` of the results.
    title : str
        Page title.
    index_info : mapping, optional
        Shown above the picture (e.g. the index path and method).

    Returns
    -------
    str
        The page.
    """
    esc = html.escape
    graph = graph or retrieval_subgraph(question, results)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{esc(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{esc(title)}</h1>",
        f'<p><b>Question:</b> <span class="question">{esc(question)}</span></p>',
    ]
    if index_info:
        info = ", ".join(f"{esc(str(k))}: {esc(str(v))}" for k, v in index_info.items())
        parts.append(f"<p>{info}</p>")
    parts.append(
        '<div class="graph">' + _svg(graph) + "</div><p><small>Hover a node to highlight its "
        "edges; hover an edge for its label.</small></p>"
    )
    parts.append(
        "<h2>Top passages</h2><table><tr><th>rank</th><th>score</th><th>passage</th>"
        "<th>explanation</th></tr>"
    )
    for rank, hit in enumerate(results, 1):
        expl = json.dumps(dict(hit.explanation), indent=1, default=str, ensure_ascii=False)
        parts.append(
            f'<tr class="passage"><td>{rank}</td><td class="score">{hit.score:.4f}</td>'
            f"<td><b>{esc(str(hit.passage.metadata.get('title') or hit.passage.doc_id))}</b>"
            f"<br>{esc(hit.text)}</td><td><pre>{esc(expl)}</pre></td></tr>"
        )
    parts.append("</table>")
    paths = [
        (rank, path)
        for rank, hit in enumerate(results, 1)
        if _is_clue(hit.explanation)
        for path in hit.explanation.get("paths") or []
    ]
    if paths:
        parts.append(
            "<h2>Q-Iter paths</h2><table><tr><th>passage rank</th><th>depth</th><th>path score"
            "</th><th>entity &rarr; knowledge unit, per step</th></tr>"
        )
        for rank, path in paths:
            steps = "<br>".join(
                f"<b>{esc(str(e))}</b> &rarr; {esc(str(u))}"
                for e, u in zip(path["entities"], path["units"], strict=False)
            )
            score = path.get("score")
            shown = f"{score:.4f}" if isinstance(score, (int, float)) else ""
            parts.append(
                f'<tr class="path"><td>{rank}</td><td>{esc(str(path.get("depth", "")))}</td>'
                f'<td class="path-score">{shown}</td><td>{steps}</td></tr>'
            )
        parts.append("</table>")
    entities = [n for n in graph.nodes if n.layer == "entity"]
    if entities:
        parts.append("<h2>Entities</h2><table><tr><th>entity</th><th>role</th></tr>")
        parts.extend(
            f'<tr class="entity"><td>{esc(n.label)}</td><td>{esc(n.kind)}</td></tr>'
            for n in entities
        )
        parts.append("</table>")
    parts.append(f"<script>{_JS}</script></body></html>")
    return "\n".join(parts) + "\n"
