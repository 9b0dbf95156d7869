"""Typed parameters: conversion of command-line strings, validation, presets, help tables."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import pytest

from graphrag_integrations.core.index.build_options import named_parameters
from graphrag_integrations.core.params import (
    InvalidParameterError,
    NoParams,
    Params,
    param,
)
from graphrag_integrations.methods.clue.params import PAPER_QITER, ClueIndexParams, QIterParams


@dataclass(frozen=True)
class Toy(Params):
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {"default": {}, "wide": {"width": 9, "x": 0.5}}

    width: int = param(3, symbol="W", doc="width", ge=1, le=10)
    x: float = param(0.0, symbol="ξ", doc="mix", gt=-1.0, lt=1.0)
    on: bool = param(True, doc="switch")
    name: str = param("a", doc="a name")
    mode: Literal["fast", "exact"] = param("fast", doc="mode")
    limit: int | None = param(None, doc="optional cap", ge=0)
    tags: tuple[str, ...] = param((), doc="ordered tags")
    labels: frozenset[str] = param(frozenset({"DATE"}), doc="label set")
    note: str = param("", doc="not a kwarg", kwarg=False)


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"width": "7"}, {"width": 7}),
        ({"x": "-0.25"}, {"x": -0.25}),
        ({"x": 0}, {"x": 0.0}),
        ({"on": "false"}, {"on": False}),
        ({"on": "YES"}, {"on": True}),
        ({"on": False}, {"on": False}),
        ({"name": "123"}, {"name": "123"}),
        ({"mode": "exact"}, {"mode": "exact"}),
        ({"limit": "none"}, {"limit": None}),
        ({"limit": "4"}, {"limit": 4}),
        ({"tags": "b, a"}, {"tags": ("b", "a")}),
        ({"tags": '["x", "y"]'}, {"tags": ("x", "y")}),
        ({"tags": ["z"]}, {"tags": ("z",)}),
        ({"labels": "TIME,DATE"}, {"labels": frozenset({"TIME", "DATE"})}),
        ({"labels": ""}, {"labels": frozenset()}),
    ],
)
def test_values_are_converted_to_the_field_type(
    options: dict[str, Any], expected: dict[str, Any]
) -> None:
    got = Toy.from_options(options)
    for name, value in expected.items():
        assert getattr(got, name) == value
        assert type(getattr(got, name)) is type(value)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"width": "3.5"}, "option t.width: expected an integer, got '3.5'"),
        ({"width": True}, "option t.width: expected an integer, got True"),
        ({"width": 0}, "option t.width: must be >= 1, got 0"),
        ({"width": 11}, "option t.width: must be <= 10, got 11"),
        ({"x": "nan"}, "option t.x: expected a finite number, got 'nan'"),
        ({"x": -1}, "option t.x: must be > -1, got -1.0"),
        ({"x": "1"}, "option t.x: must be < 1, got 1.0"),
        ({"on": "maybe"}, "option t.on: expected true or false, got 'maybe'"),
        ({"name": 3}, "option t.name: expected a string, got 3"),
        ({"mode": "slow"}, "option t.mode: expected one of 'fast', 'exact', got 'slow'"),
        ({"limit": "-1"}, "option t.limit: must be >= 0, got -1"),
        ({"tags": [1]}, "option t.tags: expected strings (comma-separated or a list), got [1]"),
        ({"tags": "[1"}, "option t.tags: invalid JSON list '[1'"),
        ({"preset": "narrow"}, "option t.preset: unknown preset 'narrow'; valid presets: default"),
    ],
)
def test_bad_values_are_one_line_errors(options: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidParameterError) as exc:
        Toy.from_options(options, prefix="t.")
    assert str(exc.value) == message or str(exc.value).startswith(message)
    assert "\n" not in str(exc.value)


def test_unknown_option_names_every_valid_option_and_symbol() -> None:
    with pytest.raises(InvalidParameterError) as exc:
        Toy.from_options({"widht": 3}, prefix="toy.")
    assert str(exc.value) == (
        "unknown option 'toy.widht'; valid options: width (W), x (ξ), on, name, mode, limit, "
        "tags, labels, note, preset (default | wide)"
    )


def test_direct_construction_is_validated_too() -> None:
    with pytest.raises(InvalidParameterError, match="option K: must be >= 1, got 0"):
        QIterParams(K=0)
    with pytest.raises(InvalidParameterError, match="option chunk_vectors"):
        ClueIndexParams(chunk_vectors="sum")  # type: ignore[arg-type]


def test_presets_apply_under_explicit_options() -> None:
    wide = Toy.from_options({"preset": "wide"})
    assert (wide.width, wide.x) == (9, 0.5)
    mixed = Toy.from_options({"preset": "wide", "width": "2"})
    assert (mixed.width, mixed.x) == (2, 0.5)
    assert Toy.from_options({"preset": "default"}) == Toy()
    assert "preset" in Toy.names() and "preset" not in NoParams.names()
    with pytest.raises(InvalidParameterError, match="unknown option 'preset'"):
        NoParams.from_options({"preset": "default"})


def test_to_kwargs_leaves_out_non_kwarg_fields() -> None:
    kwargs = Toy(width=4).to_kwargs()
    assert kwargs["width"] == 4 and "note" not in kwargs
    assert list(kwargs) == ["width", "x", "on", "name", "mode", "limit", "tags", "labels"]


def test_describe_table() -> None:
    lines = Toy.describe().splitlines()
    assert lines[0].split() == ["option", "symbol", "type", "default", "range", "description"]
    rows = {line.split()[0]: line for line in lines[1:]}
    assert rows["width"].split() == ["width", "W", "int", "3", "[1,", "10]", "width"]
    assert rows["x"].split()[:5] == ["x", "ξ", "float", "0.0", ">"]
    assert "> -1, < 1" in rows["x"]
    assert "'fast' | 'exact'" in rows["mode"] and "int | None" in rows["limit"]
    assert "'default' | 'wide'" in rows["preset"]


def test_unsupported_field_types_fail_at_first_use() -> None:
    @dataclass(frozen=True)
    class Bad(Params):
        values: list[int] = param((), doc="a list")  # noqa: RUF009

    with pytest.raises(TypeError, match="unsupported parameter type"):
        Bad.specs()
    with pytest.raises(TypeError, match="reserved"):

        @dataclass(frozen=True)
        class Reserved(Params):
            preset: str = param("x", doc="clashes")

        Reserved.specs()


def test_union_other_than_optional_is_refused() -> None:
    @dataclass(frozen=True)
    class Either(Params):
        value: int | str = param(1, doc="a number or a name")

    with pytest.raises(TypeError, match=r"only X \| None unions"):
        Either.specs()


# -- the indexes take their parameter classes (the API contract) ----------------------------
@pytest.mark.parametrize(
    "target",
    [
        "graphrag_integrations.methods.clue.index:ClueIndex",
        "graphrag_integrations.methods.qcg.index:QueryCentricGraphIndex",
        "graphrag_integrations.methods.kgt.index:ParseKGTranslatorRetriever",
        "graphrag_integrations.baselines.dense:DenseRetriever",
        "graphrag_integrations.baselines.bm25:BM25Retriever",
        "graphrag_integrations.baselines.hybrid:HybridRetriever",
    ],
)
def test_constructors_take_the_param_classes_not_their_fields(target: str) -> None:
    import importlib

    module, _, name = target.partition(":")
    cls = getattr(importlib.import_module(module), name)
    index_class, query_class = cls.index_params_class, cls.query_params_class()
    for parameters in (inspect.signature(cls).parameters, named_parameters(cls.from_documents)):
        assert parameters["index_params"].annotation == f"{index_class.__name__} | None"
        assert parameters["query_params"].annotation == f"{query_class.__name__} | None"
        assert "preset" in parameters
        fields = {s.name for s in (*index_class.specs(), *query_class.specs())}
        assert not fields & set(parameters), sorted(fields & set(parameters))
        assert all(p.kind is not inspect.Parameter.VAR_KEYWORD for p in parameters.values())


def test_clue_symbols_follow_the_paper_table() -> None:
    symbols = {s.name: s.symbol for s in (*ClueIndexParams.specs(), *QIterParams.specs())}
    assert symbols["alpha"] == "α"
    assert all(symbols[n] == n for n in "KDMN")


def test_paper_preset_is_qiter_paper() -> None:
    from graphrag_integrations.methods.clue.index import ClueIndex
    from graphrag_integrations.methods.clue.qiter import QIter
    from tests.conftest import FakeEmbedder
    from tests.unit.clue_fixtures import documents

    index = ClueIndex.from_documents(documents()[:2], embedding=FakeEmbedder())
    ours = QIter(index, **QIterParams.from_options({"preset": "paper", "D": 2}).to_kwargs())
    paper = QIter.paper(index, D=2)
    for attr in ("renormalize_query", "path_weight", "D", "K", "M", "N", "query_updating"):
        assert getattr(ours, attr) == getattr(paper, attr), attr
    for attr in ("lexical_weight", "path_vector"):
        assert getattr(ours.scorer, attr) == getattr(paper.scorer, attr), attr
    assert set(PAPER_QITER) <= {s.name for s in QIterParams.specs()}
