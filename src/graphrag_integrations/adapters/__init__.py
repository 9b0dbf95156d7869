"""Thin adapters: any core retriever becomes a LangChain / LlamaIndex retriever, engine or tool."""
