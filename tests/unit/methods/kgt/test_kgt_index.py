"""ParseKGTranslatorRetriever lifecycle: build, insert/delete == rebuild, persist/load, surface."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from graphrag_integrations.core.params import InvalidParameterError
from graphrag_integrations.core.types import Passage
from graphrag_integrations.errors import EmptyCorpusError, EmptyQueryError, IndexMismatchError
from graphrag_integrations.methods.kgt.index import ParseKGTranslatorRetriever
from graphrag_integrations.methods.kgt.params import KGTQueryParams
from graphrag_integrations.methods.kgt.registration import KGT, build
from graphrag_integrations.methods.kgt.store import CONSTRAINTS_DIR
from tests.conftest import FakeEmbedder
from tests.unit.kgt_fixtures import KGT_CORPUS, documents, make_kgt

QUESTIONS = ["Where was Marie Curie born?", "Who managed Nottingham Forest?", "Where is Paris?"]


@pytest.fixture(scope="module")
def index(lm: Any) -> ParseKGTranslatorRetriever:
    return make_kgt(lm)


@pytest.fixture(scope="module")
def paper_index(lm: Any) -> ParseKGTranslatorRetriever:
    """The paper's traced ranking (preset ``paper``) with the dense top-up switched on."""
    return make_kgt(lm, preset="paper", top_up=True)


def answers(index: ParseKGTranslatorRetriever) -> list[list[tuple[str, float, str]]]:
    return [
        [(r.id, round(r.score, 5), r.explanation["source"]) for r in index.retrieve(q)]
        for q in QUESTIONS
    ]


def test_build_stats_and_graph(index: ParseKGTranslatorRetriever) -> None:
    stats = index.stats()
    assert stats.passages == len(KGT_CORPUS)
    assert stats.hyperrelations == stats.sentences > stats.passages
    assert stats.entities == stats.entry_entities + stats.non_entry_entities
    assert stats.head_incidences >= stats.entry_entities
    assert index.timings["total"] > 0
    # the title line is not parsed into the first sentence
    assert all("\n" not in r.sentence for r in index.view.rels.values())


def test_retrieve_explains_clues_and_honours_k(paper_index: ParseKGTranslatorRetriever) -> None:
    index = paper_index
    results = index.retrieve("Where was Marie Curie born?", k=3)
    assert len(results) == 3
    json.dumps([r.explanation for r in results])  # JSON-serialisable
    traced = [r for r in results if r.explanation["source"] == "traced"]
    assert traced and all(r.explanation["clues"] for r in traced)
    for r in traced:
        for clue in r.explanation["clues"]:
            assert {"entity", "relation", "direction", "hyperedge", "sentence"} <= set(clue)
            assert clue["sentence"] in r.text
    scores = [r.score for r in traced]
    assert scores == sorted(scores, reverse=True)
    assert len(index.retrieve("Where was Marie Curie born?", k=1)) == 1


def test_top_up_is_flagged_and_switchable(lm: Any, paper_index: ParseKGTranslatorRetriever) -> None:
    full = paper_index.retrieve("Where was Marie Curie born?", k=8)
    assert len(full) == 8
    ctx = full[0].explanation["traced_passages"]
    assert sum(r.explanation["source"] == "traced" for r in full) == min(ctx, 8)
    ups = [r for r in full if r.explanation["source"] == "top_up"]
    assert len(ups) == 8 - min(ctx, 8) and all(r.explanation["clues"] == [] for r in ups)
    paper = make_kgt(lm, preset="paper")  # the paper: no top-up
    only = paper.retrieve("Where was Marie Curie born?", k=8)
    assert len(only) == ctx and all(r.explanation["source"] == "traced" for r in only)


