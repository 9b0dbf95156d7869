"""Graph-RAG methods built on the framework-free core (one sub-package per paper)."""
