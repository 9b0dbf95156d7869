"""Method registries, resolved lazily so that listing a method imports nothing.

:data:`METHODS` maps a method name to the ``"module:function"`` of its evaluation builder,
``build(passages, embedder, *, show_progress, **options) -> Retriever``; :data:`INDEX_CLASSES`
maps a method name to the ``"module:Class"`` of its
:class:`~graphrag_integrations.core.index_base.BaseIndex` (used by the ``index`` and
``query`` commands).

Examples
--------
>>> sorted(METHODS)[:3]
['bm25', 'clue', 'dense']
>>> resolve_method("bm25").__name__
'build_bm25'
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

from graphrag_integrations.errors import GraphRAGError

#: Evaluation builders by method name.
METHODS: dict[str, str] = {
    "dense": "graphrag_integrations.evaluation.builders:build_dense",
    "bm25": "graphrag_integrations.evaluation.builders:build_bm25",
    "hybrid": "graphrag_integrations.evaluation.builders:build_hybrid",
    "clue": "graphrag_integrations.methods.clue.evaluation:build",
}

#: Index classes (``from_documents`` / ``load``) by method name.
INDEX_CLASSES: dict[str, str] = {
    "dense": "graphrag_integrations.baselines.dense:DenseRetriever",
    "bm25": "graphrag_integrations.baselines.bm25:BM25Retriever",
    "hybrid": "graphrag_integrations.baselines.hybrid:HybridRetriever",
    "clue": "graphrag_integrations.methods.clue.index:ClueIndex",
}


class UnknownMethodError(GraphRAGError, LookupError):
    """Raised for a method name no registry lists."""


class MethodUnavailableError(GraphRAGError, ImportError):
    """Raised when a listed method cannot be imported (module missing, import error)."""


def _resolve(name: str, registry: Mapping[str, str], what: str) -> Any:
    target = registry.get(name)
    if target is None:
        raise UnknownMethodError(
            f"unknown method {name!r}; known {what}: {', '.join(sorted(registry))}"
        )
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
        return getattr(module, attr)
    except (ImportError, AttributeError) as exc:
        raise MethodUnavailableError(f"method {name!r} is not available: {exc}") from exc


def resolve_method(name: str) -> Callable[..., Any]:
    """The evaluation builder of ``name``.

    Raises
    ------
    UnknownMethodError
        If ``name`` is not in :data:`METHODS`.
    MethodUnavailableError
        If its module cannot be imported ("method 'clue' is not available: <reason>").
    """
    builder: Callable[..., Any] = _resolve(name, METHODS, "methods")
    return builder


def resolve_index_class(name: str) -> type[Any]:
    """The :class:`BaseIndex` subclass of ``name`` (same errors as :func:`resolve_method`).

    Examples
    --------
    >>> resolve_index_class("dense").__name__
    'DenseRetriever'
    """
    cls: type[Any] = _resolve(name, INDEX_CLASSES, "index methods")
    return cls
