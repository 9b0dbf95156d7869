"""The API contract (issue 19 §2) for every registered method, read from the registry.

Each method's index: ``from_documents`` names every argument (no untyped ``**kwargs``; the
shared options are ``**options: Unpack[DocumentBuildOptions]``) including
``index_params``, ``query_params`` and ``preset`` (and ``embedding`` when its constructor
takes one); its parameter classes are the registration's, exported from
``graphrag_integrations`` as ``<Method>IndexParams`` / ``<Method>QueryParams`` (the baselines'
index params may be ``NoParams``), with a ``"default"`` preset (and ``"paper"`` for the
methods); ``preset`` together with a params object is refused before any document is read.
The retrieval half (``as_retriever(k=2)``, ``retrieve(q, k=1)``, unknown overrides) is in the
compliance suite every index runs (``graphrag_integrations.testing``).
"""

from __future__ import annotations

import inspect
from typing import Any

import pytest

import graphrag_integrations as gi
from graphrag_integrations.core.index.build_options import DocumentBuildOptions, named_parameters
from graphrag_integrations.core.params import NoParams
from graphrag_integrations.core.registry import MethodRegistration
from graphrag_integrations.errors import InvalidArgumentError
from graphrag_integrations.evaluation.registry import get_registration, method_names
from graphrag_integrations.testing import FakeEmbedder

METHODS = method_names()


def registration(name: str) -> MethodRegistration:
    reg: MethodRegistration = get_registration(name)
    return reg


def index_class(name: str) -> Any:
    return registration(name).resolve_index_class()


def test_every_builtin_method_is_checked() -> None:
    assert {"clue", "qcg", "kgt", "reg", "dense", "bm25", "hybrid", "ppr"} <= set(METHODS)


