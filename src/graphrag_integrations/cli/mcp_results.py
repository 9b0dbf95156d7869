"""What a search tool of ``graphrag-integrations serve`` returns: one JSON row per passage
(:func:`passage_row`, the structured content, :data:`PASSAGE_SCHEMA`), the same passages as
text an LLM reads (:func:`render_passages`) and a one-line summary of a method's explanation
(:func:`short_explanation`).

Examples
--------
>>> from graphrag_integrations.core.types import Passage, RetrievedPassage
>>> hit = RetrievedPassage(Passage("p1", "Rome is in Italy.", "d1", {"title": "Rome"}), 2.5,
...                        {"method": "bm25"})
>>> row = passage_row(1, hit)
>>> row["id"], row["doc_id"], row["metadata"], row["explanation"]
('p1', 'd1', {'title': 'Rome'}, 'method=bm25')
>>> print(render_passages("Where is Rome?", "search_cities", [row]))
1 passage for 'Where is Rome?' (search_cities):
<BLANKLINE>
[1] Rome (score 2.5, passage p1, document d1)
Rome is in Italy.
why: method=bm25
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from graphrag_integrations.core.types import RetrievedPassage

#: Characters of :func:`short_explanation` (the rest is cut with an ellipsis).
EXPLANATION_CHARS = 240
#: Characters of one string inside an explanation summary.
_STRING_CHARS = 60
#: Entries of a nested mapping shown in an explanation summary.
_MAPPING_ITEMS = 4
#: Nesting shown in an explanation summary (deeper values become ``...``).
_DEPTH = 4

#: JSON schema of one row of :func:`passage_row`.
PASSAGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "rank": {"type": "integer", "description": "1 for the best passage"},
        "id": {"type": "string", "description": "passage id"},
        "doc_id": {"type": "string", "description": "id of the source document"},
        "score": {"type": "number", "description": "higher is better, within one result"},
        "text": {"type": "string"},
        "metadata": {
            "type": "object",
            "description": "the source document's metadata (file name, title, source...)",
        },
        "explanation": {
            "type": "string",
            "description": "why the method retrieved it (one line)",
        },
    },
    "required": ["rank", "id", "doc_id", "score", "text", "metadata", "explanation"],
}


def _brief(value: Any, depth: int = 0) -> str:
    """``value`` in a few characters: long strings cut, lists as their first item and a
    count, mappings as their first entries."""
    if depth >= _DEPTH:
        return "..."
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, str):
        text = " ".join(value.split())
        return text if len(text) <= _STRING_CHARS else text[: _STRING_CHARS - 3] + "..."
    if isinstance(value, Mapping):
        items = list(value.items())
        shown = ", ".join(f"{k}={_brief(v, depth + 1)}" for k, v in items[:_MAPPING_ITEMS])
        return "{" + shown + (", ..." if len(items) > _MAPPING_ITEMS else "") + "}"
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        more = f", +{len(value) - 1} more" if len(value) > 1 else ""
        return f"[{_brief(value[0], depth + 1)}{more}]"
    return str(value)


def short_explanation(explanation: Mapping[str, Any], limit: int = EXPLANATION_CHARS) -> str:
    """A method's explanation of one passage on one line of at most ``limit`` characters.

    Every entry is shown as ``key=value``; a list shows its first item and how many follow,
    a mapping its first entries, a long string its beginning (any method's explanation, no
    per-method code).

    Examples
    --------
    >>> short_explanation({"method": "clue", "paths": [{"entities": ["Stephen King"],
    ...                    "score": 0.8312}, {"entities": []}], "anchors": []})
    'method=clue; paths=[{entities=[Stephen King], score=0.8312}, +1 more]; anchors=[]'
    >>> len(short_explanation({"text": "word " * 100}, limit=40))
    40
    """
    text = "; ".join(f"{key}={_brief(value)}" for key, value in explanation.items())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def json_safe(value: Mapping[str, Any]) -> dict[str, Any]:
    """``value`` as plain JSON types (what is not JSON becomes its ``str``).

    Examples
    --------
    >>> from pathlib import Path
    >>> json_safe({"source": Path("a/b.txt"), "n": 3})
    {'source': 'a/b.txt', 'n': 3}
    """
    out: dict[str, Any] = json.loads(json.dumps(dict(value), default=str))
    return out


def passage_row(rank: int, hit: RetrievedPassage) -> dict[str, Any]:
    """The structured row of one retrieved passage (see :data:`PASSAGE_SCHEMA`)."""
    return {
        "rank": rank,
        "id": hit.passage.id,
        "doc_id": hit.passage.doc_id,
        "score": float(hit.score),
        "text": hit.passage.text,
        "metadata": json_safe(hit.passage.metadata),
        "explanation": short_explanation(hit.explanation),
    }


def _title(row: Mapping[str, Any]) -> str:
    meta = row["metadata"]
    for key in ("title", "file_name", "source"):
        if isinstance(meta.get(key), str) and meta[key].strip():
            return str(meta[key])
    return str(row["doc_id"])


def render_passages(query: str, tool: str, rows: Sequence[Mapping[str, Any]]) -> str:
    """The rows of a search as text for an LLM: a header line, then per passage its title,
    score and ids, its full text and the explanation."""
    if not rows:
        return f"no passage found for {query!r} ({tool})"
    count = f"{len(rows)} passage{'s' if len(rows) > 1 else ''}"
    blocks = [f"{count} for {query!r} ({tool}):"]
    for row in rows:
        head = (
            f"[{row['rank']}] {_title(row)} (score {row['score']:.4g}, passage {row['id']}, "
            f"document {row['doc_id']})"
        )
        blocks.append(f"{head}\n{row['text'].strip()}\nwhy: {row['explanation']}")
    return "\n\n".join(blocks)
