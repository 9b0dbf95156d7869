"""Query params bound to one query: how ``as_retriever`` changes an index's query params
without copying the index or touching its other queries.

An index declares ``query_params = QueryParamsField(XQueryParams)``; inside
``with bound_query_params(index, params):`` its ``query_params`` reads ``params`` in this
thread or task only (a :class:`~contextvars.ContextVar`, copied into ``asyncio.to_thread``
workers), everywhere else the params the index was built with.

Examples
--------
>>> from graphrag_integrations.core.params import NoParams
>>> class Toy:
...     query_params = QueryParamsField(NoParams)
>>> toy = Toy()
>>> toy.query_params
NoParams()
>>> with bound_query_params(toy, NoParams()):
...     toy.query_params
NoParams()
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Generic, TypeVar, overload

from graphrag_integrations.core.params import Params
from graphrag_integrations.errors import InvalidArgumentError

__all__ = ["QueryParamsField", "bound_query_params"]

Q_co = TypeVar("Q_co", bound=Params, covariant=True)

#: The query params a retriever bound with ``as_retriever`` runs a query with: ``(index,
#: params)`` for the duration of the query, in the running thread / task only.
_BOUND_QUERY_PARAMS: ContextVar[tuple[object, Params] | None] = ContextVar(
    "bound_query_params", default=None
)


class QueryParamsField(Generic[Q_co]):
    """The ``query_params`` attribute of an index: the params it was built with, or those of
    the bound retriever running a query (:meth:`BaseIndex.using_query_params`).

    Declared once per index class, ``query_params = QueryParamsField(XQueryParams)``; read as
    an ``XQueryParams``, set in ``__init__``.
    """

    def __init__(self, params_class: type[Q_co]) -> None:
        self.params_class = params_class

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> QueryParamsField[Q_co]: ...

    @overload
    def __get__(self, obj: object, owner: type[Any]) -> Q_co: ...

    def __get__(self, obj: object | None, owner: type[Any]) -> Any:
        if obj is None:
            return self
        bound = _BOUND_QUERY_PARAMS.get()
        if bound is not None and bound[0] is obj:
            return bound[1]
        own = obj.__dict__.get("_query_params")
        return self.params_class() if own is None else own

    def __set__(self, obj: object, value: Any) -> None:
        if not isinstance(value, self.params_class):
            raise InvalidArgumentError(
                f"query_params must be a {self.params_class.__name__}, got {type(value).__name__}"
            )
        obj.__dict__["_query_params"] = value


@contextmanager
def bound_query_params(obj: object, params: Params) -> Iterator[None]:
    """Within the block, ``obj.query_params`` reads ``params`` (this thread or task only)."""
    token = _BOUND_QUERY_PARAMS.set((obj, params))
    try:
        yield
    finally:
        _BOUND_QUERY_PARAMS.reset(token)
