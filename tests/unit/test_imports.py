"""Import tests: the packages are light, their public names are pinned and resolve lazily.

The ``__all__`` lists are pinned on purpose: adding or removing a public name is an API change
that must show up in review (update the list here in the same change).
"""

from __future__ import annotations

import importlib
import inspect
import json
import subprocess
import sys
from types import ModuleType

import pytest

import graphrag_integrations as gi

#: Libraries none of the modules below may import when they are imported.
HEAVY = (
    "torch",
    "transformers",
    "sentence_transformers",
    "spacy",
    "chromadb",
    "langchain_core",
    "langchain_tests",
    "llama_index",
    "bm25s",
    "networkx",
    "pytest",
    "mcp",
    "uvicorn",
)

TOP_LEVEL_ALL = [
    "__version__",
    "BM25QueryParams",
    "BM25Retriever",
    "BiEncoderReranker",
    "BoundRetriever",
    "ChromaVectorIndex",
    "ChromaVectors",
    "ClueIndex",
    "ClueIndexParams",
    "ClueQueryParams",
    "CrossEncoderReranker",
    "DenseQueryParams",
    "DenseRetriever",
    "FalkorDBGraph",
    "FalkorDBVectorIndex",
    "FalkorDBVectors",
    "GraphStore",
    "HybridQueryParams",
    "HybridRetriever",
    "InMemoryVectorIndex",
    "IndexStore",
    "KGTIndexParams",
    "KGTQueryParams",
    "KGTTrainParams",
    "LLMClient",
    "LangChainRetriever",
    "LangChainVectorIndex",
    "LangChainVectors",
    "LlamaIndexRetriever",
    "LlamaIndexVectorIndex",
    "LlamaIndexVectors",
    "LocalExecutor",
    "NoParams",
    "PPRIndexParams",
    "PPRQueryParams",
    "PPRRetriever",
    "ParseKGTranslatorRetriever",
    "Passage",
    "QCGIndexParams",
    "QCGQueryParams",
    "QIter",
    "QIterParams",
    "QueryCentricGraphIndex",
    "RayExecutor",
    "RefinedSubgraphRetriever",
    "RegIndexParams",
    "RegQueryParams",
    "RegTrainParams",
    "RetrievedPassage",
    "SentenceTransformerEmbedder",
    "SourceDocument",
    "SpacyNLP",
    "TokenChunker",
    "TransformersLLM",
    "as_embedder",
    "as_llm",
    "as_reranker",
    "load_documents",
]

#: package -> its exact ``__all__`` (``None``: the package defines none and exports nothing).
SUBPACKAGE_ALL: dict[str, list[str] | None] = {
    "graphrag_integrations.adapters": None,
    "graphrag_integrations.baselines": None,
    "graphrag_integrations.core": None,
    "graphrag_integrations.core.constraints": [
        "AllowedFn",
        "ConstrainedLogitsProcessor",
        "DeadBeam",
        "SubstringIndex",
        "TokenIds",
        "TokenTrie",
        "TrieStats",
        "Verdict",
    ],
    "graphrag_integrations.core.llm": [
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
    ],
    "graphrag_integrations.evaluation": [
        "AnswerRanker",
        "Dataset",
        "EvalReport",
        "EvidenceRanker",
        "KGDataset",
        "KGQuestion",
        "Question",
        "evaluate_retriever",
        "format_report",
        "get_registration",
        "load_corpus",
        "load_dataset",
        "load_lihuaworld",
        "load_metaqa",
        "method_names",
        "register",
        "resolve_method",
        "run_eval",
    ],
    "graphrag_integrations.methods": None,
    "graphrag_integrations.methods.clue": None,
    "graphrag_integrations.methods.kgt": None,
    "graphrag_integrations.methods.qcg": None,
    "graphrag_integrations.methods.reg": None,
    "graphrag_integrations.testing": [
        "CORPUS",
        "CorpusDocument",
        "FakeEmbedder",
        "IndexComplianceTests",
        "compliance_documents",
    ],
}

