"""Lazy public names for package ``__init__`` modules (PEP 562).

A package lists ``public name -> defining module`` and forwards its module-level
``__getattr__`` to :func:`resolve_lazy`, so ``import graphrag_integrations`` stays cheap and the
heavy module behind a name is imported on first access only.

Examples
--------
>>> namespace = {"__name__": "pkg"}
>>> resolve_lazy(namespace, {"sqrt": "math"}, "sqrt")(4.0)
2.0
>>> "sqrt" in namespace  # cached: the next access does not go through __getattr__
True
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any


def resolve_lazy(namespace: dict[str, Any], lazy: Mapping[str, str], name: str) -> Any:
    """Import ``name`` from its module in ``lazy`` and cache it in ``namespace``.

    Raises
    ------
    AttributeError
        If ``name`` is not a lazy public name, as a missing module attribute would.
    """
    module = lazy.get(name)
    if module is None:
        raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    namespace[name] = value
    return value
