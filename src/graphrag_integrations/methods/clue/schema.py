"""Node kinds, edge types and vector layers of the Clue-Index graph (the names only).

:mod:`~graphrag_integrations.methods.clue.store` describes the schema and re-exports the
names; they live here so that the statistics module, which ``store.add_units`` calls, can use
them too.

Examples
--------
>>> LAYERS[UNIT]
'units'
"""

from __future__ import annotations

__all__ = [
    "CHUNK",
    "CONTAINS",
    "DOCUMENT",
    "ENTITY",
    "HAS_CHUNK",
    "LAYERS",
    "MENTIONS",
    "STATS",
    "UNIT",
]

CHUNK, UNIT, ENTITY = "chunk", "unit", "entity"
CONTAINS, MENTIONS = "contains", "mentions"
#: Vector layer of each node kind.
LAYERS: dict[str, str] = {CHUNK: "chunks", UNIT: "units", ENTITY: "entities"}
#: A node per document (``has_chunk`` edges to its chunks) and the statistics node's kind.
DOCUMENT, STATS = "document", "stats"
HAS_CHUNK = "has_chunk"
