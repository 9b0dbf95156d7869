"""Source documents: accept what users have, give every document a stable id.

TODO(core-data helper): files and folders, encodings, size limits, chunking integration.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from graphrag_integrations.errors import DocumentLoadError


def content_id(*parts: str) -> str:
    """Stable 16-hex-digit id from the SHA-256 of ``parts`` (joined by a NUL byte).

    Examples
    --------
    >>> content_id("a", "b") == content_id("a", "b")
    True
    >>> len(content_id("hello"))
    16
    """
    h = hashlib.sha256("\x00".join(parts).encode("utf-8"))
    return h.hexdigest()[:16]


@dataclass(frozen=True)
class SourceDocument:
    """A document as given by the user, before chunking.

    ``id`` defaults to a content hash of the text; an id supplied by the user (or by the
    framework document) wins, so ``delete(doc_id)`` can use the user's own ids.
    """

    text: str
    id: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.id:
            object.__setattr__(self, "id", content_id(self.text))


def to_source_document(obj: Any) -> SourceDocument:
    """Convert one input (str, SourceDocument, LangChain or LlamaIndex document)."""
    if isinstance(obj, SourceDocument):
        return obj
    if isinstance(obj, str):
        return SourceDocument(text=obj)
    # LangChain Document: page_content / metadata / id
    if hasattr(obj, "page_content"):
        meta = dict(getattr(obj, "metadata", {}) or {})
        doc_id = getattr(obj, "id", None) or meta.get("doc_id") or ""
        return SourceDocument(text=str(obj.page_content), id=str(doc_id), metadata=meta)
    # LlamaIndex Document / TextNode: get_content() / metadata / id_ (ref_doc_id for nodes)
    if hasattr(obj, "get_content") and hasattr(obj, "metadata"):
        meta = dict(obj.metadata or {})
        doc_id = getattr(obj, "ref_doc_id", None) or getattr(obj, "id_", "") or ""
        return SourceDocument(text=str(obj.get_content()), id=str(doc_id), metadata=meta)
    raise DocumentLoadError(f"cannot turn a {type(obj).__name__} into a document")


def load_documents(inputs: Iterable[Any] | Any) -> list[SourceDocument]:
    """Normalise ``inputs`` into a list of :class:`SourceDocument`."""
    if isinstance(inputs, (str, SourceDocument)) or hasattr(inputs, "page_content"):
        inputs = [inputs]
    return [to_source_document(x) for x in inputs]
