"""The framework surface every method shares (TODO(adapters helper): implement)."""

from __future__ import annotations


class FrameworkSurface:
    """Mixin giving a core retriever ``as_langchain_retriever`` and friends."""
