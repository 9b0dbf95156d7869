"""The shared ``from_documents`` options (core.index.build_options): typed once, spelled out by
``named_parameters``, unknown keys refused before any document is read."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
from typing_extensions import Unpack

from graphrag_integrations.baselines.bm25 import BM25Retriever
from graphrag_integrations.core.index.build_options import (
    DocumentBuildOptions,
    DocumentOptions,
    named_parameters,
)
from graphrag_integrations.methods.reg.index import RefinedSubgraphRetriever


class NotTyped:
    pass


def typed(documents: Any, *, preset: str | None = None, **options: Unpack[DocumentOptions]) -> None:
    del documents, preset, options


def untyped(documents: Any, **options: Any) -> None:
    del documents, options


def unpacks_a_class(documents: Any, **options: Unpack[NotTyped]) -> None:  # type: ignore[misc]
    del documents, options


class Extra(DocumentOptions, total=False):
    depth: int


def extended(**options: Unpack[Extra]) -> None:
    del options


def test_an_unpacked_typed_dict_is_spelled_out_as_keyword_parameters() -> None:
    parameters = named_parameters(typed)
    assert list(parameters) == [
        "documents",
        "preset",
        "splitter",
        "chunking",
        "errors",
        "report",
        "path",
        "pattern",
    ]
    assert parameters["errors"].kind is inspect.Parameter.KEYWORD_ONLY
    assert parameters["errors"].annotation == "DecodeErrors"
    assert list(named_parameters(extended))[-1] == "depth"  # inherited keys first


@pytest.mark.parametrize("function", [untyped, unpacks_a_class])
def test_other_var_keywords_stay_hidden(function: Any) -> None:
    kinds = [p.kind for p in named_parameters(function).values()]
    assert kinds[-1] is inspect.Parameter.VAR_KEYWORD


def test_every_index_types_the_same_shared_options() -> None:
    shared = set(DocumentBuildOptions.__annotations__)
    for cls in (BM25Retriever, RefinedSubgraphRetriever):
        assert shared <= set(named_parameters(cls.from_documents))


class Unread:
    def __iter__(self) -> Any:
        raise AssertionError("the documents were read before the options were checked")


@pytest.mark.parametrize("cls", [BM25Retriever, RefinedSubgraphRetriever])
def test_an_unknown_option_is_refused_before_reading(cls: Any) -> None:
    with pytest.raises(TypeError, match=r"from_documents\(\) got an unexpected keyword argument"):
        cls.from_documents(Unread(), eror="skip")