@pytest.mark.parametrize("name", METHODS)
def test_from_documents_names_every_argument(name: str) -> None:
    cls = index_class(name)
    parameters = named_parameters(cls.from_documents)
    assert all(p.kind is not inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    assert {"index_params", "query_params", "preset"} <= set(parameters)
    assert {"splitter", "errors", "path", "checkpoint_dir", "executor"} <= set(parameters)
    if "embedding" in inspect.signature(cls).parameters:
        assert "embedding" in parameters


@pytest.mark.parametrize("name", METHODS)
def test_from_documents_takes_only_document_options_and_constructor_arguments(name: str) -> None:
    cls = index_class(name)
    own = set(named_parameters(cls.from_documents)) - {"documents"}
    own -= set(DocumentBuildOptions.__annotations__)
    accepted = set(inspect.signature(cls).parameters)
    accepted |= set(inspect.signature(cls.from_passages).parameters)
    assert own <= accepted, sorted(own - accepted)


@pytest.mark.parametrize("name", METHODS)
def test_the_parameter_classes_are_exported_under_the_method_name(name: str) -> None:
    reg, cls = registration(name), index_class(name)
    prefix = name.split("-")[0].lower()
    for params, kind in ((reg.query_params, "QueryParams"), (reg.index_params, "IndexParams")):
        if params is NoParams and reg.index_class.startswith("graphrag_integrations.baselines."):
            continue  # a baseline without index-time options
        assert params.__name__.lower() == f"{prefix}{kind.lower()}", params.__name__
        assert getattr(gi, params.__name__) is params
    assert cls.query_params_class() is reg.query_params
    assert cls.index_params_class is reg.index_params


@pytest.mark.parametrize("name", METHODS)
def test_the_presets(name: str) -> None:
    reg = registration(name)
    assert "default" in reg.query_params.PRESETS
    if reg.index_class.startswith("graphrag_integrations.methods."):
        assert "paper" in reg.query_params.PRESETS
        assert "paper" in reg.index_params.PRESETS


@pytest.mark.parametrize("name", METHODS)
def test_a_preset_and_a_params_object_are_refused_together(name: str) -> None:
    cls = index_class(name)
    options: dict[str, Any] = {"preset": "default", "query_params": cls.query_params_class()()}
    if "embedding" in inspect.signature(cls.from_documents).parameters:
        options["embedding"] = FakeEmbedder()

    class Unread:
        def __iter__(self) -> Any:
            raise AssertionError("the documents were read before the arguments were checked")

    with pytest.raises(InvalidArgumentError, match="preset='default'"):
        cls.from_documents(Unread(), **options)


def test_the_paper_presets_keep_todays_paper_settings() -> None:
    qcg, kgt, clue = (registration(n) for n in ("qcg", "kgt", "clue"))
    assert qcg.parse_options({"preset": "paper"}) == qcg.parse_options({"preset": "multihop-rag"})
    assert kgt.parse_options({"preset": "paper"}) == kgt.parse_options({"preset": "paper-hotpotqa"})
    opts = clue.parse_options({"preset": "paper"})
    assert opts.query_params == gi.ClueQueryParams.from_options({"preset": "paper"})
    assert opts.index_params == gi.ClueIndexParams()


# -- retrieval: k is the number of results; bound query params ------------------------------
DOCS = [f"Town {i} lies on the river {name}." for i, name in enumerate("ABCDEFG")]


def test_k_of_the_call_wins_over_the_retriever_which_wins_over_the_params() -> None:
    index = gi.DenseRetriever.from_documents(
        DOCS, embedding=FakeEmbedder(), query_params=gi.DenseQueryParams(k=3)
    )
    retriever = index.as_retriever(k=2)
    assert len(index.retrieve("river C")) == 3
    assert len(retriever.retrieve("river C")) == 2
    assert len(retriever.retrieve("river C", k=1)) == 1
    assert retriever.default_k == 2 and index.as_retriever().default_k == 3
    assert len(index.as_retriever(k=6).as_retriever().retrieve("river C")) == 6  # k is kept


def test_a_bound_retriever_queries_with_its_params_and_leaves_the_index_alone() -> None:
    index = gi.HybridRetriever.from_documents(DOCS, embedding=FakeEmbedder())
    rrf = index.as_retriever(fusion="rrf", weight="0.7")  # strings, as on a command line
    assert rrf.query_params == gi.HybridQueryParams(fusion="rrf", weight=0.7)
    assert rrf.retrieve("river C")[0].explanation == {
        "method": "hybrid",
        "fusion": "rrf",
        "weight": 0.7,
    }
    assert index.retrieve("river C")[0].explanation["fusion"] == "minmax"
    assert index.query_params == gi.HybridQueryParams()
    same = index.as_retriever(query_params=gi.HybridQueryParams(fusion="rrf", weight=0.7))
    assert [h.id for h in same.retrieve("river C")] == [h.id for h in rrf.retrieve("river C")]


def test_bound_params_are_seen_only_by_the_query_that_runs_with_them() -> None:
    import threading

    index = gi.HybridRetriever.from_documents(DOCS, embedding=FakeEmbedder())
    seen: list[str] = []
    inside, done = threading.Event(), threading.Event()

    def other_thread() -> None:
        inside.wait(10)
        seen.append(index.query_params.fusion)
        done.set()

    thread = threading.Thread(target=other_thread)
    thread.start()
    with index.using_query_params(gi.HybridQueryParams(fusion="rrf")):
        assert index.query_params.fusion == "rrf"
        inside.set()
        done.wait(10)
    thread.join()
    assert seen == ["minmax"] and index.query_params.fusion == "minmax"


def test_bad_query_options_are_one_line_errors() -> None:
    from graphrag_integrations.core.params import InvalidParameterError
    from graphrag_integrations.errors import InvalidArgumentTypeError

    index = gi.BM25Retriever.from_documents(DOCS)
    with pytest.raises(InvalidParameterError, match="unknown option 'fusion'; valid options: k"):
        index.as_retriever(fusion="rrf")
    with pytest.raises(InvalidParameterError, match="unknown option 'preset'"):
        index.as_retriever(preset="default")
    with pytest.raises(InvalidParameterError, match="option k: must be >= 1"):
        index.as_retriever(query_params={"k": 0})
    with pytest.raises(InvalidArgumentTypeError, match="query_params must be a BM25QueryParams"):
        index.as_retriever(query_params=gi.HybridQueryParams())
    with pytest.raises(InvalidArgumentTypeError, match="query_params must be a BM25QueryParams"):
        gi.BM25Retriever.from_documents(DOCS, query_params=gi.DenseQueryParams())  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="unknown preset 'nope'"):
        gi.BM25Retriever.from_documents(DOCS, preset="nope")
