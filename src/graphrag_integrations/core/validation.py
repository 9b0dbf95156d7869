"""Argument checks shared by every retriever, the adapters and the CLI.

One function per argument, so the core ``retrieve`` paths, the LangChain/LlamaIndex adapters
and the command line reject the same inputs with the same message.
"""

from __future__ import annotations

import numbers

from graphrag_integrations.errors import (
    EmptyQueryError,
    InvalidArgumentError,
    InvalidArgumentTypeError,
)


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


def check_query(query: str) -> str:
    """Return ``query`` stripped, or raise :class:`EmptyQueryError` if nothing is left.

    Examples
    --------
    >>> check_query("  capital of France ")
    'capital of France'
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
    return stripped
