"""LLM access for every method: one protocol, framework adapters, a caching client.

Examples
--------
>>> from graphrag_integrations.core.llm import LLMClient
>>> client = LLMClient(lambda prompt: '["Paris", "France"]')
>>> client.complete_json("List two entities as JSON.")
['Paris', 'France']
"""

from __future__ import annotations

from graphrag_integrations.core.llm.adapters import (
    CallableLLM,
    LangChainLLM,
    LlamaIndexLLM,
    as_llm,
    usage_from,
)
from graphrag_integrations.core.llm.cache import ResponseCache, cache_key
from graphrag_integrations.core.llm.client import LLMClient
from graphrag_integrations.core.llm.gguf import cache_root, convert_gguf, default_gguf_path
from graphrag_integrations.core.llm.json_output import extract_json, strip_trailing_commas
from graphrag_integrations.core.llm.precision import preferred_dtype, resolve_dtype
from graphrag_integrations.core.llm.protocol import LLM, LLMResult, estimate_tokens
from graphrag_integrations.core.llm.transformers_lm import TransformersLLM
from graphrag_integrations.core.llm.usage import TokenUsage

__all__ = [
    "LLM",
    "CallableLLM",
    "LLMClient",
    "LLMResult",
    "LangChainLLM",
    "LlamaIndexLLM",
    "ResponseCache",
    "TokenUsage",
    "TransformersLLM",
    "as_llm",
    "cache_key",
    "cache_root",
    "convert_gguf",
    "default_gguf_path",
    "estimate_tokens",
    "extract_json",
    "preferred_dtype",
    "resolve_dtype",
    "strip_trailing_commas",
    "usage_from",
]
