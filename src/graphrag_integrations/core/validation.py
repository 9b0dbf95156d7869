"""Argument checks shared by every retriever, the adapters and the CLI.

One function per argument, so the core ``retrieve`` paths, the LangChain/LlamaIndex adapters
and the command line reject the same inputs with the same message.

Queries are also *bounded*: :func:`check_query` keeps at most :data:`MAX_QUERY_CHARS`
characters of a question (an index may set a tighter bound, ``max_query_chars``) and logs one
warning when it cuts, so the work of a query never grows with its length past that point
(KG-Translator took 291 s on a 52,800-character question before; ``docs/reference/failures.md``).
"""

from __future__ import annotations

import logging
import numbers
import re

from graphrag_integrations.errors import (
    EmptyQueryError,
    InvalidArgumentError,
    InvalidArgumentTypeError,
)

logger = logging.getLogger(__name__)

#: The longest query (in characters, about 1,000 tokens of English) an index processes; the
#: rest is cut off with one warning (:func:`check_query`). Longer than any question of the
#: evaluation sets and than the embedding models' input windows (MiniLM: 256 tokens).
MAX_QUERY_CHARS = 4_000
# a partial word at the cut: whitespace, then non-whitespace to the end
_PARTIAL_WORD = re.compile(r"\s+\S*$")


def check_k(k: object, default: int | None = None, *, name: str = "k") -> int:
    """Validate a result count and return it as an ``int`` (``default`` when ``k`` is ``None``).

    Parameters
    ----------
    k : object
        The number of results asked for: an integer >= 1 (``numpy`` integers accepted), or
        ``None`` for ``default``.
    default : int, optional
        Used when ``k`` is ``None``; itself checked the same way.
    name : str
        Parameter name in the error message (``k``, ``similarity_top_k``...).

    Returns
    -------
    int

    Raises
    ------
    InvalidArgumentTypeError
        If ``k`` is not an integer: ``"3"``, ``2.0``, ``True`` (also a ``TypeError``), or
        ``None`` with no default.
    InvalidArgumentError
        If ``k`` is smaller than 1 (also a ``ValueError``).

    Examples
    --------
    >>> check_k(3)
    3
    >>> check_k(None, 5)
    5
    >>> check_k(0)
    Traceback (most recent call last):
    ...
    graphrag_integrations.errors.InvalidArgumentError: k must be an integer >= 1, got 0
    >>> check_k("3")
    Traceback (most recent call last):
    ...
    graphrag_integrations.errors.InvalidArgumentTypeError: k must be an integer >= 1, got str '3'
    """
    if k is None:
        if default is None:
            raise InvalidArgumentTypeError(f"{name} must be an integer >= 1, got None")
        return check_k(default, name=f"default {name}")
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise InvalidArgumentTypeError(
            f"{name} must be an integer >= 1, got {type(k).__name__} {k!r}"
        )
    value = int(k)
    if value < 1:
        raise InvalidArgumentError(f"{name} must be an integer >= 1, got {value}")
    return value


def bound_text(text: str, max_chars: int) -> str:
    """The first ``max_chars`` characters of ``text``, without a word cut in two (when a
    space falls in the second half of what is kept), stripped.

    Examples
    --------
    >>> bound_text("capital of France", 12)
    'capital of'
    >>> bound_text("capital of France", 100)
    'capital of France'
    >>> bound_text("Llanfairpwllgwyngyll", 6)  # one long word: cut inside it
    'Llanfa'
    """
    if len(text) <= max_chars:
        return text
    kept = text[:max_chars]
    if not text[max_chars].isspace():
        whole = _PARTIAL_WORD.sub("", kept)
        if len(whole) >= max_chars // 2:
            kept = whole
    return kept.rstrip()


def check_query(query: str, max_chars: int | None = MAX_QUERY_CHARS, *, owner: str = "") -> str:
    """Return ``query`` stripped and bounded, or raise :class:`EmptyQueryError` if nothing is
    left.

    Parameters
    ----------
    query : str
        The question.
    max_chars : int, optional
        At most this many characters are kept (:func:`bound_text`); a longer query is cut with
        one warning naming ``owner`` (the index; its ``max_query_chars``). ``None``: no bound.
    owner : str
        Who bounds (in the warning), e.g. ``"ClueIndex"``.

    Examples
    --------
    >>> check_query("  capital of France ")
    'capital of France'
    >>> len(check_query("word " * 2000, 100))
    99
    >>> check_query("   ")
    Traceback (most recent call last):
    ...
    graphrag_integrations.errors.EmptyQueryError: query is empty
    """
    if not isinstance(query, str):
        raise EmptyQueryError(f"query must be a string, got {type(query).__name__}")
    stripped = query.strip()
    if not stripped:
        raise EmptyQueryError("query is empty")
    if max_chars is not None and len(stripped) > max_chars:
        bounded = bound_text(stripped, max_chars)
        logger.warning(
            "query of %s characters cut to its first %s (%smax_query_chars): the rest is ignored",
            f"{len(stripped):,}",
            f"{len(bounded):,}",
            f"{owner}." if owner else "",
        )
        return bounded
    return stripped