def test_rrf_fusion_of_traced_and_dense_rankings(lm: Any) -> None:
    q = "Where was Marie Curie born?"
    # the traced ranking of the same settings, without fusion or top-up
    paper = make_kgt(lm, fusion="none", top_up=False)
    traced = [r.id for r in paper.retrieve(q, k=50)]
    fused_index = make_kgt(lm, fusion="rrf", fusion_k=10.0, fusion_weight=2.0, fusion_depth=4)
    fused = fused_index.retrieve(q, k=6)
    dense = [pid for pid, _ in fused_index._dense_ranking(q, 4)]
    assert traced and len(dense) == 4
    expected: dict[str, float] = {}
    for rank, pid in enumerate(traced, 1):
        expected[pid] = 2.0 / (10.0 + rank)
    for rank, pid in enumerate(dense, 1):
        expected[pid] = expected.get(pid, 0.0) + 1.0 / (10.0 + rank)
    order = sorted(expected, key=lambda p: (-expected[p], p))[:6]
    assert [r.id for r in fused] == order
    assert [r.score for r in fused] == pytest.approx([expected[p] for p in order])
    for r in fused:
        where = (r.id in traced, r.id in dense)
        assert (
            r.explanation["source"]
            == {
                (True, False): "traced",
                (False, True): "dense",
                (True, True): "traced+dense",
            }[where]
        )
        assert bool(r.explanation["clues"]) == (r.id in traced)
    assert fused_index.counters["fused_queries"] == 1
    with pytest.raises(InvalidParameterError):
        make_kgt(lm, fusion="max")


def test_defaults_are_the_rrf_product_mode_and_paper_restores_the_paper(
    index: ParseKGTranslatorRetriever,
) -> None:
    product = KGTQueryParams()
    assert (product.fusion, product.fusion_k, product.fusion_weight) == ("rrf", 5.0, 0.5)
    assert product.early_stopping is True and product.translator_dtype == "auto-fast"
    assert KGTQueryParams.preset("default") == product
    # the default index fuses: every hit says which ranking(s) it came from
    before = index.counters["fused_queries"]
    hits = index.retrieve("Where was Marie Curie born?", k=4)
    assert index.counters["fused_queries"] == before + 1
    assert {h.explanation["source"] for h in hits} <= {"traced", "dense", "traced+dense"}
    # the paper: the traced ranking alone, full beam search, the exact precision
    paper_mode: dict[str, Any] = {
        "fusion": "none",
        "fusion_k": 60.0,
        "fusion_weight": 1.0,
        "top_up": False,
        "early_stopping": False,
        "translator_dtype": "auto",
    }
    beams = {"hotpotqa": (3, 3), "2wiki": (3, 1), "musique": (3, 5), "popqa": (3, 5)}
    for dataset, (alpha, beta) in beams.items():
        expected = KGTQueryParams(alpha=alpha, beta=beta, **paper_mode)
        assert KGTQueryParams.preset(f"paper-{dataset}") == expected
        assert KGTQueryParams.paper(dataset) == expected
    assert KGTQueryParams.preset("paper") == KGTQueryParams.preset("paper-hotpotqa")
    # overrides apply on top of the preset
    assert KGTQueryParams.preset("paper", top_up=True) == KGTQueryParams(
        alpha=3, beta=3, **{**paper_mode, "top_up": True}
    )


def test_empty_query_and_empty_corpus(index: ParseKGTranslatorRetriever) -> None:
    with pytest.raises(EmptyQueryError):
        index.retrieve("   ")
    with pytest.raises(EmptyCorpusError):
        ParseKGTranslatorRetriever.from_documents([], embedding=FakeEmbedder())


@pytest.mark.parametrize("vectors", ["build", "lazy"])
def test_insert_then_delete_equals_rebuild(lm: Any, vectors: str) -> None:
    full = make_kgt(lm, passage_vectors=vectors)
    base = make_kgt(lm, KGT_CORPUS[:-1], passage_vectors=vectors)
    grown = make_kgt(lm, KGT_CORPUS[:-1], passage_vectors=vectors)
    assert grown.insert(documents(KGT_CORPUS[-1:])) == [KGT_CORPUS[-1][0]]
    assert grown.insert(documents(KGT_CORPUS[-1:])) == []  # already indexed: skipped
    assert grown.store.index_store.graph == full.store.index_store.graph
    assert grown.delete(KGT_CORPUS[-1][0]) is True
    assert grown.delete(KGT_CORPUS[-1][0]) is False
    assert grown.store.index_store.graph == base.store.index_store.graph
    assert grown.view.fingerprint() == base.view.fingerprint()
    assert grown.stats() == base.stats()
    assert answers(grown) == answers(base)
    assert grown.store.index_store.keys("pvec") == base.store.index_store.keys("pvec")


