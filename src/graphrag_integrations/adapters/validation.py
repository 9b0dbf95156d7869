"""Argument checks shared by the framework adapters and :mod:`.surface`.

A leaf module (it imports only the core: :mod:`graphrag_integrations.core.types` and
:mod:`graphrag_integrations.core.validation`), so that
:mod:`.langchain`, :mod:`.llama_index` and :mod:`.surface` all depend on it and not on each
other: ``surface`` imports the two framework adapters lazily, and they import nothing back.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graphrag_integrations.core.types import Retriever
from graphrag_integrations.core.validation import check_k as core_check_k
from graphrag_integrations.errors import InvalidArgumentError


def check_k(k: int | None, name: str = "k") -> int | None:
    """Validate a result count: ``None`` (the retriever's default) or an integer >= 1.

    The adapters' face of :func:`graphrag_integrations.core.validation.check_k` (same rules,
    same messages), keeping ``None`` as "use the retriever's default".

    Parameters
    ----------
    k : int or None
        The number of results asked for.
    name : str
        Parameter name used in the error message (``k``, ``similarity_top_k``).

    Returns
    -------
    int or None
        ``k`` as an ``int``, or ``None``.

    Raises
    ------
    InvalidArgumentTypeError
        If ``k`` is not an integer (``bool`` is refused too); also a ``TypeError``.
    InvalidArgumentError
        If ``k`` is smaller than 1; also a ``ValueError``.

    Examples
    --------
    >>> check_k(3)
    3
    >>> check_k(None) is None
    True
    >>> check_k(0)
    Traceback (most recent call last):
    ...
    graphrag_integrations.errors.InvalidArgumentError: k must be an integer >= 1, got 0
    """
    if k is None:
        return None
    return core_check_k(k, name=name)


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


def merge_search_kwargs(
    search_kwargs: Mapping[str, Any] | None, k: int | None, filter: Any
) -> tuple[int | None, Any]:
    """``(k, filter)`` from LangChain's ``search_kwargs`` spelling and the direct arguments.

    Raises
    ------
    InvalidArgumentError
        If ``search_kwargs`` has keys other than ``k`` and ``filter``, or repeats ``k`` /
        ``filter`` given directly.

    Examples
    --------
    >>> merge_search_kwargs({"k": 2}, None, {"year": 2020})
    (2, {'year': 2020})
    >>> merge_search_kwargs(None, 3, None)
    (3, None)
    >>> merge_search_kwargs({"k": 2, "fetch_k": 9}, None, None)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    graphrag_integrations.errors.InvalidArgumentError: search_kwargs takes only ... ['fetch_k']
    """
    if search_kwargs is None:
        return k, filter
    extra = sorted(set(search_kwargs) - {"k", "filter"})
    if extra:
        raise InvalidArgumentError(f"search_kwargs takes only 'k' and 'filter', got {extra}")
    if ("k" in search_kwargs and k is not None) or (
        "filter" in search_kwargs and filter is not None
    ):
        raise InvalidArgumentError("give k / filter either directly or in search_kwargs")
    return search_kwargs.get("k", k), search_kwargs.get("filter", filter)
