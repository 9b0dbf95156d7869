"""Metadata filters: one framework-free filter language for every index.

A filter is a small tree: :class:`Comparison` leaves (``key``, ``operator``, ``value``) under
:class:`AllOf` (AND), :class:`AnyOf` (OR) and :class:`NoneOf` (NOT: none of them holds).
:func:`parse_filter` builds it from the dict form LangChain's vector stores (and Chroma) use,
or takes a tree as is; the LlamaIndex adapter converts ``MetadataFilters`` into the same tree
(:func:`graphrag_integrations.adapters.llama_index.from_metadata_filters`).

The dict form
    ``{"key": value}`` (equality), ``{"key": {"$op": value}}`` with ``$op`` one of
    ``$eq $ne $gt $gte $lt $lte $in $nin $contains``, several operators under one key or several
    keys in one dict (all must hold), ``{"$and": [f1, f2, ...]}`` and ``{"$or": [...]}``
    (non-empty lists of dict filters). ``{}`` has no condition and matches every passage.

What a filter sees
    A passage's metadata (its source document's, see :func:`passage_metadata`) plus
    ``doc_id`` and ``passage_id`` (the keys the framework results carry too).

Semantics (the same for every index and backend)
    * A key the passage does not have (or whose value is ``None``) matches **nothing**, for
      every operator, ``ne`` and ``nin`` included: ``{"lang": {"$ne": "en"}}`` keeps only
      passages that *have* a ``lang`` other than ``"en"``. A misspelt key thus returns ``[]``.
    * ``bool`` is not a number: ``True`` equals neither ``1`` nor ``1.0`` (as in Chroma).
    * ``gt``/``gte``/``lt``/``lte`` compare numbers with numbers and strings with strings
      (ISO dates order correctly); a value of another type does not match.
    * ``in``/``nin`` take a non-empty list of scalars; ``contains`` holds when a list value has
      the element, or a string value has the substring; ``text_match`` (case-sensitive) and
      ``text_match_insensitive`` are substring matches on string values; ``any``/``all`` hold
      when a list value has any / all of the given elements.

A malformed filter (unknown operator, a value of the wrong type, an empty ``$and``) raises
:class:`~graphrag_integrations.errors.InvalidArgumentError` (a ``ValueError``) at
:func:`parse_filter`, i.e. before an index does any work.

Examples
--------
>>> where = parse_filter({"year": {"$gte": 2000}, "$or": [{"lang": "en"}, {"lang": "fr"}]})
>>> where.matches({"year": 2004, "lang": "fr"}), where.matches({"year": 1999, "lang": "en"})
(True, False)
>>> parse_filter({"lang": "en"}).matches({"title": "no lang"})
False
>>> parse_filter({"year": {"$around": 2000}})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
graphrag_integrations.errors.InvalidArgumentError: unknown filter operator '$around' ...
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from graphrag_integrations.core.retrieval.ranking import top_k
from graphrag_integrations.core.types import Passage, RetrievedPassage, Retriever
from graphrag_integrations.errors import InvalidArgumentError

#: A scalar a filter compares with.
FilterScalar = str | int | float | bool

#: Operators whose value is one scalar.
SCALAR_OPERATORS = ("eq", "ne", "gt", "gte", "lt", "lte", "contains")
#: Operators whose value is a non-empty list of scalars.
LIST_OPERATORS = ("in", "nin", "any", "all")
#: Operators whose value is a string.
TEXT_OPERATORS = ("text_match", "text_match_insensitive")
#: Every comparison operator of :class:`Comparison`.
OPERATORS = SCALAR_OPERATORS + LIST_OPERATORS + TEXT_OPERATORS
#: The ``$`` operators of the dict form, per key.
DICT_OPERATORS = ("eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains")


def check_filter_scalar(value: Any, what: str) -> FilterScalar:
    """``value`` if it is a ``str``, ``int``, finite ``float`` or ``bool``, else ``ValueError``.

    Examples
    --------
    >>> check_filter_scalar(3, "value")
    3
    >>> check_filter_scalar([3], "value")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    graphrag_integrations.errors.InvalidArgumentError: value must be a str, int, float or ...
    """
    ok = isinstance(value, (str, int, float, bool)) and not (
        isinstance(value, float) and not math.isfinite(value)
    )
    if not ok:
        raise InvalidArgumentError(
            f"{what} must be a str, int, float or bool, got {type(value).__name__} {value!r}"
        )
    return value  # type: ignore[no-any-return]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _same(a: Any, b: Any) -> bool:
    """Equality with ``bool`` kept apart from numbers (``True != 1``)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if _is_number(a) and _is_number(b):
        return bool(a == b)
    return type(a) is type(b) and bool(a == b)


