"""Term search: which nodes hold a word, answered by a graph database's full-text index.

A method that keeps, on some nodes, an attribute holding their words (tokens separated by
single spaces: :func:`term_text`) can ask a backend with :class:`TermSearch` for every node
whose attribute holds a given word, without reading the nodes. FalkorDB answers it with its
full-text index (:class:`~graphrag_integrations.core.graph.falkordb_graph.FalkorDBGraph`, created
with no stop words, so no word is left out); the in-process networkx ``GraphStore`` has no
such index (a method reading it has every node in memory anyway).

The contract a caller relies on: :meth:`TermSearch.nodes_with_term` returns **every** node
whose attribute holds the word, for a :func:`searchable` word (it may return more: the
database's stemming also matches a word's variants, so a caller re-checks what it reads).
Words longer than :data:`MAX_TERM_BYTES` are not searchable (the full-text index truncates
them), so a caller must treat them as unknown.

Examples
--------
>>> term_text(["the", "cat", "the", "hat"])
'the cat hat'
>>> searchable("cat"), searchable("a" * 200), searchable("two words")
(True, False, False)
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Protocol, runtime_checkable

__all__ = ["MAX_TERM_BYTES", "TermSearch", "searchable", "term_search", "term_text"]

#: Longest word (UTF-8 bytes) a term search answers exactly; FalkorDB's index cuts at 128.
MAX_TERM_BYTES = 64

_WORD = re.compile(r"\w+")


@runtime_checkable
class TermSearch(Protocol):
    """A graph backend that finds nodes by a word of one of their attributes."""

    def has_term_index(self, attr: str) -> bool:
        """Whether attribute ``attr`` is indexed (see :meth:`index_terms`)."""
        ...

    def index_terms(self, attr: str) -> None:
        """Index the words of attribute ``attr`` of every node that has it, now and later."""
        ...

    def nodes_without(self, attr: str, type: str) -> list[str]:
        """Ids of the nodes of ``type`` that have no attribute ``attr`` (in any order)."""
        ...

    def nodes_with_term(self, attr: str, term: str, type: str | None = None) -> list[str]:
        """Ids of every node (of ``type``) whose ``attr`` holds the :func:`searchable` word
        ``term``, maybe with some holding only a variant of it (in any order)."""
        ...


def searchable(term: str) -> bool:
    """Whether :meth:`TermSearch.nodes_with_term` answers ``term`` exactly: one ``\\w+``
    word of at most :data:`MAX_TERM_BYTES` bytes."""
    return len(term.encode("utf-8")) <= MAX_TERM_BYTES and _WORD.fullmatch(term) is not None


def term_text(tokens: Iterable[str]) -> str:
    """The attribute value holding ``tokens``: the distinct ones, in first-seen order,
    separated by single spaces."""
    return " ".join(dict.fromkeys(tokens))


def term_search(graph: Any) -> TermSearch | None:
    """``graph`` as a :class:`TermSearch`, or ``None`` when it cannot search terms.

    Examples
    --------
    >>> from graphrag_integrations.core.graph.networkx_store import GraphStore
    >>> term_search(GraphStore()) is None
    True
    """
    return graph if isinstance(graph, TermSearch) else None
