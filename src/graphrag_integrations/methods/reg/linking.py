"""Anchors: the KG entities a query names (its topic entities).

``[bracketed]`` names in the query (MetaQA style) first; else every longest non-overlapping
span of the query whose lower-cased word sequence equals an entity's (spans made only of stop
words are ignored). The index falls back to the entity nearest the query embedding when
neither finds one (``RefinedSubgraphRetriever.link_entities``).

Examples
--------
>>> table = link_table(["Random Harvest", "Kismet", "The"])
>>> named_entities(["Random Harvest", "Kismet", "The"], table, "who starred in random harvest")
['Random Harvest']
>>> bracketed("films of [Bette Davis] and [Nobody]")
['Bette Davis', 'Nobody']
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["BRACKET", "MAX_SPAN_WORDS", "bracketed", "link_table", "named_entities", "words"]

BRACKET = re.compile(r"\[([^\]]+)\]")
_WORD = re.compile(r"\w+")
_STOP_WORDS = (
    "a an the of in on at to by for with from and or is are was were be what which who whom "
    "whose when where how did do does that this these those it its film films movie movies"
)
_STOP = frozenset(_STOP_WORDS.split(" "))
#: Longest entity name (in words) matched in a query.
MAX_SPAN_WORDS = 12


def words(text: str) -> list[str]:
    """Lower-cased word tokens."""
    return _WORD.findall(text.casefold())


def bracketed(query: str) -> list[str]:
    """The ``[bracketed]`` names of ``query``, stripped."""
    return [m.strip() for m in BRACKET.findall(query)]


def link_table(entities: Sequence[str]) -> dict[tuple[str, ...], list[int]]:
    """Word sequence -> rows of the entities with that name (names of 1 to
    :data:`MAX_SPAN_WORDS` words)."""
    table: dict[tuple[str, ...], list[int]] = {}
    for row, name in enumerate(entities):
        key = tuple(words(name))
        if 0 < len(key) <= MAX_SPAN_WORDS:
            table.setdefault(key, []).append(row)
    return table


def named_entities(
    entities: Sequence[str], table: dict[tuple[str, ...], list[int]], query: str
) -> list[str]:
    """The entities whose names are longest non-overlapping, not-only-stop-word spans of
    ``query``, in query order (each once)."""
    tokens = words(query)
    rows: list[int] = []
    i = 0
    while i < len(tokens):
        for n in range(min(MAX_SPAN_WORDS, len(tokens) - i), 0, -1):
            span = tuple(tokens[i : i + n])
            if span in table and not all(w in _STOP for w in span):
                rows += table[span]
                i += n
                break
        else:
            i += 1
    return [entities[r] for r in dict.fromkeys(rows)]
