"""Method registrations: validation, option splitting, declared inputs, discovery, cheap listing."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest

from graphrag_integrations.core.params import InvalidParameterError, NoParams, Params, param
from graphrag_integrations.core.registry import (
    MethodOptions,
    MethodRegistration,
    MethodUnavailableError,
    UnknownMethodError,
)
from graphrag_integrations.errors import GraphRAGError
from graphrag_integrations.evaluation import registry
from graphrag_integrations.methods.clue.params import ClueIndexParams, QIterParams
from graphrag_integrations.methods.clue.registration import CLUE

SRC = Path(__file__).resolve().parents[3] / "src"


@dataclass(frozen=True)
class IndexP(Params):
    depth: int = param(2, doc="d", ge=1)


@dataclass(frozen=True)
class QueryP(Params):
    top: int = param(5, doc="t", ge=1)


@dataclass(frozen=True)
class ClashP(Params):
    depth: int = param(1, doc="same name as IndexP.depth")


CALLS: list[dict[str, Any]] = []


def strict_builder(
    embedder: Any,
    *,
    triples: list[tuple[str, str, str]],
    questions: list[Any],
    index_params: IndexP,
    query_params: QueryP,
    show_progress: bool,
    llm: Any = None,
) -> str:
    """No ``passages`` and no ``**kwargs``: an undeclared input would be a TypeError."""
    CALLS.append(
        {"triples": triples, "questions": questions, "index": index_params, "query": query_params}
    )
    return "built"


def make(**kwargs: Any) -> MethodRegistration:
    fields: dict[str, Any] = {
        "name": "toy",
        "index_class": "graphrag_integrations.baselines.bm25:BM25Retriever",
        "builder": f"{__name__}:strict_builder",
        "index_params": IndexP,
        "query_params": QueryP,
        "inputs": frozenset({"triples", "questions"}),
        "objects": {"llm": "an LLM"},
    }
    fields.update(kwargs)
    return MethodRegistration(**fields)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": "a.b"}, "invalid method name"),
        ({"name": ""}, "invalid method name"),
        ({"builder": "no_colon"}, "builder must be 'module:attr'"),
        ({"index_class": "mod:"}, "index_class must be 'module:attr'"),
        ({"inputs": frozenset()}, "inputs must be a non-empty subset"),
        ({"inputs": frozenset({"passages", "images"})}, "inputs must be a non-empty subset"),
        ({"query_params": ClashP}, "option 'depth' is in both index and query"),
        ({"objects": {"top": "x"}}, "option 'top' is in both query and objects"),
        ({"objects": {"passages": "x"}}, "option name 'passages' is reserved"),
    ],
)
def test_registration_is_validated(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make(**kwargs)


def test_parse_options_splits_by_phase() -> None:
    llm = object()
    opts = make().parse_options({"depth": "4", "top": 2, "llm": llm})
    assert opts.index_params == IndexP(depth=4) and opts.query_params == QueryP(top=2)
    assert opts.objects == {"llm": llm}
    with pytest.raises(InvalidParameterError, match="takes a Python object"):
        make().parse_options({"llm": "smol"}, cli=True)
    with pytest.raises(InvalidParameterError) as exc:
        make().parse_options({"deep": 1})
    assert str(exc.value) == "unknown option 'toy.deep'; valid options: depth; top; llm (object)"


def test_named_objects_take_a_name_from_the_command_line() -> None:
    named = make(named_objects=frozenset({"llm"}))
    assert named.parse_options({"llm": "HuggingFaceTB/SmolLM2-135M"}, cli=True).objects == {
        "llm": "HuggingFaceTB/SmolLM2-135M"
    }
    assert "llm (object or name)" in named.option_list()
    with pytest.raises(ValueError, match="named_objects"):
        make(named_objects=frozenset({"depth"}))


def test_build_passes_only_the_declared_inputs() -> None:
    CALLS.clear()
    inputs = {"passages": ["p"], "triples": [("a", "r", "b")], "questions": ["q"]}
    assert make().build("emb", inputs, {"top": "3"}) == "built"
    (call,) = CALLS
    assert call["triples"] == [("a", "r", "b")] and call["questions"] == ["q"]
    assert call["query"] == QueryP(top=3) and call["index"] == IndexP()
    with pytest.raises(ValueError, match="method 'toy' needs questions"):
        make().build("emb", {"triples": []})


def test_clue_registration_routes_index_and_query_options() -> None:
    opts = CLUE.parse_options(
        {"alpha": "0.5", "excluded_labels": "DATE", "K": "4", "preset": "paper", "llm": None}
    )
    assert isinstance(opts, MethodOptions)
    assert opts.index_params == ClueIndexParams(alpha=0.5, excluded_labels=frozenset({"DATE"}))
    assert opts.query_params == QIterParams(
        K=4,
        renormalize_query=False,
        lexical_weight=0.0,
        path_vector="encode",
        path_weight=0.0,
        ppr_weight=0.0,
    )
    assert opts.objects == {"llm": None}
    assert CLUE.presets == ("default", "paper")
    text = CLUE.describe()
    assert "index options:" in text and "query options:" in text and "vector_index:" in text


@dataclass(frozen=True)
class PresetIndexP(Params):
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {"a": {}, "b": {"depth": 3}}
    depth: int = param(2, doc="d", ge=1)


@dataclass(frozen=True)
class PresetQueryP(Params):
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {"a": {}, "b": {"top": 9}}
    top: int = param(5, doc="t", ge=1)


def test_a_preset_spanning_both_phases_goes_to_both() -> None:
    reg = make(index_params=PresetIndexP, query_params=PresetQueryP)
    opts = reg.parse_options({"preset": "b", "top": "4"})
    assert opts.index_params == PresetIndexP(depth=3) and opts.query_params == PresetQueryP(top=4)
    assert reg.presets == ("a", "b") and reg.option_names().count("preset") == 1
    with pytest.raises(InvalidParameterError, match="unknown preset 'c'"):
        reg.parse_options({"preset": "c"})
    with pytest.raises(ValueError, match="'depth' is in both"):
        make(index_params=PresetIndexP, query_params=ClashP)


def test_builtin_registrations_and_errors() -> None:
    assert registry.method_names() == [
        "bm25",
        "clue",
        "dense",
        "hybrid",
        "kgt",
        "ppr",
        "qcg",
        "reg",
        "reg-weak",
    ]
    assert registry.get_registration("clue") is CLUE
    assert registry.resolve_index_class("clue").__name__ == "ClueIndex"
    with pytest.raises(UnknownMethodError, match="unknown method 'nope'; known methods: bm25"):
        registry.get_registration("nope")
    missing = make(builder="graphrag_integrations.nowhere:build")
    with pytest.raises(MethodUnavailableError, match="method 'toy' is not available"):
        missing.resolve_builder()
    with pytest.raises(ValueError, match="already registered"):
        registry.register(registry.get_registration("bm25"))


@dataclass
class FakeEntryPoint:
    name: str
    value: str
    target: Any

    def load(self) -> Any:
        if isinstance(self.target, Exception):
            raise self.target
        return self.target


@pytest.fixture
def fresh_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[FakeEntryPoint]]:
    eps: list[FakeEntryPoint] = []
    monkeypatch.setattr(registry, "_registry", None)
    monkeypatch.setattr(registry, "_errors", {})
    monkeypatch.setattr(registry, "entry_points", lambda group: eps)
    yield eps


def test_entry_points_add_methods_and_broken_ones_are_reported(
    fresh_registry: list[FakeEntryPoint],
) -> None:
    other = make(name="other")
    module_like = type("Module", (), {"REGISTRATIONS": (make(name="third"),)})
    fresh_registry += [
        FakeEntryPoint("toy", "pkg:REG", make()),
        FakeEntryPoint("other", "pkg:regs", [other]),
        FakeEntryPoint("third", "pkg", module_like),
        FakeEntryPoint("broken", "pkg.broken:REG", ImportError("no module named pkg.broken")),
        FakeEntryPoint("junk", "pkg:junk", 42),
    ]
    names = registry.method_names()
    assert names == [
        "bm25",
        "clue",
        "dense",
        "hybrid",
        "kgt",
        "other",
        "ppr",
        "qcg",
        "reg",
        "reg-weak",
        "third",
        "toy",
    ]
    errors = registry.load_errors()
    assert errors["broken"] == "ImportError: no module named pkg.broken"
    assert errors["junk"].startswith("TypeError: entry point 'junk' (pkg:junk) provides no")


def test_a_name_registered_twice_is_an_error(fresh_registry: list[FakeEntryPoint]) -> None:
    fresh_registry.append(FakeEntryPoint("dense", "pkg:REG", make(name="dense")))
    with pytest.raises(ValueError, match="method 'dense' is registered twice"):
        registry.registrations()


def test_listing_methods_imports_no_model_library() -> None:
    code = (
        "import sys\n"
        "from graphrag_integrations.evaluation.registry import registrations\n"
        "regs = registrations()\n"
        "for reg in regs.values():\n"
        "    reg.describe()\n"
        "heavy = ('torch', 'spacy', 'transformers', 'sentence_transformers', 'bm25s',\n"
        "         'chromadb', 'langchain_core', 'llama_index')\n"
        "print(sorted(regs), [m for m in heavy if m in sys.modules])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(SRC)},
    ).stdout
    assert (
        out.strip()
        == "['bm25', 'clue', 'dense', 'hybrid', 'kgt', 'ppr', 'qcg', 'reg', 'reg-weak'] []"
    )


def test_methods_and_baselines_do_not_import_evaluation() -> None:
    import ast

    pkg = SRC / "graphrag_integrations"
    for folder in ("core", "adapters", "baselines", "methods"):
        for file in (pkg / folder).rglob("*.py"):
            tree = ast.parse(file.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                names = (
                    [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module or ""]
                    if isinstance(node, ast.ImportFrom)
                    else []
                )
                for name in names:
                    assert not name.startswith("graphrag_integrations.evaluation"), file


def test_noparams_registration_defaults() -> None:
    reg = MethodRegistration("plain", "m:C", "m:build")
    assert reg.index_params is NoParams and reg.inputs == frozenset({"passages"})
    assert reg.option_list() == "(none)"


def toy_trainer(dataset: Any, out: Any, *, params: Any, show_progress: bool) -> dict[str, Any]:
    """A trainer for the registry tests: records its arguments."""
    return {"dataset": str(dataset), "out": str(out), "depth": params.depth}


def test_trainer_is_resolved_and_described() -> None:
    reg = make(trainer=f"{__name__}:toy_trainer", train_params=IndexP)
    assert reg.resolve_trainer() is toy_trainer
    assert "train options" in reg.describe()
    with pytest.raises(GraphRAGError, match="nothing to train"):
        make().resolve_trainer()
    with pytest.raises(ValueError, match="trainer must be 'module:attr'"):
        make(trainer="no-colon")
