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


class CorruptIndexError(IndexMismatchError):
    """Raised when a persisted index is damaged: a file is missing, truncated or edited (its
    checksum differs from the manifest's), unreadable, or holds NaN/infinite vectors.

    The message names the file. A subclass of :class:`IndexMismatchError`, so handlers of
    unloadable indexes keep catching it.
    """


class IndexNotFoundError(GraphRAGError, FileNotFoundError):
    """Raised when a directory holds no persisted index."""


class IndexExistsError(GraphRAGError, FileExistsError):
    """Raised when ``persist`` would replace something that is not an index of the same method
    (a folder of documents, another method's index) without ``overwrite=True``, or would
    overwrite a file the index did not write."""


class InvalidArgumentError(GraphRAGError, ValueError):
    """Raised when an argument has a value out of range (e.g. ``k=0``)."""


class InvalidArgumentTypeError(InvalidArgumentError, TypeError):
    """Raised when an argument has the wrong type (e.g. ``k="3"``); also a ``TypeError``."""


class LLMOutputError(GraphRAGError, ValueError):
    """Raised when an LLM reply cannot be parsed into the structure asked for."""


class ModelUnavailableError(GraphRAGError, RuntimeError):
    """Raised when a model name or path cannot be resolved (offline without the package...)."""
