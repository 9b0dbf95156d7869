"""The API contract (issue 19 §2) for every registered method, read from the registry.

Each method's index: ``from_documents`` names every argument (no ``**kwargs``) including
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
    assert {"clue", "qcg", "kgt", "reg", "dense", "bm25", "hybrid"} <= set(METHODS)


@pytest.mark.parametrize("name", METHODS)
def test_from_documents_names_every_argument(name: str) -> None:
    cls = index_class(name)
    parameters = inspect.signature(cls.from_documents).parameters
    assert all(p.kind is not inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    assert {"index_params", "query_params", "preset"} <= set(parameters)
    if "embedding" in inspect.signature(cls).parameters:
        assert "embedding" in parameters


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
