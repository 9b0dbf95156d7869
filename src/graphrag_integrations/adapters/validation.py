"""Argument checks shared by the framework adapters and :mod:`.surface`.

A leaf module (it imports only :mod:`graphrag_integrations.core.types`), so that
:mod:`.langchain`, :mod:`.llama_index` and :mod:`.surface` all depend on it and not on each
other: ``surface`` imports the two framework adapters lazily, and they import nothing back.
"""

from __future__ import annotations

from graphrag_integrations.core.types import Retriever


def check_k(k: int | None, name: str = "k") -> int | None:
    """Validate a result count: ``None`` (the retriever's default) or an integer >= 1.

    Parameters
    ----------
    k : int or None
        The number of results asked for.
    name : str
        Parameter name used in the error message (``k``, ``similarity_top_k``).

    Returns
    -------
    int or None
        ``k`` unchanged.

    Raises
    ------
    TypeError
        If ``k`` is not an integer (``bool`` is refused too).
    ValueError
        If ``k`` is smaller than 1.

    Examples
    --------
    >>> check_k(3)
    3
    >>> check_k(None) is None
    True
    >>> check_k(0)
    Traceback (most recent call last):
    ...
    ValueError: k must be >= 1, got 0
    """
    if k is None:
        return None
    if isinstance(k, bool) or not isinstance(k, int):
        raise TypeError(f"{name} must be an int or None, got {type(k).__name__}")
    if k < 1:
        raise ValueError(f"{name} must be >= 1, got {k}")
    return k


def as_core_retriever(obj: object) -> Retriever:
    """Return ``obj`` typed as a core :class:`~graphrag_integrations.core.types.Retriever`.

    Raises
    ------
    TypeError
        If ``obj`` lacks ``retrieve`` / ``aretrieve``.

    Examples
    --------
    >>> as_core_retriever(object())
    Traceback (most recent call last):
    ...
    TypeError: expected a core Retriever (retrieve(query, k) and aretrieve(query, k)), got object
    """
    if not isinstance(obj, Retriever):
        raise TypeError(
            "expected a core Retriever (retrieve(query, k) and aretrieve(query, k)), "
            f"got {type(obj).__name__}"
        )
    return obj