def _ordered(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` can be ordered (two numbers or two strings)."""
    return (_is_number(a) and _is_number(b)) or (isinstance(a, str) and isinstance(b, str))


def _is_list(value: Any) -> bool:
    return isinstance(value, (list, tuple, set, frozenset))


def _member_key(value: Any) -> tuple[str, Any] | None:
    """What ``in`` / ``nin`` look a value up by: equal keys exactly when :func:`_same` holds
    (``bool`` apart from numbers, ``1 == 1.0``); ``None`` for a value no scalar equals."""
    if isinstance(value, bool):
        return ("bool", value)
    if _is_number(value):
        return ("number", value)
    if isinstance(value, str):
        return ("str", value)
    return None


@dataclass(frozen=True)
class Comparison:
    """One condition on one metadata key.

    Parameters
    ----------
    key : str
        The metadata key (``doc_id`` and ``passage_id`` are there too).
    operator : str
        One of :data:`OPERATORS`.
    value : scalar or tuple of scalars
        A scalar for :data:`SCALAR_OPERATORS`, a string for :data:`TEXT_OPERATORS`, a
        non-empty tuple for :data:`LIST_OPERATORS` (a list is turned into a tuple).

    Raises
    ------
    ValueError
        On an unknown operator, an empty key or a value of the wrong type.

    Examples
    --------
    >>> Comparison("year", "lt", 2000).matches({"year": 1999})
    True
    >>> Comparison("tags", "contains", "war").matches({"tags": ["war", "film"]})
    True
    """

    key: str
    operator: str
    value: FilterScalar | tuple[FilterScalar, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.key, str) or not self.key:
            raise InvalidArgumentError(f"a filter key must be a non-empty string, got {self.key!r}")
        what = f"filter value of {self.key!r} ({self.operator})"
        if self.operator in LIST_OPERATORS:
            value = self.value
            if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, set, frozenset)):
                raise InvalidArgumentError(f"{what} must be a non-empty list, got {value!r}")
            items = tuple(check_filter_scalar(v, what) for v in value)
            if not items:
                raise InvalidArgumentError(f"{what} must be a non-empty list, got {value!r}")
            object.__setattr__(self, "value", items)
            # a set lookup: an ``$in`` of thousands of ids stays O(1) per passage
            object.__setattr__(self, "_members", frozenset(_member_key(v) for v in items))
        elif self.operator in TEXT_OPERATORS:
            if not isinstance(self.value, str):
                raise InvalidArgumentError(f"{what} must be a string, got {self.value!r}")
        elif self.operator in SCALAR_OPERATORS:
            check_filter_scalar(self.value, what)
        else:
            raise InvalidArgumentError(
                f"unknown filter operator {self.operator!r} for key {self.key!r} (supported: "
                f"{', '.join(OPERATORS)})"
            )

    def matches(self, metadata: Mapping[str, Any]) -> bool:
        """Whether ``metadata`` satisfies the condition (a missing key never does)."""
        actual = metadata.get(self.key)
        if actual is None:
            return False
        op, value = self.operator, self.value
        if op == "eq":
            return _same(actual, value)
        if op == "ne":
            return not _same(actual, value)
        if op in ("gt", "gte", "lt", "lte"):
            if not _ordered(actual, value):
                return False
            if op == "gt":
                return bool(actual > value)
            if op == "gte":
                return bool(actual >= value)
            if op == "lt":
                return bool(actual < value)
            return bool(actual <= value)
        if op in ("in", "nin"):
            key = _member_key(actual)
            found = key is not None and key in self.__dict__["_members"]
            return found if op == "in" else not found
        if op == "contains":
            if _is_list(actual):
                return any(_same(a, value) for a in actual)
            return isinstance(actual, str) and isinstance(value, str) and value in actual
        if op in ("any", "all"):
            assert isinstance(value, tuple)
            if not _is_list(actual):
                return False
            has = [any(_same(a, v) for a in actual) for v in value]
            return any(has) if op == "any" else all(has)
        assert isinstance(value, str)
        if not isinstance(actual, str):
            return False
        if op == "text_match":
            return value in actual
        return value.lower() in actual.lower()


@dataclass(frozen=True)
class AllOf:
    """All of ``filters`` hold (AND; no filters: always true)."""

    filters: tuple[MetadataFilter, ...]

    def matches(self, metadata: Mapping[str, Any]) -> bool:
        """Whether every sub-filter matches ``metadata``."""
        return all(f.matches(metadata) for f in self.filters)


@dataclass(frozen=True)
class AnyOf:
    """At least one of ``filters`` holds (OR)."""

    filters: tuple[MetadataFilter, ...]

    def matches(self, metadata: Mapping[str, Any]) -> bool:
        """Whether some sub-filter matches ``metadata``."""
        return any(f.matches(metadata) for f in self.filters)


@dataclass(frozen=True)
class NoneOf:
    """None of ``filters`` holds (LlamaIndex's ``FilterCondition.NOT``)."""

    filters: tuple[MetadataFilter, ...]

    def matches(self, metadata: Mapping[str, Any]) -> bool:
        """Whether no sub-filter matches ``metadata``."""
        return not any(f.matches(metadata) for f in self.filters)


#: A parsed filter: a tree of the four node types.
MetadataFilter = Comparison | AllOf | AnyOf | NoneOf
#: What ``retrieve(..., filter=)`` accepts: a parsed filter, the dict form, or ``None``.
FilterLike = MetadataFilter | Mapping[str, Any] | None
#: The node classes of a filter tree.
FILTER_NODES = (Comparison, AllOf, AnyOf, NoneOf)


def combine_filters(*filters: FilterLike) -> MetadataFilter | None:
    """All of ``filters`` (AND), each parsed; ``None`` when none is given.

    How a filter bound to a retriever meets the filter of a call: both must hold, so a call
    can narrow a bound filter but never widen it (``{}`` and ``None`` add nothing).

    Examples
    --------
    >>> both = combine_filters({"tenant": "A"}, {"year": 2020})
    >>> both.matches({"tenant": "A", "year": 2020}), both.matches({"tenant": "B", "year": 2020})
    (True, False)
    >>> combine_filters({"tenant": "A"}, {}) == parse_filter({"tenant": "A"})
    True
    >>> combine_filters(None, None) is None
    True
    """
    parts = [where for where in map(parse_filter, filters) if where is not None]
    kept = [where for where in parts if where != AllOf(())]  # {}: no condition
    if not kept:
        return parts[0] if parts else None
    return kept[0] if len(kept) == 1 else AllOf(tuple(kept))


def group(kind: str, filters: Iterable[MetadataFilter]) -> MetadataFilter:
    """An ``"and"``, ``"or"`` or ``"not"`` node over ``filters`` (checked: non-empty, nodes).

    Examples
    --------
    >>> group("or", [Comparison("a", "eq", 1), Comparison("b", "eq", 2)]).matches({"b": 2})
    True
    """
    children = tuple(filters)
    if not children:
        raise InvalidArgumentError(f"a {kind!r} filter group needs at least one filter")
    for child in children:
        if not isinstance(child, FILTER_NODES):
            raise InvalidArgumentError(f"not a metadata filter: {type(child).__name__} {child!r}")
    if kind == "and":
        return AllOf(children)
    if kind == "or":
        return AnyOf(children)
    if kind == "not":
        return NoneOf(children)
    raise InvalidArgumentError(f"unknown filter condition {kind!r} (supported: and, or, not)")


def parse_filter(filter: FilterLike) -> MetadataFilter | None:
    """A filter tree from the dict form (see the module notes), a tree, or ``None``.

    Parameters
    ----------
    filter : MetadataFilter, mapping or None
        ``None`` means no filter (returned as ``None``).

    Raises
    ------
    ValueError
        On an unknown operator, a value of the wrong type, an empty ``$and``/``$or``/``$in``
        or anything that is not a filter.

    Examples
    --------
    >>> parse_filter({"a": 1, "b": {"$in": ["x", "y"]}})  # doctest: +NORMALIZE_WHITESPACE
    AllOf(filters=(Comparison(key='a', operator='eq', value=1),
                   Comparison(key='b', operator='in', value=('x', 'y'))))
    >>> parse_filter(None) is None
    True
    """
    if filter is None:
        return None
    if isinstance(filter, FILTER_NODES):
        return filter
    if not isinstance(filter, Mapping):
        hint = (
            " (convert LlamaIndex filters with graphrag_integrations.adapters.llama_index."
            "from_metadata_filters, or pass them to as_llama_index_retriever(filters=...))"
            if type(filter).__name__ in ("MetadataFilters", "MetadataFilter")
            else ""
        )
        raise InvalidArgumentError(
            "a metadata filter must be a dict (LangChain form, e.g. {'lang': 'en'}), a "
            "graphrag_integrations.core.retrieval.filters node or None, "
            f"got {type(filter).__name__}" + hint
        )
    return _from_dict(filter)


def _from_dict(where: Mapping[str, Any]) -> MetadataFilter:
    parts: list[MetadataFilter] = []
    for key, spec in where.items():
        if not isinstance(key, str) or not key:
            raise InvalidArgumentError(f"filter keys must be non-empty strings, got {key!r}")
        if key in ("$and", "$or"):
            if isinstance(spec, (str, bytes, Mapping)) or not isinstance(spec, Sequence):
                raise InvalidArgumentError(f"{key} takes a non-empty list of filters, got {spec!r}")
            subs = []
            for sub in spec:
                if not isinstance(sub, Mapping):
                    raise InvalidArgumentError(f"every filter in {key} must be a dict, got {sub!r}")
                subs.append(_from_dict(sub))
            if not subs:
                raise InvalidArgumentError(f"{key} takes a non-empty list of filters, got {spec!r}")
            parts.append(group(key[1:], subs))
        elif key.startswith("$"):
            raise InvalidArgumentError(
                f"unknown filter operator {key!r} at the top level (use $and, $or)"
            )
        elif isinstance(spec, Mapping):
            if not spec:
                raise InvalidArgumentError(f"filter of key {key!r} has no operator")
            for op, value in spec.items():
                name = op[1:] if isinstance(op, str) and op.startswith("$") else None
                if name not in DICT_OPERATORS:
                    raise InvalidArgumentError(
                        f"unknown filter operator {op!r} for key {key!r} (supported: "
                        f"{', '.join('$' + o for o in DICT_OPERATORS)})"
                    )
                parts.append(Comparison(key, name, value))
        else:
            parts.append(Comparison(key, "eq", spec))
    return parts[0] if len(parts) == 1 else AllOf(tuple(parts))  # {}: AllOf(()) matches all


def passage_metadata(passage: Passage) -> dict[str, Any]:
    """What a filter is evaluated on: the passage's metadata plus ``doc_id`` and ``passage_id``.

    Examples
    --------
    >>> passage_metadata(Passage("p1", "text", "d1", {"lang": "en"}))
    {'lang': 'en', 'doc_id': 'd1', 'passage_id': 'p1'}
    """
    return {**passage.metadata, "doc_id": passage.doc_id, "passage_id": passage.id}


def filter_mask(where: MetadataFilter, passages: Sequence[Passage]) -> npt.NDArray[np.bool_]:
    """One boolean per passage: does it match ``where``?

    Examples
    --------
    >>> ps = [Passage("p1", "x", "a", {"n": 1}), Passage("p2", "y", "b", {"n": 2})]
    >>> filter_mask(Comparison("n", "gt", 1), ps).tolist()
    [False, True]
    """
    return np.fromiter(
        (where.matches(passage_metadata(p)) for p in passages), dtype=np.bool_, count=len(passages)
    )


def masked_top_k(
    scores: npt.NDArray[np.floating[Any]], mask: npt.NDArray[np.bool_], k: int
) -> list[int]:
    """:func:`~graphrag_integrations.core.retrieval.ranking.top_k` among the positions where
    ``mask``
    is true (exact: every matching position competes, none other is returned).

    Examples
    --------
    >>> masked_top_k(np.array([0.9, 0.5, 0.7]), np.array([False, True, True]), 5)
    [2, 1]
    """
    rows = np.flatnonzero(mask)
    return [int(rows[i]) for i in top_k(scores[rows], k)]


def retrieve_filtered(
    retrieve: Callable[[str, int], list[RetrievedPassage]],
    query: str,
    k: int,
    where: MetadataFilter,
    *,
    growth: int = 4,
) -> list[RetrievedPassage]:
    """The best ``k`` results of ``retrieve`` that match ``where``, by a growing budget.

    ``retrieve(query, budget)`` runs with ``budget = k``, then ``k * growth``, ``k * growth**2``
    ... until ``k`` results match or it returns fewer than ``budget`` results (the index is
    exhausted). The order is ``retrieve``'s. What a graph method uses, whose matching passages
    are only known after its graph step; a filter that matches few passages thus costs up to a
    retrieval over the whole index.

    Examples
    --------
    >>> corpus = [Passage(f"p{i}", f"text {i}", f"d{i}", {"n": i}) for i in range(10)]
    >>> def retrieve(query: str, k: int) -> list[RetrievedPassage]:
    ...     return [RetrievedPassage(p, 1.0 / (1 + i)) for i, p in enumerate(corpus[:k])]
    >>> [h.id for h in retrieve_filtered(retrieve, "q", 2, Comparison("n", "gte", 7))]
    ['p7', 'p8']
    """
    if growth < 2:
        raise InvalidArgumentError(f"growth must be >= 2, got {growth}")
    budget = k
    while True:
        hits = retrieve(query, budget)
        kept = [h for h in hits if where.matches(passage_metadata(h.passage))]
        if len(kept) >= k or len(hits) < budget:
            return kept[:k]
        budget *= growth


def accepts_filter(retriever: object, method: str = "retrieve") -> bool:
    """Whether ``retriever.<method>`` (``retrieve`` or ``aretrieve``) takes ``filter=`` (every
    ``BaseIndex``'s does).

    Examples
    --------
    >>> class Plain:
    ...     def retrieve(self, query: str, k: int | None = None) -> list[RetrievedPassage]:
    ...         return []
    >>> accepts_filter(Plain())
    False
    """
    function = getattr(retriever, method, None)
    if function is None:
        return False
    try:
        params = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False
    return "filter" in params or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()
    )


def _check_support(retriever: Retriever, method: str) -> None:
    if not accepts_filter(retriever, method):
        raise InvalidArgumentError(
            f"{type(retriever).__name__} does not support metadata filters (its {method} has "
            "no filter= argument); filter through the index that owns the passages"
        )


def retrieve_with_filter(
    retriever: Retriever, query: str, k: int | None, where: MetadataFilter | None
) -> list[RetrievedPassage]:
    """``retriever.retrieve(query, k)``, with ``filter=where`` when a filter is given.

    Raises
    ------
    InvalidArgumentError
        If ``where`` is given and the retriever takes no filter (nothing is retrieved).
    """
    if where is None:
        return retriever.retrieve(query, k)
    _check_support(retriever, "retrieve")
    hits: list[RetrievedPassage] = retriever.retrieve(query, k, filter=where)  # type: ignore[call-arg]
    return hits


async def aretrieve_with_filter(
    retriever: Retriever, query: str, k: int | None, where: MetadataFilter | None
) -> list[RetrievedPassage]:
    """Async :func:`retrieve_with_filter` (``retriever.aretrieve``)."""
    if where is None:
        return await retriever.aretrieve(query, k)
    _check_support(retriever, "aretrieve")
    hits: list[RetrievedPassage] = await retriever.aretrieve(query, k, filter=where)  # type: ignore[call-arg]
    return hits
