"""Per-call context passed down to inner model calls without threading it through every API.

The LangChain adapter sets the current run's child callbacks here; the LangChain LLM adapter
reads them, so an LLM called inside a retriever shows up under that retriever's run.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

_callbacks: ContextVar[Any] = ContextVar("graphrag_integrations_callbacks", default=None)


def current_callbacks() -> Any:
    """The callbacks of the framework run that is calling us, or ``None``."""
    return _callbacks.get()


@contextlib.contextmanager
def callbacks_scope(callbacks: Any) -> Iterator[None]:
    """Make ``callbacks`` current for the duration of the ``with`` block."""
    token = _callbacks.set(callbacks)
    try:
        yield
    finally:
        _callbacks.reset(token)