#: Packages with lazy (PEP 562) public names.
LAZY_PACKAGES = (
    "graphrag_integrations",
    "graphrag_integrations.evaluation",
    "graphrag_integrations.core.constraints",
    "graphrag_integrations.testing",
)


def loaded_after_import(module: str) -> list[str]:
    """The :data:`HEAVY` libraries in ``sys.modules`` after ``import module`` in a fresh
    interpreter."""
    code = (
        f"import json, sys, importlib; importlib.import_module({module!r}); "
        f"print(json.dumps([m for m in {list(HEAVY)!r} if m in sys.modules]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded: list[str] = json.loads(out.stdout)
    return loaded


def test_version_matches_the_distribution() -> None:
    from importlib.metadata import version

    assert gi.__version__ == "0.1.0"
    assert version("graphrag-integrations") == gi.__version__


@pytest.mark.parametrize(
    "module",
    [
        "graphrag_integrations",
        "graphrag_integrations.testing",
        "graphrag_integrations.evaluation",
        "graphrag_integrations.core.llm",
        "graphrag_integrations.baselines.dense",
        "graphrag_integrations.methods.clue.index",
        "graphrag_integrations.methods.qcg.index",
        "graphrag_integrations.methods.reg.index",
        "graphrag_integrations.methods.reg.registration",
        "graphrag_integrations.cli",
    ],
)
def test_import_loads_no_heavy_library(module: str) -> None:
    assert loaded_after_import(module) == []


def test_the_heavy_check_sees_a_heavy_import() -> None:
    """The subprocess check above does detect a heavy library (it is not vacuous)."""
    assert "langchain_core" in loaded_after_import("graphrag_integrations.adapters.langchain")


def test_top_level_all_is_pinned() -> None:
    assert gi.__all__ == TOP_LEVEL_ALL
    assert dir(gi) == sorted(TOP_LEVEL_ALL)


@pytest.mark.parametrize("package", sorted(SUBPACKAGE_ALL))
def test_subpackage_all_is_pinned(package: str) -> None:
    module = importlib.import_module(package)
    assert getattr(module, "__all__", None) == SUBPACKAGE_ALL[package]


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_unknown_attribute_is_an_attribute_error_naming_the_package(package: str) -> None:
    module = importlib.import_module(package)
    with pytest.raises(AttributeError, match=f"module '{package}' has no attribute 'DoesNotExist'"):
        _ = module.DoesNotExist
    assert not hasattr(module, "DoesNotExist")


def defining_module(package: ModuleType, name: str) -> ModuleType:
    """The module a lazy package's ``_LAZY`` table names for ``name`` (or the package)."""
    lazy: dict[str, str] = getattr(package, "_LAZY", {})
    return importlib.import_module(lazy[name]) if name in lazy else package


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_lazy_names_resolve_to_the_defining_object_and_are_cached(package: str) -> None:
    module = importlib.import_module(package)
    for name in module.__all__:
        if name == "__version__":
            continue
        value = getattr(module, name)
        source = defining_module(module, name)
        assert value is getattr(source, name), name
        assert vars(module)[name] is value, f"{name} is not cached in {package}"
        if inspect.isclass(value) or inspect.isfunction(value):
            # the object is defined in the package tree, not a stray third-party re-export
            assert value.__module__.startswith("graphrag_integrations."), name


def test_top_level_names_are_the_classes_and_functions_users_call() -> None:
    for name in TOP_LEVEL_ALL:
        if name != "__version__":
            assert inspect.isclass(getattr(gi, name)) or callable(getattr(gi, name)), name
    assert gi.DenseRetriever.method == "dense"
    assert gi.ClueIndex.method == "clue"
    assert gi.ParseKGTranslatorRetriever.method == "kgt"
    assert gi.QueryCentricGraphIndex.method == "qcg"
    assert gi.RefinedSubgraphRetriever.method == "reg"
    assert gi.load_documents(["Paris is in France."])[0].text == "Paris is in France."