def test_delete_removes_orphaned_entities_only(lm: Any) -> None:
    idx = make_kgt(lm)
    assert "vistula" in idx.view.entities and "warsaw" in idx.view.entities
    assert idx.delete("Warsaw")
    assert "vistula" not in idx.view.entities  # only "Warsaw" mentioned it
    assert "warsaw" in idx.view.entities  # still mentioned by "Marie Curie"
    assert all(r.passage_id in idx.view.passages for r in idx.view.rels.values())


def test_delete_unknown_document_warns(
    index: ParseKGTranslatorRetriever, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        assert index.delete("no such doc") is False
    assert "no such document" in caplog.text


def test_persist_load_same_answers_and_constraint_cache(
    lm: Any, index: ParseKGTranslatorRetriever, tmp_path: Path
) -> None:
    before = answers(index)  # builds the constraint indexes
    index.persist(tmp_path / "idx")
    assert any((tmp_path / "idx" / CONSTRAINTS_DIR).iterdir())
    loaded = ParseKGTranslatorRetriever.load(
        tmp_path / "idx", embedding=FakeEmbedder(), translator=lm
    )
    assert loaded.stats() == index.stats()
    assert loaded.query_params == index.query_params
    assert answers(loaded) == before
    assert loaded.counters["constraint_cache_hits"] == 1
    # after an insert the cache is stale for the new graph: rebuilt, not reused
    loaded.insert(["Ada Lovelace wrote the first program."])
    loaded.retrieve("Who wrote the first program?")
    assert loaded.counters["constraint_cache_hits"] == 1


@pytest.mark.parametrize(
    ("setting", "native", "expected"),
    [
        ("auto-fast", True, "bfloat16"),  # the default
        ("auto-fast", False, "int8-smooth"),
        ("auto", True, "bfloat16"),  # the paper presets' exact precision
        ("auto", False, "float32"),
    ],
)
def test_auto_translator_dtype_resolves_and_is_recorded(
    lm: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    setting: str,
    native: bool,
    expected: str,
) -> None:
    from graphrag_integrations.core.llm import precision

    precision.clear_cache()
    monkeypatch.setattr(precision, "cpu_has_native_bf16", lambda: native)
    try:
        # a translator loaded by path: "auto-fast" (the default) / "auto" become this CPU's
        # precision
        options = {} if setting == "auto-fast" else {"translator_dtype": setting}
        index = make_kgt(lm.model_name, alpha=1, **options)
        assert index.query_params.translator_dtype == setting
        assert index.translator_dtype == expected
        suffix = "" if expected == "float32" else f"[{expected}]"
        assert index.translator_label == f"{lm.model_name}{suffix}"
        # recorded resolved in the manifest (the query setting stays as given) ...
        manifest = index.manifest()
        assert manifest.models["translator"] == lm.model_name
        assert manifest.models["translator_dtype"] == expected
        assert manifest.parameters["query"]["translator_dtype"] == setting
        # ... before loading the model, which then runs in that precision under that name
        assert index.lm.dtype == expected and index.lm.model_name == index.translator_label
        assert str(index.lm.model.dtype) == f"torch.{precision.torch_dtype_name(expected)}"
        hits = index.retrieve("Where was Marie Curie born?")
        assert hits and {h.explanation["translator"] for h in hits} == {index.translator_label}
        # a given model object keeps its own precision (float32 here), whatever the setting
        given = make_kgt(lm, alpha=1, **options)
        assert given.translator_dtype is None and given.translator_label == lm.model_name
        assert given.manifest().models["translator_dtype"] == "checkpoint"
    finally:
        precision.clear_cache()


def test_load_refuses_another_embedding_model(
    lm: Any, index: ParseKGTranslatorRetriever, tmp_path: Path
) -> None:
    index.persist(tmp_path / "idx")
    with pytest.raises(IndexMismatchError):
        ParseKGTranslatorRetriever.load(tmp_path / "idx", embedding=FakeEmbedder(32), translator=lm)


class ScriptedLLM:
    """Decomposition LLM replying from a script (prompt 3 format)."""

    def __init__(self, replies: list[str]) -> None:
        self.replies = replies
        self.prompts: list[str] = []

    def complete(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return self.replies.pop(0)


def test_multi_step_rounds_until_none(lm: Any) -> None:
    llm = ScriptedLLM(
        ["Need the river. So the next search query is: What flows through Warsaw?",
         "Enough. So the next search query is None"]
    )  # fmt: skip
    idx = make_kgt(lm, max_steps=4, decomposer=llm, top_up=False)
    results = idx.retrieve("Which river flows through the city where Marie Curie was born?")
    rounds = results[0].explanation["rounds"]
    assert [r["query"] for r in rounds][1] == "What flows through Warsaw?"
    assert len(rounds) == 2 and len(llm.prompts) == 2
    assert "Used queries:" in llm.prompts[0] and "Evidence:" in llm.prompts[0]
    with pytest.raises(ValueError, match="decomposer"):
        make_kgt(lm, max_steps=2)


def test_framework_surfaces(index: ParseKGTranslatorRetriever) -> None:
    docs = index.as_langchain_retriever(k=2).invoke("Where was Marie Curie born?")
    assert len(docs) == 2 and "explanation" in docs[0].metadata
    nodes = index.as_llama_index_retriever(similarity_top_k=2).retrieve("Where is Paris?")
    assert len(nodes) == 2


def test_from_framework_documents(lm: Any) -> None:
    from langchain_core.documents import Document
    from llama_index.core.schema import Document as LIDocument

    texts = [body for _, body in KGT_CORPUS[:3]]
    lc = ParseKGTranslatorRetriever.from_documents(
        [Document(page_content=t) for t in texts], embedding=FakeEmbedder(), translator=lm
    )
    li = ParseKGTranslatorRetriever.from_documents(
        [LIDocument(text=t) for t in texts], embedding=FakeEmbedder(), translator=lm
    )
    assert lc.stats().hyperrelations == li.stats().hyperrelations > 0


def test_registration_builder_presets(lm: Any) -> None:
    passages = [Passage(f"p{i}", body, f"d{i}") for i, (_, body) in enumerate(KGT_CORPUS)]
    opts = KGT.parse_options({"preset": "paper-musique", "k": "2"}, cli=True)
    retriever: Any = build(
        FakeEmbedder(), passages=passages, translator=lm,
        index_params=opts.index_params, query_params=opts.query_params,  # type: ignore[arg-type]
    )  # fmt: skip
    assert (retriever.query_params.alpha, retriever.query_params.beta) == (3, 5)
    assert retriever.query_params.top_up is False and retriever.default_k == 2
    assert retriever.index_params.passage_vectors == "lazy"
    with pytest.raises(InvalidParameterError, match="preset"):
        KGT.parse_options({"preset": "nope"})
    # the speed options reach the query settings: the paper presets run the exact precision
    # without early stop, the product default the fast precision with it
    assert (retriever.query_params.translator_dtype, retriever.query_params.early_stopping) == (
        "auto",
        False,
    )
    default = KGT.parse_options({}).query_params
    assert (default.translator_dtype, default.early_stopping) == ("auto-fast", True)
    fast = KGT.parse_options({"translator_dtype": "bfloat16", "early_stopping": "true"}, cli=True)
    assert fast.query_params.translator_dtype == "bfloat16" and fast.query_params.early_stopping
    for name in ("int8", "int8-mixed"):
        assert KGT.parse_options({"translator_dtype": name}).query_params.translator_dtype == name
    with pytest.raises(InvalidParameterError, match="translator_dtype"):
        KGT.parse_options({"translator_dtype": "int4"})


def test_lazy_passage_vectors_give_the_same_answers(
    lm: Any, index: ParseKGTranslatorRetriever, tmp_path: Path
) -> None:
    # the traced ranking alone (no fusion, no top-up) reads only the traced passages' vectors
    lazy = make_kgt(lm, passage_vectors="lazy", fusion="none", top_up=False)
    assert lazy.store.vector_count() == 0  # the build only parsed
    eager = make_kgt(lm, passage_vectors="build", fusion="none", top_up=False)
    assert answers(lazy) == answers(eager)
    embedded = lazy.counters["lazy_embedded_passages"]
    assert 0 < embedded < len(KGT_CORPUS)  # only traced passages were embedded
    lazy.persist(tmp_path / "lazy")
    again = ParseKGTranslatorRetriever.load(
        tmp_path / "lazy", embedding=FakeEmbedder(), translator=lm
    )
    assert answers(again) == answers(eager) and again.counters["lazy_embedded_passages"] == 0
    # the top-up and the (default) RRF fusion need the whole corpus: embedded on first use
    for options in ({"fusion": "none"}, {}):
        topped = make_kgt(lm, passage_vectors="lazy", **options)
        assert len(topped.retrieve("Where was Marie Curie born?", k=8)) == 8
        assert topped.store.vector_count() == len(KGT_CORPUS)


def test_insert_updates_the_constraint_indexes_in_use(
    lm: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    idx = make_kgt(lm, KGT_CORPUS[:-1])
    with caplog.at_level(logging.INFO, logger="graphrag_integrations.methods.kgt.index"):
        idx.retrieve(QUESTIONS[0])  # the first query builds them, and says so
    assert "building the translator's constraint indexes" in caplog.text
    assert "the first query needs them" in caplog.text
    first = idx._indexes
    assert first is not None and idx.counters["constraint_builds"] == 1
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="graphrag_integrations.methods.kgt.index"):
        idx.insert(documents(KGT_CORPUS[-1:]))
    # rebuilt inside the insert, reusing the tokens of the texts seen before
    assert "updating them for the changed graph" in caplog.text
    assert idx.counters["constraint_builds"] == 2
    updated = idx._indexes
    assert updated is not None and updated.view is idx.view
    assert 0 < updated.tokenised < len(updated.rel_tokens)
    full = make_kgt(lm)
    assert answers(idx) == answers(full)  # ... equal to indexes built from scratch
    assert idx.counters["constraint_builds"] == 2  # the queries after the insert built nothing
    assert updated.rel_tokens == full.constraint_indexes.rel_tokens
    assert updated.entity_tokens == full.constraint_indexes.entity_tokens
    # a loaded index with persisted constraint indexes updates them in the insert too
    idx.persist(tmp_path / "idx")
    loaded = ParseKGTranslatorRetriever.load(
        tmp_path / "idx", embedding=FakeEmbedder(), translator=lm
    )
    assert loaded.delete(KGT_CORPUS[-1][0])
    assert loaded.counters["constraint_cache_hits"] == 1
    assert loaded.counters["constraint_builds"] == 1 and loaded._indexes is not None
    loaded.retrieve(QUESTIONS[0])
    assert loaded.counters["constraint_builds"] == 1


def test_the_translation_input_is_bounded(
    index: ParseKGTranslatorRetriever, monkeypatch: pytest.MonkeyPatch
) -> None:
    """KG-Translator's own bound (tighter than the core's): ``translate`` and ``retrieve``
    hand the translator at most ``max_query_chars`` characters of a 50,000-character
    question."""
    from graphrag_integrations.core.validation import MAX_QUERY_CHARS
    from graphrag_integrations.methods.kgt.translation import Translator
    from graphrag_integrations.testing.compliance.query_bound import long_question

    seen: list[str] = []
    original = Translator.translate

    def recording(self: Translator, query: str) -> Any:
        seen.append(query)
        return original(self, query)

    monkeypatch.setattr(Translator, "translate", recording)
    question = long_question(QUESTIONS[0])
    index.translate(question)
    index.retrieve(question, k=2)
    assert index.max_query_chars < MAX_QUERY_CHARS
    assert seen and all(len(q) <= index.max_query_chars for q in seen)
    assert seen[0] == seen[1] and question.startswith(seen[0])


def test_passages_of_documents_reads_the_passages_of_those_documents(
    index: ParseKGTranslatorRetriever,
) -> None:
    docs = sorted({p.doc_id for p in index.passages})[:2]
    expected = sorted((p for p in index.passages if p.doc_id in docs), key=lambda p: p.id)
    assert sorted(index.passages_of_documents(docs), key=lambda p: p.id) == expected
    assert index.passages_of_documents(["no-such-document"]) == []
