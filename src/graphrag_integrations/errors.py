"""Exceptions raised by graphrag-integrations.

Every error a user can trigger with bad input derives from :class:`GraphRAGError`, so one
``except`` clause catches them all, and each also derives from the matching builtin
(``ValueError``, ``FileNotFoundError``...) so generic handlers keep working.
"""

from __future__ import annotations


class GraphRAGError(Exception):
    """Base class of every error this package raises on purpose."""


class EmptyCorpusError(GraphRAGError, ValueError):
    """Raised when an index is built from no documents, or only empty ones."""


class EmptyQueryError(GraphRAGError, ValueError):
    """Raised when a query is empty or only whitespace."""


class DocumentLoadError(GraphRAGError, ValueError):
    """Raised when a document cannot be read (missing file, undecodable bytes, bad type)."""


class IndexMismatchError(GraphRAGError, ValueError):
    """Raised when a persisted index does not match what loads it (method, model, dimension)."""


class IndexNotFoundError(GraphRAGError, FileNotFoundError):
    """Raised when a directory holds no persisted index."""


class LLMOutputError(GraphRAGError, ValueError):
    """Raised when an LLM reply cannot be parsed into the structure asked for."""


class ModelUnavailableError(GraphRAGError, RuntimeError):
    """Raised when a model name or path cannot be resolved (offline without the package...)."""
