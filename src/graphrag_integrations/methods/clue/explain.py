"""Reading a Clue retrieval's explanation: its best path as lines (:func:`describe_path`), and
scores for its picture (``graphrag-integrations show``).

A Q-Iter explanation names the query entities, the anchors and, per kept path, its entities
and knowledge units with the path score; it does not say how close each entity or unit is to
the question. :func:`explanation_scores` adds that: the cosine between the question's vector
and the stored vector of every entity and unit the explanations name (read from the index's
current graph view, so nothing is re-embedded but the question).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from graphrag_integrations.core.types import RetrievedPassage


def explanation_scores(
    index: Any, question: str, results: Sequence[RetrievedPassage]
) -> dict[str, dict[str, float]]:
    """Cosine similarity to ``question`` of the entities and units named in ``results``.

    Parameters
    ----------
    index : ClueIndex
        The index that answered (its ``graph`` and ``embedder``).
    question : str
        The query.
    results : sequence of RetrievedPassage
        Its results (Q-Iter explanations).

    Returns
    -------
    dict
        ``{"entity": {name: cosine}, "unit": {text: cosine}}``; names and texts the graph does
        not hold (deleted since) are left out.

    Examples
    --------
    >>> from graphrag_integrations.methods.clue.index import ClueIndex
    >>> from graphrag_integrations.testing.fake_embedder import FakeEmbedder
    >>> index = ClueIndex.from_documents(["Paris is the capital of France."],
    ...                                  embedding=FakeEmbedder())
    >>> hits = index.retrieve("capital of France", k=1)
    >>> scores = explanation_scores(index, "capital of France", hits)
    >>> sorted(scores), all(-1.0 <= s <= 1.0 for s in scores["unit"].values())
    (['entity', 'unit'], True)
    """
    g = index.graph
    names: dict[str, None] = {}
    units: dict[str, None] = {}
    for hit in results:
        expl: Mapping[str, Any] = hit.explanation
        names.update(dict.fromkeys(expl.get("query_entities") or []))
        names.update(dict.fromkeys(expl.get("anchors") or []))
        for path in expl.get("paths") or []:
            names.update(dict.fromkeys(path.get("entities") or []))
            units.update(dict.fromkeys(path.get("units") or []))
    vector = np.asarray(index.embedder.embed([question])[0], dtype=np.float32)
    lower = {n.lower(): row for n, row in g.entity_row.items()}
    entity: dict[str, float] = {}
    for name in names:
        row = g.entity_row.get(name, lower.get(name.lower()))
        if row is not None and g.entity_matrix.shape[0] > row:
            entity[name] = round(float(g.entity_matrix[row] @ vector), 6)
    unit_row = {u.text: i for i, u in enumerate(g.units)}
    unit: dict[str, float] = {}
    for text in units:
        row = unit_row.get(text)
        if row is not None and g.unit_matrix.shape[0] > row:
            unit[text] = round(float(g.unit_matrix[row] @ vector), 6)
    return {"entity": entity, "unit": unit}


def describe_path(explanation: Mapping[str, Any], *, width: int = 90) -> list[str]:
    """Readable lines for the best Q-Iter path in a result's explanation.

    One line per knowledge unit of the highest-scored path, with the entity that led the
    search to it (works on ``RetrievedPassage.explanation`` and on the ``explanation`` entry
    of LangChain / LlamaIndex result metadata).

    Examples
    --------
    >>> describe_path({"paths": [{"units": ["A: a b c."], "entities": ["a"]}]})
    ["- A: a b c.  <- via 'a'"]
    >>> describe_path({})
    []
    """
    paths = explanation.get("paths") or []
    if not paths:
        return []
    best = paths[0]
    return [
        f"- {unit[:width]}  <- via {entity!r}"
        for unit, entity in zip(best.get("units", []), best.get("entities", []), strict=False)
    ]
