"""The ``--option`` items of the commands, parsed and checked against a method's parameters
(:func:`parse_options`, :func:`query_options`), the ``--filter`` of ``query`` and ``show``
(:func:`filter_option`), and the keyword checks on index classes."""

from __future__ import annotations

import inspect
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from graphrag_integrations.core.params import key_values
from graphrag_integrations.errors import GraphRAGError

if TYPE_CHECKING:
    from graphrag_integrations.core.registry import MethodRegistration
    from graphrag_integrations.core.retrieval.filters import MetadataFilter


def filter_option(text: str | None) -> MetadataFilter | None:
    """The ``--filter JSON`` of ``query`` / ``show``: a JSON object in LangChain's filter
    language (:mod:`~graphrag_integrations.core.retrieval.filters`), checked before anything
    is loaded; ``None`` without one.

    Raises
    ------
    GraphRAGError
        Text that is not JSON, or JSON that is not a valid filter (one line).

    Examples
    --------
    >>> filter_option('{"tenant": "A", "year": {"$gte": 2020}}')  # doctest: +NORMALIZE_WHITESPACE
    AllOf(filters=(Comparison(key='tenant', operator='eq', value='A'),
                   Comparison(key='year', operator='gte', value=2020)))
    >>> filter_option("{tenant: A}")
    Traceback (most recent call last):
    ...
    graphrag_integrations.errors.GraphRAGError: --filter: not JSON (Expecting property name \
enclosed in double quotes at column 2): {tenant: A}
    """
    from graphrag_integrations.core.retrieval.filters import parse_filter

    if text is None:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise GraphRAGError(
            f"--filter: not JSON ({exc.msg} at column {exc.colno}): {text}"
        ) from None
    if not isinstance(value, dict):
        raise GraphRAGError(
            f'--filter takes a JSON object such as \'{{"tenant": "A"}}\', got {text}'
        )
    try:
        return parse_filter(value)
    except ValueError as exc:
        raise GraphRAGError(f"--filter: {exc}") from None


def parse_options(items: Sequence[str]) -> dict[str, dict[str, str]]:
    """Parse ``METHOD.KEY=VALUE`` items into per-method option strings.

    Values stay strings: each method's registration converts them to its parameter types
    and rejects unknown names (:meth:`MethodRegistration.parse_options`).

    Examples
    --------
    >>> parse_options(["hybrid.weight=0.7", "hybrid.fusion=rrf"])
    {'hybrid': {'weight': '0.7', 'fusion': 'rrf'}}
    """
    out: dict[str, dict[str, str]] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        method, dot, name = key.partition(".")
        if not sep or not dot or not method or not name:
            raise GraphRAGError(f"option {item!r} is not METHOD.KEY=VALUE")
        if name in out.get(method, {}):
            raise GraphRAGError(f"option {key} is given twice")
        out.setdefault(method, {})[name] = raw
    return out


def query_options(reg: MethodRegistration, items: Sequence[str]) -> dict[str, Any]:
    """Validate ``query --option`` items against ``reg``'s query parameters: typed overrides.

    An item is ``KEY=VALUE`` or ``METHOD.KEY=VALUE`` (``METHOD`` must be the index's); a
    ``preset`` expands to every field of that query preset, other keys override it. The
    overrides come in the order of the parameter class.

    Raises
    ------
    GraphRAGError
        One line: a malformed item, another method's option, an index-time option, an unknown
        name (listing the valid ones) or a bad value.

    Examples
    --------
    >>> from graphrag_integrations.evaluation.registry import get_registration
    >>> query_options(get_registration("hybrid"), ["fusion=rrf", "hybrid.weight=0.7"])
    {'weight': 0.7, 'fusion': 'rrf'}
    >>> query_options(get_registration("hybrid"), ["bm25.k=3"])
    Traceback (most recent call last):
    ...
    graphrag_integrations.errors.GraphRAGError: option bm25.k: this index is hybrid, not bm25
    """
    from graphrag_integrations.core.params import PRESET_OPTION

    given: dict[str, str] = {}
    for key, raw in key_values(items).items():
        method, dot, name = key.rpartition(".")
        if dot and method != reg.name:
            raise GraphRAGError(f"option {key}: this index is {reg.name}, not {method}")
        if name in given:
            raise GraphRAGError(f"option {name} is given twice")
        given[name] = raw
    cls = reg.query_params
    index_only = set(reg.index_params.names()) - set(cls.names())
    for name in given:
        if name in index_only:
            raise GraphRAGError(
                f"option {reg.name}.{name} is an index-time option (set when the index is "
                "built); query and show take query-time options"
            )
    params = cls.from_options(given, prefix=f"{reg.name}.")
    names = set(given) - {PRESET_OPTION}
    if PRESET_OPTION in given:
        names = set(cls.names()) - {PRESET_OPTION}
    return {name: getattr(params, name) for name in cls.names() if name in names}


def _accepts(cls: type[Any], param: str) -> bool:
    for fn in (cls.__init__, getattr(cls, "from_passages", None)):
        if fn is not None and param in inspect.signature(fn).parameters:
            return True
    return False
