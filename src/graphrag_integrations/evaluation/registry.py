"""Finds the method registrations: built-in modules plus third-party entry points.

Every module in :data:`BUILTIN_MODULES` exposes ``REGISTRATIONS``, a tuple of
:class:`~graphrag_integrations.core.registry.MethodRegistration`. Third-party packages add
methods through the entry-point group :data:`ENTRY_POINT_GROUP`; an entry point may load a
registration, an iterable of them, or a module with ``REGISTRATIONS``. Loading the
registrations imports no model library (torch, spaCy...): builders and index classes are
imported on first use. A broken entry point is logged and reported by :func:`load_errors`,
never silently dropped; two registrations of one name are an error.

Examples
--------
>>> method_names()[:4]
['bm25', 'clue', 'dense', 'hybrid']
>>> get_registration("bm25").resolve_builder()
BaselineBuilder(index_class='graphrag_integrations.baselines.bm25:BM25Retriever', embeds=False)
>>> resolve_index_class("dense").__name__
'DenseRetriever'
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable, Iterable
from importlib.metadata import entry_points
from typing import Any

from graphrag_integrations.core.registry import (
    MethodRegistration,
    MethodUnavailableError,
    UnknownMethodError,
)

__all__ = [
    "BUILTIN_MODULES",
    "ENTRY_POINT_GROUP",
    "MethodUnavailableError",
    "UnknownMethodError",
    "get_registration",
    "load_errors",
    "method_names",
    "register",
    "registrations",
    "resolve_index_class",
    "resolve_method",
    "unregister",
]

logger = logging.getLogger(__name__)

#: Modules holding the built-in registrations.
BUILTIN_MODULES: tuple[str, ...] = (
    "graphrag_integrations.baselines.registration",
    "graphrag_integrations.methods.clue.registration",
    "graphrag_integrations.methods.kgt.registration",
    "graphrag_integrations.methods.qcg.registration",
    "graphrag_integrations.methods.reg.registration",
)
#: Entry-point group of third-party methods.
ENTRY_POINT_GROUP = "graphrag_integrations.methods"

_registry: dict[str, MethodRegistration] | None = None
_errors: dict[str, str] = {}


def _as_registrations(obj: Any, source: str) -> list[MethodRegistration]:
    if isinstance(obj, MethodRegistration):
        return [obj]
    obj = getattr(obj, "REGISTRATIONS", obj)
    if isinstance(obj, Iterable) and not isinstance(obj, (str, bytes)):
        items = list(obj)
        if all(isinstance(r, MethodRegistration) for r in items):
            return items
    raise TypeError(f"{source} provides no MethodRegistration (got {type(obj).__name__})")


def _add(registry: dict[str, MethodRegistration], reg: MethodRegistration, source: str) -> None:
    if reg.name in registry:
        raise ValueError(f"method {reg.name!r} is registered twice (again by {source})")
    registry[reg.name] = reg


def _load() -> dict[str, MethodRegistration]:
    registry: dict[str, MethodRegistration] = {}
    for module in BUILTIN_MODULES:
        for reg in _as_registrations(importlib.import_module(module), module):
            _add(registry, reg, module)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        source = f"entry point {ep.name!r} ({ep.value})"
        try:
            regs = _as_registrations(ep.load(), source)
        except Exception as exc:  # a broken plugin must not break the built-in methods
            _errors[ep.name] = f"{type(exc).__name__}: {exc}"
            logger.warning("%s could not be loaded: %s", source, exc)
            continue
        for reg in regs:
            _add(registry, reg, source)
    return registry


def _table() -> dict[str, MethodRegistration]:
    global _registry
    if _registry is None:
        _registry = _load()
    return _registry


def registrations() -> dict[str, MethodRegistration]:
    """Every registration by name (loaded once; a copy)."""
    return dict(_table())


def load_errors() -> dict[str, str]:
    """Entry points that failed to load: name -> error."""
    _table()
    return dict(_errors)


def method_names() -> list[str]:
    """Sorted method names (imports no builder)."""
    return sorted(registrations())


def get_registration(name: str) -> MethodRegistration:
    """The registration of ``name``.

    Raises
    ------
    UnknownMethodError
        "unknown method 'x'; known methods: bm25, clue, ...".
    """
    reg = registrations().get(name)
    if reg is None:
        raise UnknownMethodError(
            f"unknown method {name!r}; known methods: {', '.join(method_names())}"
        )
    return reg


def register(registration: MethodRegistration, *, replace: bool = False) -> None:
    """Add a registration at run time (tests, notebooks); ``replace`` overrides a name."""
    table = _table()
    if registration.name in table and not replace:
        raise ValueError(f"method {registration.name!r} is already registered")
    table[registration.name] = registration


def unregister(name: str) -> None:
    """Remove a registration added by :func:`register` (``KeyError`` if unknown)."""
    del _table()[name]


def resolve_method(name: str) -> Callable[..., Any]:
    """The builder of ``name`` (:class:`UnknownMethodError`, :class:`MethodUnavailableError`)."""
    return get_registration(name).resolve_builder()


def resolve_index_class(name: str) -> type[Any]:
    """The index class of ``name`` (same errors as :func:`resolve_method`)."""
    return get_registration(name).resolve_index_class()
